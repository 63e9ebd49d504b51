"""Adam over MPI: every rank applies the same rank-averaged gradient (as MPISolver does for momentum
SGD), then tf.train.AdamOptimizer's update, in its fused kernel (ResourceApplyAdam, one pass over
each variable), t counting the updates from 1:
    m <- m + (g - m)(1 - b1);   v <- v + (g^2 - v)(1 - b2)
    var <- var - (m lr_t) / (sqrt(v) + eps),   lr_t = stepsize sqrt(1 - b2^t) / (1 - b1^t)
The bias corrections b^t are computed in float64 and rounded to float32 once (TF1's optimizer
multiplies a float32 power by b at every update, which differs in the last bits).
`slots` are the first moments m, `v_slots` the second moments; state() carries both (the agent's
resume state stores them as solver/<name>/slot<i> and solver/<name>/v<i>).
"""
import numpy as np
import tensorflow as tf

from learning.solvers.mpi_solver import MPISolver


class MPIAdamSolver(MPISolver):
    STEP_ARG_SPECS = (tf.TensorSpec([], tf.float32), tf.TensorSpec([], tf.float32))   # b1^t, b2^t

    def __init__(self, name, variables, stepsize, beta1=0.9, beta2=0.999, epsilon=1e-8):
        super().__init__(name, variables, stepsize, momentum=0.0)
        self.beta1, self.beta2, self.epsilon = float(beta1), float(beta2), float(epsilon)
        self.v_slots = [tf.Variable(tf.zeros_like(v), trainable=False) for v in self.variables]

    def _apply_grads(self, grads, beta1_power, beta2_power):
        for var, m, v, g in zip(self.variables, self.slots, self.v_slots, grads):
            tf.raw_ops.ResourceApplyAdam(var=var.handle, m=m.handle, v=v.handle, beta1_power=beta1_power,
                                         beta2_power=beta2_power, lr=self.stepsize, beta1=np.float32(self.beta1),
                                         beta2=np.float32(self.beta2), epsilon=np.float32(self.epsilon), grad=g)

    def step_args(self):
        """b1^t and b2^t of the next update (t = iter + 1), float64 powers rounded once."""
        t = self.iter + 1
        return tf.constant(self.beta1 ** t, tf.float32), tf.constant(self.beta2 ** t, tf.float32)

    def state(self):
        return {**super().state(), "v_slots": [v.numpy() for v in self.v_slots]}

    def load_state(self, state):
        super().load_state(state)
        for slot, value in zip(self.v_slots, state["v_slots"]):
            slot.assign(value)
