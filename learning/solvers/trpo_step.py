"""TRPOStep: the trust-region policy step of GAIL's reference (Ho and Ermon 2016, after Schulman et
al. 2015) as a solver of an actor-critic model, given an iteration's PolicyBatch; the numpy step
itself (conjugate gradient, line search) is learning/solvers/trpo.py.

Policy: on the exploratory rows, advantages standardised over all ranks; surrogate
L = -mean(exp(logp - logp_old) A); one trust-region step of the actor's variables (with the log-std
when the model learns it) with the mean KL(old || new) of the Gaussian policy as constraint,
TRPOMaxKL, damping TRPODamping, TRPOCGIters CG iterations, Fisher-vector products by double
backprop on a TRPOFVPSubsample fraction of this rank's rows (gradients, products and values
averaged over ranks), TRPOLineSearchSteps trials.
Value function: on the decision rows, one trust-region step of the critic on
0.5 mean (V - R)^2 / var(R) subject to 0.5 mean (V - V_old)^2 / var(R) <= TRPOValueMaxKL (var over
all ranks' targets: the reference standardises its targets), with the same damping and CG
iterations.
The agent's actor and critic solvers take no gradient steps here: they broadcast and check the
parameters across ranks, count the accepted steps and refuse non-finite ones. The config is one with the TRPO keys (GAILAgentConfig).
"""
from types import SimpleNamespace

import numpy as np
import tensorflow as tf

import util.mpi_util as mpi_util
from learning.losses import gaussian_kl, gaussian_logp
from learning.rl_util import ADV_EPS
from learning.solvers.policy_batch import take_rows
from learning.solvers.trpo import trust_region_step


def flat_concat(tensors):
    return tf.concat([tf.reshape(t, [-1]) for t in tensors], axis=0)


def get_flat(variables):
    return np.concatenate([v.numpy().reshape(-1).astype(np.float64) for v in variables])


def set_flat(variables, flat):
    start = 0
    for v in variables:
        n = int(np.prod(v.shape))
        v.assign(np.asarray(flat[start:start + n], dtype=np.float32).reshape(v.shape))
        start += n


def fisher_vector_product(variables, constraint_fn):
    """v -> H v, H the Hessian of constraint_fn() (a scalar built from `variables`, zero with zero
    gradient at the current values: then H is its Fisher / Gauss-Newton matrix) by double backprop."""
    def fvp(v):
        with tf.GradientTape() as outer:
            with tf.GradientTape() as inner:
                c = constraint_fn()
            grads = inner.gradient(c, variables)
            gv = tf.reduce_sum(flat_concat(grads) * v)
        return flat_concat(outer.gradient(gv, variables))
    return fvp


class TRPOStep:
    def __init__(self, model, config, actor_solver, critic_solver, input_spec, critic_spec, action_size):
        """actor_solver, critic_solver: the MPI solvers of the model's actor and critic variables;
        input_spec, critic_spec: the TensorSpecs of the actor's and the critic's inputs."""
        self.model, self.config = model, config
        self.actor_solver, self.critic_solver = actor_solver, critic_solver
        vec = tf.TensorSpec([None], tf.float32)
        act = tf.TensorSpec([None, action_size], tf.float32)
        flat = tf.TensorSpec([None], tf.float32)
        scalar = tf.TensorSpec([], tf.float32)

        def surrogate(inputs, norm_a, old_logp, adv):
            logp = gaussian_logp(norm_a, model.actor_mean(list(inputs)), model.logstd)
            return -tf.reduce_mean(tf.exp(logp - old_logp) * adv)

        @tf.function(input_signature=[input_spec, act, vec, vec])
        def surrogate_grad(inputs, norm_a, old_logp, adv):
            with tf.GradientTape() as tape:
                loss = surrogate(inputs, norm_a, old_logp, adv)
            return loss, flat_concat(tape.gradient(loss, model.actor_vars))

        @tf.function(input_signature=[input_spec, act, vec, vec, act, flat])
        def surrogate_kl(inputs, norm_a, old_logp, adv, old_mean, old_logstd):
            return (surrogate(inputs, norm_a, old_logp, adv),
                    gaussian_kl(old_mean, old_logstd, model.actor_mean(list(inputs)), model.logstd))

        @tf.function(input_signature=[input_spec, flat])
        def actor_fvp(inputs, v):
            def kl():
                mean = model.actor_mean(list(inputs))
                return gaussian_kl(tf.stop_gradient(mean), tf.stop_gradient(model.logstd), mean, model.logstd)
            return fisher_vector_product(model.actor_vars, kl)(v)

        def value_terms(inputs, tar, old_vals, inv_var):
            vals = model.critic(list(inputs))
            return (0.5 * tf.reduce_mean(tf.square(vals - tar)) * inv_var,
                    0.5 * tf.reduce_mean(tf.square(vals - old_vals)) * inv_var)

        @tf.function(input_signature=[critic_spec, vec, vec, scalar])
        def value_grad(inputs, tar, old_vals, inv_var):
            with tf.GradientTape() as tape:
                loss, _ = value_terms(inputs, tar, old_vals, inv_var)
            return loss, flat_concat(tape.gradient(loss, model.critic_vars))

        @tf.function(input_signature=[critic_spec, vec, vec, scalar])
        def value_loss_kl(inputs, tar, old_vals, inv_var):
            return value_terms(inputs, tar, old_vals, inv_var)

        @tf.function(input_signature=[critic_spec, scalar, flat])
        def value_fvp(inputs, inv_var, v):
            def change():
                vals = model.critic(list(inputs))
                return 0.5 * tf.reduce_mean(tf.square(vals - tf.stop_gradient(vals))) * inv_var
            return fisher_vector_product(model.critic_vars, change)(v)

        self._fns = SimpleNamespace(surrogate_grad=surrogate_grad, surrogate_kl=surrogate_kl, actor_fvp=actor_fvp,
                                  value_grad=value_grad, value_loss_kl=value_loss_kl, value_fvp=value_fvp)

    def step(self, batch, iteration):
        """One iteration's step on `batch` (a PolicyBatch); the log columns in order."""
        exp_pos, valid_pos = batch.exp_pos, batch.valid_pos
        adv = batch.returns[exp_pos] - batch.vals[exp_pos]
        count, total, total_sq = mpi_util.reduce_sum(np.array([adv.size, adv.sum(), np.square(adv).sum()]))
        adv_mean = total / count
        adv_std = float(np.sqrt(max(total_sq / count - adv_mean ** 2, 0.0)))
        adv = (adv - adv_mean) / (adv_std + ADV_EPS)

        policy = self._policy_step(batch, exp_pos, adv)
        value = self._value_step(batch, valid_pos, batch.returns[valid_pos])
        self.model.refresh_mirror()
        return {"Critic_Loss": value.loss_before,
                "Actor_Loss": policy.loss,        # the surrogate after the step (before: -mean A = 0)
                "KL": policy.kl, "Line_Search_Steps": policy.steps,
                "Action_Std": float(np.mean(self.model.std_np)), "Value_KL": value.kl,
                "Value_Line_Search_Steps": value.steps, "Adv_Mean": adv_mean, "Adv_Std": adv_std}

    def _fvp_subsample(self, n):
        k = max(1, int(np.ceil(self.config.trpo_fvp_subsample * n)))
        return np.random.choice(n, size=k, replace=False) if k < n else np.arange(n)

    def _trust_region(self, solver, variables, grad_fn, eval_fn, fvp_fn, max_kl):
        """One trust-region step of `variables` with rank-averaged gradient, products and values."""
        cfg = self.config
        loss, grad = grad_fn()
        x0 = get_flat(variables)

        def f(x):
            set_flat(variables, x)
            return tuple(mpi_util.reduce_mean(np.array([float(v) for v in eval_fn()])))

        def fvp(v):
            return mpi_util.reduce_mean(fvp_fn(tf.constant(v, tf.float32)).numpy().astype(np.float64))

        result = trust_region_step(x0, mpi_util.reduce_mean(grad.numpy().astype(np.float64)), fvp, f, max_kl,
                                   cfg.trpo_damping, cfg.trpo_cg_iters, cfg.trpo_line_search_steps)
        if solver.finite_or_skip(result.x):
            set_flat(variables, result.x)
            solver.iter += 1
        return result

    def _policy_step(self, batch, pos, adv):
        model, fns = self.model, self._fns
        inputs = take_rows(batch.inputs, pos)
        norm_a = batch.norm_actions[pos].astype(np.float32)
        old_mean = model.actor_mean(list(inputs))
        old_logstd = tf.constant(model.logstd.numpy())
        old_logp = gaussian_logp(norm_a, old_mean, old_logstd)
        adv = adv.astype(np.float32)
        sub_inputs = take_rows(inputs, self._fvp_subsample(len(pos)))
        return self._trust_region(
            self.actor_solver, model.actor_vars,
            lambda: fns.surrogate_grad(inputs, norm_a, old_logp, adv),
            lambda: fns.surrogate_kl(inputs, norm_a, old_logp, adv, old_mean, old_logstd),
            lambda v: fns.actor_fvp(sub_inputs, v), self.config.trpo_max_kl)

    def _value_step(self, batch, pos, targets):
        model, fns = self.model, self._fns
        inputs = take_rows(batch.critic_inputs, pos)
        count, total, total_sq = mpi_util.reduce_sum(np.array([targets.size, targets.sum(), np.square(targets).sum()]))
        var = max(total_sq / count - (total / count) ** 2, 1e-8)
        inv_var = tf.constant(1.0 / var, tf.float32)
        tar = targets.astype(np.float32)
        old_vals = model.critic(list(inputs))
        sub_inputs = take_rows(inputs, self._fvp_subsample(len(pos)))
        return self._trust_region(
            self.critic_solver, model.critic_vars,
            lambda: fns.value_grad(inputs, tar, old_vals, inv_var),
            lambda: fns.value_loss_kl(inputs, tar, old_vals, inv_var),
            lambda v: fns.value_fvp(sub_inputs, inv_var, v), self.config.trpo_value_max_kl)
