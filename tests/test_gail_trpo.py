"""TRPO maths (learning/solvers/trpo.py, the Fisher-vector product of learning/gail_agent.py):
conjugate gradient against np.linalg.solve, the Fisher-vector product against an explicit Fisher
matrix of tiny Gaussian policies, the step's KL under its bound after the line search, and the
line search's backtracking and rejection."""
import numpy as np
import pytest
import tensorflow as tf

from learning.gail_util import fisher_vector_product, flat_concat, gaussian_kl_fixed_std, get_flat, set_flat
from learning.solvers.trpo import conjugate_gradient, line_search, trust_region_step

LOGSTD = tf.constant(np.log([0.5, 2.0]), tf.float32)


def spd_matrix(n, seed):
    a = np.random.default_rng(seed).normal(size=(n, n))
    return a @ a.T + 0.5 * np.eye(n)


def test_conjugate_gradient_solves_spd_systems():
    for n, seed in ((3, 0), (6, 1), (10, 2)):
        a, b = spd_matrix(n, seed), np.random.default_rng(seed + 10).normal(size=n)
        x = conjugate_gradient(lambda v: a @ v, b, iters=n, residual_tol=0.0)
        np.testing.assert_allclose(x, np.linalg.solve(a, b), rtol=1e-7, atol=1e-9)
    # fewer iterations than the dimension: an approximation that still reduces the residual
    a, b = spd_matrix(10, 3), np.ones(10)
    x = conjugate_gradient(lambda v: a @ v, b, iters=3)
    assert np.linalg.norm(a @ x - b) < np.linalg.norm(b)


class TinyPolicy:
    """A Gaussian policy on 3-d inputs, 2-d actions, fixed std (0.5, 2): mean = W2 tanh(W1 x + b1) + b2
    (hidden=True, 4 units) or W x + b."""

    def __init__(self, hidden, seed=0):
        rng = np.random.default_rng(seed)
        shapes = [(3, 4), (4,), (4, 2), (2,)] if hidden else [(3, 2), (2,)]
        self.variables = [tf.Variable(rng.normal(size=s).astype(np.float32)) for s in shapes]
        self.hidden = hidden
        self.x = tf.constant(rng.normal(size=(16, 3)), tf.float32)

    def mean(self, x=None):
        x = self.x if x is None else x
        v = self.variables
        if self.hidden:
            return tf.tanh(x @ v[0] + v[1]) @ v[2] + v[3]
        return x @ v[0] + v[1]

    def explicit_fisher(self):
        """mean over inputs of J^T Sigma^-1 J, J = d mean / d params (per input)."""
        with tf.GradientTape() as tape:
            mean = self.mean()
        jac = tape.jacobian(mean, self.variables)     # each (16, 2, *shape)
        jac = np.concatenate([j.numpy().reshape(16, 2, -1) for j in jac], axis=2).astype(np.float64)
        inv_var = np.exp(-2 * LOGSTD.numpy().astype(np.float64))
        return np.einsum("nap,a,naq->pq", jac, inv_var, jac) / 16

    def kl_constraint(self):
        mean = self.mean()
        return gaussian_kl_fixed_std(tf.stop_gradient(mean), mean, LOGSTD)


@pytest.mark.parametrize("hidden", [False, True])
def test_fisher_vector_product_matches_explicit_fisher(hidden):
    policy = TinyPolicy(hidden)
    fisher = policy.explicit_fisher()
    fvp = fisher_vector_product(policy.variables, policy.kl_constraint)
    n = fisher.shape[0]
    products = np.stack([fvp(tf.constant(e, tf.float32)).numpy() for e in np.eye(n)], axis=1)
    np.testing.assert_allclose(products, fisher, rtol=1e-4, atol=1e-5)
    v = np.random.default_rng(4).normal(size=n)
    np.testing.assert_allclose(fvp(tf.constant(v, tf.float32)).numpy(), fisher @ v, rtol=1e-4, atol=1e-5)


def trpo_problem(policy, seed=1):
    """A surrogate for fixed actions and advantages; (x0, grad, fvp, f) for trust_region_step."""
    rng = np.random.default_rng(seed)
    old_mean = policy.mean().numpy()
    actions = tf.constant(old_mean + rng.normal(size=old_mean.shape) * np.exp(LOGSTD.numpy()), tf.float32)
    adv = tf.constant(rng.normal(size=16), tf.float32)
    old_mean = tf.constant(old_mean)
    std = tf.exp(LOGSTD)

    def logp(mean):
        return -0.5 * tf.reduce_sum(tf.square((actions - mean) / std), axis=-1)

    old_logp = logp(old_mean)

    def loss_kl():
        mean = policy.mean()
        return (-tf.reduce_mean(tf.exp(logp(mean) - old_logp) * adv), gaussian_kl_fixed_std(old_mean, mean, LOGSTD))

    with tf.GradientTape() as tape:
        loss, _ = loss_kl()
    grad = flat_concat(tape.gradient(loss, policy.variables)).numpy().astype(np.float64)
    fvp_tf = fisher_vector_product(policy.variables, policy.kl_constraint)

    def f(x):
        set_flat(policy.variables, x)
        return tuple(float(t) for t in loss_kl())

    return get_flat(policy.variables), grad, lambda v: fvp_tf(tf.constant(v, tf.float32)).numpy().astype(np.float64), f


def test_trpo_step_on_a_linear_policy_reaches_the_trust_region():
    """With a linear mean the KL is exactly 0.5 d'Fd, so the full step's KL is max_kl less what
    the damping takes; the line search accepts it and the surrogate improves."""
    max_kl = 0.01
    x0, grad, fvp, f = trpo_problem(TinyPolicy(hidden=False))
    loss0, _ = f(x0)
    result = trust_region_step(x0, grad, fvp, f, max_kl, damping=0.1, cg_iters=10)
    assert result.accepted and result.steps == 0
    assert 0.5 * max_kl < result.kl <= max_kl
    assert result.loss < loss0 and result.loss_before == pytest.approx(loss0)
    undamped = trust_region_step(x0, grad, fvp, f, max_kl, damping=0.0, cg_iters=10)
    assert undamped.kl == pytest.approx(max_kl, rel=1e-3)


def test_trpo_step_kl_stays_under_its_bound_after_the_line_search():
    """A tanh policy and a large max_kl: the quadratic model is wrong, and the accepted step's KL is
    still under the rejection bound 2 max_kl."""
    for max_kl in (0.01, 0.5, 2.0):
        x0, grad, fvp, f = trpo_problem(TinyPolicy(hidden=True, seed=2), seed=3)
        result = trust_region_step(x0, grad, fvp, f, max_kl, damping=0.1, cg_iters=10)
        assert result.accepted
        assert result.kl <= 2 * max_kl
        assert result.loss < result.loss_before


def test_line_search_backtracks_and_rejects():
    """f(x) = (x - 1)^2 from x0 = 0 along d = 4 (slope -2, expected improvement 8): t = 1 and 0.5
    give no improvement, t = 0.25 gives 1 >= 0.1 * 0.25 * 8; a kl above the bound rejects."""
    def f(x):
        return float((x[0] - 1) ** 2), 0.0

    result = line_search(f, np.zeros(1), 1.0, np.array([4.0]), 8.0, reject_kl=1.0)
    assert result.accepted and result.steps == 2 and result.x[0] == pytest.approx(1.0)
    rejected = line_search(lambda x: (float((x[0] - 1) ** 2), 5.0), np.zeros(1), 1.0, np.array([4.0]), 8.0,
                           reject_kl=1.0, max_steps=10)
    assert not rejected.accepted and rejected.steps == 10 and rejected.x[0] == 0.0
