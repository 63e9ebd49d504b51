"""Adam over MPI: every rank applies the same rank-averaged gradient (as MPISolver does for momentum
SGD), then tf.train.AdamOptimizer's update, t counting the updates from 1:
    m <- b1 m + (1 - b1) g;   v <- b2 v + (1 - b2) g^2
    var <- var - stepsize sqrt(1 - b2^t) / (1 - b1^t) m / (sqrt(v) + eps)
`slots` are the first moments m, `v_slots` the second moments; state() carries both (the agent's
resume state stores them as solver/<name>/slot<i> and solver/<name>/v<i>).
"""
import tensorflow as tf

from learning.solvers.mpi_solver import MPISolver


class MPIAdamSolver(MPISolver):
    def __init__(self, name, variables, stepsize, beta1=0.9, beta2=0.999, epsilon=1e-8):
        super().__init__(name, variables, stepsize, momentum=0.0)
        self.beta1, self.beta2, self.epsilon = float(beta1), float(beta2), float(epsilon)
        self.v_slots = [tf.Variable(tf.zeros_like(v), trainable=False) for v in self.variables]
        self._apply_adam = tf.function(self._adam_grads)

    def _adam_grads(self, grads, t):
        b1, b2 = self.beta1, self.beta2
        lr = self.stepsize * tf.sqrt(1 - tf.pow(b2, t)) / (1 - tf.pow(b1, t))
        for var, m, v, g in zip(self.variables, self.slots, self.v_slots, grads):
            m.assign(b1 * m + (1 - b1) * g)
            v.assign(b2 * v + (1 - b2) * tf.square(g))
            var.assign_sub(lr * m / (tf.sqrt(v) + self.epsilon))

    def update(self, grads):
        """Applies the rank-averaged `grads` (one per variable)."""
        flat = self.averaged(grads)
        if flat is None:
            return
        self.iter += 1
        self._apply_adam([tf.constant(g) for g in self._unflat(flat)], tf.constant(self.iter, tf.float32))

    def state(self):
        return {**super().state(), "v_slots": [v.numpy() for v in self.v_slots]}

    def load_state(self, state):
        super().load_state(state)
        for slot, value in zip(self.v_slots, state["v_slots"]):
            slot.assign(value)
