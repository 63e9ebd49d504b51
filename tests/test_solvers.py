"""The solvers' updates against their formulas (one rank: the averaged gradient is the gradient):
MPISolver is tf.train.MomentumOptimizer's update, MPIAdamSolver tf.train.AdamOptimizer's (ApplyAdam:
bias-corrected step, epsilon added to sqrt(v)), over several updates with known gradients."""
import numpy as np
import tensorflow as tf

from learning.solvers.mpi_adam import MPIAdamSolver
from learning.solvers.mpi_solver import MPISolver

RNG = np.random.default_rng(3)
SHAPES = [(4, 3), (3,)]
INIT = [RNG.normal(size=s).astype(np.float32) for s in SHAPES]
GRADS = [[RNG.normal(scale=0.5, size=s).astype(np.float32) for s in SHAPES] for _ in range(4)]


def variables():
    return [tf.Variable(x) for x in INIT]


def test_momentum_update_is_momentum_sgd():
    solver = MPISolver("actor", variables(), stepsize=0.05, momentum=0.9)
    slots, vals = [np.zeros(s) for s in SHAPES], [x.astype(np.float64) for x in INIT]
    for grads in GRADS:
        solver.update([tf.constant(g) for g in grads])
        for k, g in enumerate(grads):
            slots[k] = 0.9 * slots[k] + g
            vals[k] = vals[k] - 0.05 * slots[k]
    for var, want in zip(solver.variables, vals):
        np.testing.assert_allclose(var.numpy(), want, rtol=1e-5, atol=1e-6)
    assert solver.iter == len(GRADS)


def test_adam_update_is_bias_corrected_adam():
    b1, b2, eps, lr = 0.9, 0.999, 1e-8, 0.01
    solver = MPIAdamSolver("critic", variables(), stepsize=lr)
    m, v = [np.zeros(s) for s in SHAPES], [np.zeros(s) for s in SHAPES]
    vals = [x.astype(np.float64) for x in INIT]
    for t, grads in enumerate(GRADS, start=1):
        solver.update([tf.constant(g) for g in grads])
        lr_t = lr * np.sqrt(1 - b2 ** t) / (1 - b1 ** t)
        for k, g in enumerate(grads):
            m[k] = b1 * m[k] + (1 - b1) * g
            v[k] = b2 * v[k] + (1 - b2) * g * g
            vals[k] = vals[k] - lr_t * m[k] / (np.sqrt(v[k]) + eps)
    for var, want in zip(solver.variables, vals):
        np.testing.assert_allclose(var.numpy(), want, rtol=1e-5, atol=1e-6)
    for slot, want in zip(solver.slots + solver.v_slots, m + v):
        np.testing.assert_allclose(slot.numpy(), want, rtol=1e-5, atol=1e-6)     # float32 moments
    # the first step moves each parameter by ~lr (the bias corrections cancel |g| / sqrt(g^2))
    first = MPIAdamSolver("critic", variables(), stepsize=lr)
    first.update([tf.constant(g) for g in GRADS[0]])
    for var, x, g in zip(first.variables, INIT, GRADS[0]):
        np.testing.assert_allclose(var.numpy() - x, -lr * np.sign(g), rtol=1e-3)
