"""Momentum SGD over MPI (deepmimic.md 5.7): every rank applies the same averaged gradient.

update(grads): flatten the local gradients, Allreduce SUM, divide by the number of ranks, then
    slot <- momentum * slot + g;  var <- var - stepsize * slot      (tf.train.MomentumOptimizer)
sync() broadcasts rank 0's variables (after initialisation or loading); every CHECK_SYNC_ITERS
updates check_synced() compares every rank's variables with rank 0's and raises
SolverDesyncError on all ranks if any differ.
"""
import numpy as np
import tensorflow as tf

import util.mpi_util as mpi_util


class SolverDesyncError(RuntimeError):
    """Ranks hold different parameters although they applied the same averaged gradients."""


class MPISolver:
    CHECK_SYNC_ITERS = 1000

    def __init__(self, name, variables, stepsize, momentum):
        self.name = name
        self.variables = list(variables)
        self.stepsize = tf.Variable(float(stepsize), dtype=tf.float32, trainable=False)
        self.momentum = float(momentum)
        self.slots = [tf.Variable(tf.zeros_like(v), trainable=False) for v in self.variables]
        self.iter = 0
        self._shapes = [tuple(v.shape) for v in self.variables]
        self._sizes = [int(np.prod(s)) for s in self._shapes]
        self._apply = tf.function(self._apply_grads)

    def _flat(self, arrays):
        return np.concatenate([np.asarray(a, dtype=np.float32).reshape(-1) for a in arrays])

    def _unflat(self, flat):
        return [part.reshape(shape) for part, shape in
                zip(np.split(flat, np.cumsum(self._sizes)[:-1]), self._shapes)]

    def get_flat_vars(self):
        return self._flat([v.numpy() for v in self.variables])

    def set_flat_vars(self, flat):
        for v, value in zip(self.variables, self._unflat(flat)):
            v.assign(value)

    def _apply_grads(self, grads):
        for v, slot, g in zip(self.variables, self.slots, grads):
            slot.assign(self.momentum * slot + g)
            v.assign_sub(self.stepsize * slot)

    def update(self, grads):
        """Applies the rank-averaged `grads` (one per variable, TF tensors or arrays)."""
        if self.iter % self.CHECK_SYNC_ITERS == 0:
            self.check_synced()
        flat = mpi_util.allreduce_sum(self._flat(grads)) / np.float32(mpi_util.size())
        self._apply([tf.constant(g) for g in self._unflat(flat)])
        self.iter += 1

    def sync(self):
        self.set_flat_vars(mpi_util.bcast(self.get_flat_vars()))

    def check_synced(self):
        local = self.get_flat_vars()
        root = mpi_util.bcast(local)
        differ = ~((local == root) | (np.isnan(local) & np.isnan(root)))
        worst = int(mpi_util.reduce_max(float(np.count_nonzero(differ))))
        if worst:
            raise SolverDesyncError(
                f"{self.name} parameters differ between MPI ranks after {self.iter} updates: "
                f"{worst} of {local.size} values differ from rank 0's on the worst rank")

    # ---- resume state ----
    def state(self):
        return {"iter": self.iter, "stepsize": float(self.stepsize.numpy()),
                "slots": [s.numpy() for s in self.slots]}

    def load_state(self, state):
        self.iter = int(state["iter"])
        self.stepsize.assign(state["stepsize"])
        for slot, value in zip(self.slots, state["slots"]):
            slot.assign(value)
