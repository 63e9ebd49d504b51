"""TRPO maths (learning/solvers/trpo.py, the Fisher-vector product of learning/solvers/trpo_step.py):
conjugate gradient against np.linalg.solve, the Gaussian KL against hand values and sampling, the
Fisher-vector product against an explicit Fisher matrix of tiny Gaussian policies (fixed and learned
log-std), the step's KL under its bound after the line search, and the line search's backtracking
and rejection."""
import numpy as np
import pytest
import tensorflow as tf

from learning.losses import gaussian_kl
from learning.solvers.trpo import conjugate_gradient, line_search, trust_region_step
from learning.solvers.trpo_step import fisher_vector_product, flat_concat, get_flat, set_flat

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


def test_gaussian_kl_by_hand_and_by_sampling():
    # KL(N(0, 1) || N(1, 2^2)) = log 2 + (1 + 1) / 8 - 1/2; equal stds: 0.5 ((m0 - m1) / s)^2
    one = tf.constant([[0.0]])
    assert float(gaussian_kl(one, tf.constant([0.0]), one + 1, tf.constant([np.log(2.0)], tf.float32))) \
        == pytest.approx(np.log(2) + 0.25 - 0.5, rel=1e-6)
    assert float(gaussian_kl(one, LOGSTD[:1], one + 0.3, LOGSTD[:1])) == pytest.approx(0.5 * (0.3 / 0.5) ** 2, rel=1e-5)
    # 2-d, two samples: the mean over samples of E_old[log p_old - log p_new], estimated by sampling
    rng = np.random.default_rng(0)
    old_mean, new_mean = rng.normal(size=(2, 2)), rng.normal(size=(2, 2))
    old_logstd, new_logstd = np.log([0.5, 2.0]), np.log([0.8, 1.5])
    z = rng.normal(size=(400000, 2, 2))
    x = old_mean + np.exp(old_logstd) * z

    def logp(x, mean, logstd):
        return np.sum(-0.5 * ((x - mean) / np.exp(logstd)) ** 2 - logstd, axis=-1)

    sampled = np.mean(logp(x, old_mean, old_logstd) - logp(x, new_mean, new_logstd))
    exact = float(gaussian_kl(*(tf.constant(a, tf.float32) for a in (old_mean, old_logstd, new_mean, new_logstd))))
    assert exact == pytest.approx(sampled, rel=0.02)


class TinyPolicy:
    """A Gaussian policy on 3-d inputs, 2-d actions: mean = W2 tanh(W1 x + b1) + b2 (hidden=True,
    4 units) or W x + b; log-std log(0.5, 2), fixed or (learn_std) the last variable."""

    def __init__(self, hidden, seed=0, learn_std=False):
        rng = np.random.default_rng(seed)
        shapes = [(3, 4), (4,), (4, 2), (2,)] if hidden else [(3, 2), (2,)]
        self.variables = [tf.Variable(rng.normal(size=s).astype(np.float32)) for s in shapes]
        self.logstd = tf.Variable(LOGSTD) if learn_std else LOGSTD
        if learn_std:
            self.variables.append(self.logstd)
        self.hidden, self.learn_std = hidden, learn_std
        self.x = tf.constant(rng.normal(size=(16, 3)), tf.float32)

    def mean(self, x=None):
        x = self.x if x is None else x
        v = self.variables
        if self.hidden:
            return tf.tanh(x @ v[0] + v[1]) @ v[2] + v[3]
        return x @ v[0] + v[1]

    def explicit_fisher(self):
        """mean over inputs of J^T Sigma^-1 J, J = d mean / d (mean's params) (per input); with a
        learned log-std, a block 2 I for it (the Fisher information of a Gaussian's log-std, no
        cross terms with the mean)."""
        mean_vars = self.variables[:-1] if self.learn_std else self.variables
        with tf.GradientTape() as tape:
            mean = self.mean()
        jac = tape.jacobian(mean, mean_vars)     # each (16, 2, *shape)
        jac = np.concatenate([j.numpy().reshape(16, 2, -1) for j in jac], axis=2).astype(np.float64)
        inv_var = np.exp(-2 * LOGSTD.numpy().astype(np.float64))
        fisher = np.einsum("nap,a,naq->pq", jac, inv_var, jac) / 16
        if self.learn_std:
            n = fisher.shape[0]
            fisher = np.block([[fisher, np.zeros((n, 2))], [np.zeros((2, n)), 2 * np.eye(2)]])
        return fisher

    def kl_constraint(self):
        mean = self.mean()
        return gaussian_kl(tf.stop_gradient(mean), tf.stop_gradient(self.logstd), mean, self.logstd)


@pytest.mark.parametrize("hidden,learn_std", [(False, False), (True, False), (True, True)])
def test_fisher_vector_product_matches_explicit_fisher(hidden, learn_std):
    policy = TinyPolicy(hidden, learn_std=learn_std)
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

    def logp(mean, logstd):
        return tf.reduce_sum(-0.5 * tf.square((actions - mean) / tf.exp(logstd)) - logstd, axis=-1)

    old_logp = logp(old_mean, LOGSTD)

    def loss_kl():
        mean = policy.mean()
        return (-tf.reduce_mean(tf.exp(logp(mean, policy.logstd) - old_logp) * adv),
                gaussian_kl(old_mean, LOGSTD, mean, policy.logstd))

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


@pytest.mark.parametrize("learn_std", [False, True])
def test_trpo_step_kl_stays_under_its_bound_after_the_line_search(learn_std):
    """A tanh policy and a large max_kl: the quadratic model is wrong, and the accepted step's KL is
    still under the rejection bound 2 max_kl (a learned log-std moves too)."""
    backtracked = []
    for max_kl in (0.01, 0.5, 2.0):
        policy = TinyPolicy(hidden=True, seed=2, learn_std=learn_std)
        x0, grad, fvp, f = trpo_problem(policy, seed=3)
        old_mean, old_logstd = policy.mean().numpy(), policy.logstd.numpy()
        result = trust_region_step(x0, grad, fvp, f, max_kl, damping=0.1, cg_iters=10)
        assert result.accepted
        # the KL of the policy now in the variables, by the closed form in numpy (not the step's own number)
        set_flat(policy.variables, result.x)
        kl = numpy_gaussian_kl(old_mean, old_logstd, policy.mean().numpy(), policy.logstd.numpy())
        assert kl == pytest.approx(result.kl, rel=1e-4, abs=1e-7)
        assert 0 < kl <= 2 * max_kl
        assert result.loss < result.loss_before
        backtracked.append(result.steps > 0)
        if learn_std:
            assert np.abs(result.x[-2:] - x0[-2:]).max() > 1e-4     # the log-std is stepped too
    if learn_std:   # at max_kl 2 the quadratic model is wrong: the full step's KL was over the bound
        assert backtracked[-1]


def numpy_gaussian_kl(mean0, logstd0, mean1, logstd1):
    """KL(N0 || N1) of diagonal Gaussians, summed over the action and averaged over the states."""
    var0, var1 = np.exp(2 * logstd0.astype(np.float64)), np.exp(2 * logstd1.astype(np.float64))
    diff = mean1.astype(np.float64) - mean0
    per = logstd1 - logstd0 + (var0 + diff ** 2) / (2 * var1) - 0.5
    return float(np.mean(np.sum(per, axis=-1)))


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
