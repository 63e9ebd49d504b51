"""PPOAgent: DeepMimic's PPO agent (deepmimic.md 5.3): the stored paths as one on-policy batch,
trained by a policy step (learning/solvers/: PPOStep, DeepMimic's, unless a subclass picks another).

The iteration's PolicyBatch (learning/solvers/policy_batch.py):
1. Rewards of the stored paths (the env's; AMP, GAIL and Goals replace them: _fetch_batch_rewards).
2. Critic values of every stored state; at path ends the value is val_fail after a Fail,
   val_succ after a Succ, the critic's own after a Null end (time limit: bootstrap).
3. TD(lambda) returns per path (learning/rl_util.compute_return).
Then the policy step (its log columns follow the agent's), and the buffer is cleared (on-policy).
"""
import numpy as np

import util.mpi_util as mpi_util
from env.env import Terminate
from learning.agents.pg_agent import PGAgent
from learning.configs.config import ConfigError
from learning.configs.ppo_agent import PPOAgentConfig
from learning.rl_util import compute_return
from learning.solvers.policy_batch import PolicyBatch
from learning.solvers.ppo_step import PPOStep
from learning.solvers.solver_builder import build_solver


class PPOAgent(PGAgent):
    NAME = "PPO"
    CONFIG = PPOAgentConfig

    def _load_params(self, config):
        super()._load_params(config)
        self.local_batch_size = int(np.ceil(config.batch_size / mpi_util.size()))
        if self.replay_buffer_size <= 2 * self.local_batch_size:
            raise ConfigError(f"ReplayBufferSize: {config.replay_buffer_size} over {mpi_util.size()} "
                              f"rank(s) must exceed twice the per-rank batch ({self.local_batch_size})")

    def _build_solvers(self):
        cfg = self.config
        self.actor_solver = build_solver(cfg.actor_optimizer, "actor", self.model.actor_vars, cfg.actor_stepsize,
                                         cfg.actor_momentum)
        self.critic_solver = build_solver(cfg.critic_optimizer, "critic", self.model.critic_vars,
                                          cfg.critic_stepsize, cfg.critic_momentum)
        self.policy_step = self._build_policy_step()

    def _build_policy_step(self):
        """DeepMimic's PPO step."""
        return PPOStep(self.model, self.config, self.actor_solver, self.critic_solver, self._input_spec(),
                       self.get_action_size(), self.mini_batch_size, self.local_mini_batch_size,
                       (self.val_min, self.val_max))

    def _solvers(self):
        return {"actor": self.actor_solver, "critic": self.critic_solver}

    def _get_iters_per_update(self):
        return 1

    def _valid_train_step(self):
        return (self.replay_buffer.current_size() >= self.local_batch_size
                and self.replay_buffer.count_filtered(self.EXP_ACTION_FLAG) >= self.local_mini_batch_size)

    def _train(self):
        super()._train()
        self.replay_buffer.clear()

    def _train_step(self):
        for column, val in self.policy_step.step(self._prepare_batch(), self.iter).items():
            self.logger.log_tabular(column, val)

    # ---- the batch ----
    def _fetch_batch_rewards(self, idx):
        """Rewards of the slots idx (AMP replaces them with style rewards)."""
        return self.replay_buffer.get("rewards", idx).astype(np.float64)

    def _batch_critic_values(self, idx):
        """The critic's values (float64) of the slots idx."""
        buf = self.replay_buffer
        return self._eval_critic(buf.get("states", idx), buf.get("goals", idx))

    def _compute_batch_vals(self, idx, is_end):
        buf = self.replay_buffer
        vals = self._batch_critic_values(idx)
        vals[is_end & buf.check_terminate(idx, Terminate.Fail)] = self.val_fail
        vals[is_end & buf.check_terminate(idx, Terminate.Succ)] = self.val_succ
        return vals

    def _compute_batch_new_vals(self, paths, rewards, vals):
        """TD(lambda) returns, aligned with the concatenated paths (0 at end positions)."""
        if self.config.discount == 0:
            return rewards.copy()
        new_vals = np.zeros_like(vals)
        start = 0
        for slots in paths:
            n = len(slots) - 1
            new_vals[start:start + n] = compute_return(rewards[start:start + n], self.config.discount,
                                                       self.config.td_lambda, vals[start:start + n + 1])
            start += n + 1
        return new_vals

    def _batch_inputs(self, slots):
        """The actor's inputs for the slots (GoalsAgent adds the goal's one-hot)."""
        buf = self.replay_buffer
        return tuple(self._norm_inputs(buf.get("states", slots), buf.get("goals", slots)))

    def _critic_batch_inputs(self, slots, inputs):
        """The critic's inputs for the slots, given the actor's `inputs` (the same here)."""
        return inputs

    def _prepare_batch(self):
        """The stored paths as one PolicyBatch."""
        buf = self.replay_buffer
        paths = buf.path_slots()
        idx = np.concatenate(paths)
        is_end = buf.is_path_end(idx)
        rewards = self._fetch_batch_rewards(idx)
        vals = self._compute_batch_vals(idx, is_end)
        new_vals = self._compute_batch_new_vals(paths, rewards, vals)
        inputs = self._batch_inputs(idx)
        return PolicyBatch(
            inputs=inputs, critic_inputs=self._critic_batch_inputs(idx, inputs),
            norm_actions=self.a_norm.normalize(buf.get("actions", idx)), logps=buf.get("logps", idx),
            vals=vals, returns=new_vals, valid_pos=np.nonzero(~is_end)[0],
            exp_pos=np.nonzero(buf.filter_masks[self.EXP_ACTION_FLAG][idx])[0],
            norm_bound_min=self.a_norm.normalize(self.a_bound_min).astype(np.float32),
            norm_bound_max=self.a_norm.normalize(self.a_bound_max).astype(np.float32))
