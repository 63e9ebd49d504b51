"""Momentum SGD over MPI (deepmimic.md 5.7): every rank applies the same averaged gradient.

update(grads): flatten the local gradients, Allreduce SUM, divide by the number of ranks, then
    slot <- momentum * slot + g;  var <- var - stepsize * slot      (tf.train.MomentumOptimizer)
sync() broadcasts rank 0's variables (after initialisation or loading); check_synced() (the
agent calls it every SyncCheckIters iterations) compares a fingerprint (CRC-32 of the bytes) of
every rank's variables and raises SolverDesyncError on all ranks if they differ.
A non-finite averaged gradient (the same on every rank) is not applied: the update is skipped
with a warning, and MAX_NONFINITE_SKIPS in a row raise NonFiniteUpdateError, so a NaN never
reaches the parameters or a checkpoint.

The update is also open as TF pieces, for a caller that computes the gradients in its own
tf.function (learning/solvers/joint_update.py): flatten / unflatten, apply_if_finite(grads,
step_args) (applies when every element is finite; returns that flag), step_args() (the update's
Python-side inputs, STEP_ARG_SPECS their signature) and record_update(finite) (the skip count and
the update count, in Python).
"""
import zlib

import numpy as np
import tensorflow as tf

import util.mpi_util as mpi_util
from util.cli import RunError


class SolverDesyncError(RunError):
    """Ranks hold different parameters although they applied the same averaged gradients."""


class NonFiniteUpdateError(RunError):
    """Gradients were NaN or infinite in MAX_NONFINITE_SKIPS updates in a row."""


class MPISolver:
    MAX_NONFINITE_SKIPS = 5
    STEP_ARG_SPECS = ()         # the TensorSpecs of step_args()

    def __init__(self, name, variables, stepsize, momentum):
        self.name = name
        self.variables = list(variables)
        self.stepsize = tf.Variable(float(stepsize), dtype=tf.float32, trainable=False)
        self.momentum = float(momentum)
        self.slots = [tf.Variable(tf.zeros_like(v), trainable=False) for v in self.variables]
        self.iter = 0
        self._shapes = [tuple(v.shape) for v in self.variables]
        self._sizes = [int(np.prod(s)) for s in self._shapes]
        self.size = sum(self._sizes)    # the number of parameters
        self._ranks = mpi_util.size()
        self._apply_summed = tf.function(self.apply_summed_if_finite,
                                         input_signature=[tf.TensorSpec([self.size], tf.float32), self.STEP_ARG_SPECS])
        self.nonfinite_skips = 0        # consecutive updates skipped for non-finite gradients

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

    # ---- the update in TF (inside a tf.function) ----
    def flatten(self, grads):
        """One float32 vector of the gradients (one per variable)."""
        return tf.concat([tf.reshape(g, [-1]) for g in grads], axis=0)

    def unflatten(self, flat):
        return [tf.reshape(part, shape) for part, shape in zip(tf.split(flat, self._sizes), self._shapes)]

    def apply_if_finite(self, grads, step_args):
        """Applies `grads` (the rank-averaged gradients, one per variable) when all are finite;
        returns that condition (a bool tensor)."""
        finite = tf.reduce_all([tf.reduce_all(tf.math.is_finite(g)) for g in grads])

        def apply():
            self._apply_grads(grads, *step_args)
            return tf.constant(True)
        return tf.cond(finite, apply, lambda: tf.constant(False))

    def apply_summed_if_finite(self, summed, step_args):
        """apply_if_finite of the rank-summed flat gradient divided by the number of ranks."""
        if self._ranks > 1:
            summed = summed / np.float32(self._ranks)
        return self.apply_if_finite(self.unflatten(summed), step_args)

    def _apply_grads(self, grads):
        for v, slot, g in zip(self.variables, self.slots, grads):
            slot.assign(self.momentum * slot + g)
            v.assign_sub(self.stepsize * slot)

    # ---- the update's Python side ----
    def step_args(self):
        """The next update's inputs besides the gradients (tensors of STEP_ARG_SPECS)."""
        return ()

    def record_update(self, finite):
        """After apply_if_finite: counts an applied update, or a skipped one (finite_or_skip)."""
        if self._count_skip(finite):
            self.iter += 1

    def finite_or_skip(self, values):
        """True for finite values; else counts a skipped update, warns, and raises
        NonFiniteUpdateError after MAX_NONFINITE_SKIPS in a row."""
        return self._count_skip(bool(np.isfinite(values).all()))

    def _count_skip(self, finite):
        if finite:
            self.nonfinite_skips = 0
            return True
        self.nonfinite_skips += 1
        if self.nonfinite_skips >= self.MAX_NONFINITE_SKIPS:
            raise NonFiniteUpdateError(f"{self.name}: non-finite gradients in {self.nonfinite_skips} updates in a row "
                                       f"(after {self.iter} updates): the run stops before a NaN reaches a checkpoint; "
                                       "lower the step size or check the rewards")
        print(f"warning: {self.name}: non-finite gradient, update skipped ({self.nonfinite_skips} in a row)", flush=True)
        return False

    def update(self, grads):
        """Applies the rank-averaged `grads` (one per variable, TF tensors or arrays)."""
        summed = mpi_util.allreduce_sum(self._flat(grads))
        self.record_update(bool(self._apply_summed(summed, self.step_args())))

    def sync(self):
        self.set_flat_vars(mpi_util.bcast(self.get_flat_vars()))

    def check_synced(self):
        """Collective: SolverDesyncError on every rank when the ranks' variables differ."""
        fingerprint = float(zlib.crc32(self.get_flat_vars().tobytes()))
        low, high = mpi_util.reduce_min(fingerprint), mpi_util.reduce_max(fingerprint)
        if low != high:
            raise SolverDesyncError(f"{self.name} parameters differ between MPI ranks after {self.iter} updates "
                                    f"(fingerprints {int(low):08x} and {int(high):08x}); the run stops")

    # ---- resume state ----
    def state(self):
        return {"iter": self.iter, "stepsize": float(self.stepsize.numpy()),
                "slots": [s.numpy() for s in self.slots]}

    def load_state(self, state):
        self.iter = int(state["iter"])
        self.stepsize.assign(state["stepsize"])
        for slot, value in zip(self.slots, state["slots"]):
            slot.assign(value)
