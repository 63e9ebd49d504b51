"""The straightforward PPO minibatch update, as the project ran it before JointUpdate
(learning/solvers/joint_update.py): per minibatch one critic tf.function, the critic solver's
update, one actor tf.function, the actor solver's update, where a solver's update is numpy
flatten -> Allreduce -> divide by the ranks -> isfinite -> unflatten -> one tf.constant per
variable -> the apply tf.function. The reference of tests/test_joint_update.py and the "old" side
of tests/bench/update_cost.py; also a synthetic PolicyBatch and steps of both paths from one
state for both.
"""
import numpy as np
import tensorflow as tf

import util.mpi_util as mpi_util
from learning.solvers.mpi_adam import MPIAdamSolver
from learning.solvers.policy_batch import PolicyBatch, take_rows
from learning.solvers.ppo_step import PPOStep


def straightforward_update(solver, apply_fn, grads):
    """The solver's update step by step, as MPISolver.update and MPIAdamSolver.update were;
    apply_fn: tf.function(solver._apply_grads)."""
    flat = mpi_util.allreduce_sum(solver._flat(grads)) / np.float32(mpi_util.size())
    if not solver.finite_or_skip(flat):
        return
    solver.iter += 1
    adam_powers = ()
    if isinstance(solver, MPIAdamSolver):
        adam_powers = (tf.constant(solver.beta1 ** solver.iter, tf.float32),
                       tf.constant(solver.beta2 ** solver.iter, tf.float32))
    apply_fn([tf.constant(g) for g in solver._unflat(flat)], *adam_powers)


class StraightforwardPPOStep(PPOStep):
    """PPOStep with the straightforward minibatch update (same shuffles, losses and solvers)."""

    def __init__(self, *args):
        super().__init__(*args)
        self._critic_step = tf.function(self._critic_grads)
        self._actor_step = tf.function(self._actor_grads)
        self._apply_fns = {id(s): tf.function(s._apply_grads) for s in (self.critic_solver, self.actor_solver)}

    def _solver_update(self, solver, grads):
        straightforward_update(solver, self._apply_fns[id(solver)], grads)

    def _update_minibatch(self, batch, critic_pos, tar_vals, actor_pos, adv):
        c_loss, grads = self._critic_step(take_rows(batch.critic_inputs, critic_pos), tar_vals.astype(np.float32))
        self._solver_update(self.critic_solver, grads)
        a_loss, clip_frac, grads = self._actor_step(
            take_rows(batch.inputs, actor_pos), batch.norm_actions[actor_pos].astype(np.float32),
            batch.logps[actor_pos].astype(np.float32), adv.astype(np.float32), batch.norm_bound_min,
            batch.norm_bound_max)
        self._solver_update(self.actor_solver, grads)
        return float(c_loss), float(a_loss), float(clip_frac)


def straightforward_step(agent):
    """A StraightforwardPPOStep on a PPOAgent's model, config and solvers."""
    return StraightforwardPPOStep(agent.model, agent.config, agent.actor_solver, agent.critic_solver,
                                  agent._input_spec(), agent.get_action_size(), agent.mini_batch_size,
                                  agent.local_mini_batch_size, (agent.val_min, agent.val_max))


def agent_state(agent):
    """(weights, solver states) of a PPOAgent, for step_from."""
    return ([v.numpy() for v in agent.model.variables.values()],
            {name: solver.state() for name, solver in agent._solvers().items()})


def step_from(agent, step, batch, start):
    """step.step(batch) from `start` (agent_state) with fixed shuffles: the log columns, and after
    the step the agent_state and each solver's skipped-update count."""
    weights, states = start
    for var, value in zip(agent.model.variables.values(), weights):
        var.assign(value)
    for name, solver in agent._solvers().items():
        solver.load_state(states[name])
        solver.nonfinite_skips = 0
    np.random.seed(5)
    log = step.step(batch._replace(valid_pos=batch.valid_pos.copy()), 10)     # step shuffles valid_pos
    return log, agent_state(agent), {name: s.nonfinite_skips for name, s in agent._solvers().items()}


def both_steps(agent, batch):
    """step_from of the agent's own (joint) step and of the straightforward one, from the agent's
    current state: (joint, straightforward)."""
    start = agent_state(agent)
    return step_from(agent, agent.policy_step, batch, start), step_from(agent, straightforward_step(agent), batch, start)


def synthetic_batch(agent, rng, decisions, num_paths=20, exp_frac=0.9):
    """A PolicyBatch for a PPOAgent's model: `decisions` decisions in num_paths paths (one end
    row each), normal states, values and returns; actions drawn from the policy (mean + std z)
    with logps a little off its density (ratios near 1), exp_frac of the decisions exploratory,
    action bounds +-1."""
    state_size, action_size = agent.get_state_size(), agent.get_action_size()
    n = decisions + num_paths
    is_end = np.zeros(n, bool)
    is_end[np.sort(rng.choice(np.arange(1, n), num_paths, replace=False))] = True
    valid_pos = np.nonzero(~is_end)[0]
    exp_pos = np.sort(rng.choice(valid_pos, int(exp_frac * valid_pos.size), replace=False))
    inputs = (rng.normal(size=(n, state_size)).astype(np.float32),)
    z = rng.normal(size=(n, action_size))
    logstd = agent.model.logstd_np().astype(np.float64)
    logp = -0.5 * np.sum(z ** 2, axis=1) - 0.5 * action_size * np.log(2 * np.pi) - logstd.sum()
    return PolicyBatch(inputs=inputs, critic_inputs=inputs,
                       norm_actions=agent.model.actor_mean_np(list(inputs)) + np.exp(logstd) * z,
                       logps=logp + 0.1 * rng.normal(size=n), vals=rng.normal(size=n), returns=rng.normal(size=n),
                       valid_pos=valid_pos, exp_pos=exp_pos, norm_bound_min=-np.ones(action_size, np.float32),
                       norm_bound_max=np.ones(action_size, np.float32))
