"""TensorBoard scalars through TensorFlow's own summary writer (no TensorBoard import needed to
write; `tensorboard --logdir output` reads them)."""
import numbers


class ScalarWriter:
    def __init__(self, logdir):
        import tensorflow as tf
        self._tf = tf
        self._writer = tf.summary.create_file_writer(str(logdir))

    def write(self, step, values):
        """One scalar per numeric entry of `values` ({tag: number}) at `step`, flushed."""
        with self._writer.as_default(step=step):
            for tag, val in values.items():
                if isinstance(val, numbers.Real) and not isinstance(val, bool):
                    self._tf.summary.scalar(tag, float(val))
        self._writer.flush()
