"""JointUpdate: one minibatch step of several MPI solvers (learning/solvers/mpi_solver.py) whose
gradients one function computes, with as few Python/TF/MPI round trips as the maths allows.

grads_fn(*inputs) -> (outputs, [grads of solver 0, grads of solver 1, ...]) is traced into TF; the
solvers' variables must be disjoint (each solver's gradient then does not depend on another's
update, so computing all before applying any is the same as stepping them one after the other).
- One rank: one compiled call computes the gradients and applies each solver's (when finite).
- N ranks: one compiled call gives all gradients as one float32 vector; one Allreduce sums it
  over the ranks, from TF's buffer into an aligned numpy buffer kept for it; one compiled call on
  that buffer divides by N and applies each solver's part (when finite). Both buffers cross
  between TF and numpy as DLPack views, not copies (converting a 7.6 MB argument costs more than
  the division and finite check together).
Each solver then records its update or its skip (MPISolver.record_update): a non-finite gradient of
one solver skips that solver's update only, as its own update(grads) would.
"""
import numpy as np
import tensorflow as tf

import util.mpi_util as mpi_util

TF_ALIGNMENT = 64      # bytes: TF's CPU kernels require tensor buffers aligned to this


def aligned_empty(size):
    """An uninitialised float32 array aligned to TF_ALIGNMENT, so a TF tensor may alias its buffer."""
    raw = np.empty(size + TF_ALIGNMENT // 4, np.float32)
    start = (-raw.ctypes.data % TF_ALIGNMENT) // 4
    return raw[start:start + size]


class JointUpdate:
    def __init__(self, solvers, grads_fn, input_signature):
        """input_signature: the TensorSpecs of grads_fn's inputs."""
        self.solvers = list(solvers)
        var_ids = [id(v) for s in self.solvers for v in s.variables]
        if len(set(var_ids)) != len(var_ids):
            raise ValueError(f"JointUpdate: solvers {[s.name for s in self.solvers]} share variables")
        input_signature = tuple(input_signature)
        step_specs = tuple(s.STEP_ARG_SPECS for s in self.solvers)
        self._one_rank = mpi_util.size() == 1
        if self._one_rank:
            @tf.function(input_signature=[input_signature, step_specs])
            def step(inputs, step_args):
                outputs, grads = grads_fn(*inputs)
                return outputs, self._apply(grads, step_args)
            self._step = step
        else:
            @tf.function(input_signature=[input_signature])
            def flat_grads(inputs):
                outputs, grads = grads_fn(*inputs)
                return outputs, tf.concat([s.flatten(g) for s, g in zip(self.solvers, grads)], axis=0)

            total = sum(s.size for s in self.solvers)

            @tf.function(input_signature=[tf.TensorSpec([total], tf.float32), step_specs])
            def apply_summed(summed, step_args):
                parts = tf.split(summed, [s.size for s in self.solvers])
                return tf.stack([s.apply_summed_if_finite(p, a) for s, p, a in zip(self.solvers, parts, step_args)])
            self._flat_grads, self._apply_summed = flat_grads, apply_summed
            self._summed = aligned_empty(total)

    def _apply(self, grads, step_args):
        return tf.stack([s.apply_if_finite(g, a) for s, g, a in zip(self.solvers, grads, step_args)])

    def __call__(self, *inputs):
        """Steps the solvers on grads_fn(*inputs); returns its outputs."""
        step_args = tuple(s.step_args() for s in self.solvers)
        if self._one_rank:
            outputs, finite = self._step(inputs, step_args)
        else:
            outputs, flat = self._flat_grads(inputs)
            mpi_util.allreduce_sum_into(np.from_dlpack(flat), self._summed)
            finite = self._apply_summed(tf.experimental.dlpack.from_dlpack(self._summed.__dlpack__()), step_args)
        for solver, ok in zip(self.solvers, finite.numpy()):
            solver.record_update(bool(ok))
        return outputs
