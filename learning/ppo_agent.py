"""PPOAgent: DeepMimic's PPO step (deepmimic.md 5.3).

1. Critic values of every stored state; at path ends the value is val_fail after a Fail,
   val_succ after a Succ, the critic's own after a Null end (time limit: bootstrap).
2. TD(lambda) returns per path (learning/rl_util.compute_return).
3. Advantages R - V of the exploratory steps only, normalised with this rank's mean and std
   (eps 1e-5, not MPI-reduced) and clipped to +-NormAdvClip; critic targets R clipped to
   [val_min, val_max].
4. ceil(global non-end samples / MiniBatchSize) minibatches, the same count on every rank so the
   solvers' Allreduce calls stay in lockstep; critic batches cycle over shuffled non-end
   positions, actor batches over shuffled exploratory positions (reshuffled after a full pass).
5. Solvers: momentum SGD (DeepMimic's), or Adam with ActorOptimizer / CriticOptimizer "Adam".
   Critic loss 0.5 mean (R - V)^2 (+ CriticWeightDecay L2); actor loss: clipped surrogate +
   10 x action-bound loss + ActorWeightDecay x L2 of the non-bias weights.
6. The buffer is cleared (on-policy).
7. With TarClipFrac >= 0, the actor's step size adapts to the iteration's clip fraction
   (adapt_actor_stepsize; DeepMimic 2018's PPOAgent.update_actor_stepsize, which the 2021 code
   dropped while still reading TarClipFrac). The current step size is in the resume state (the
   actor solver's "stepsize").
"""
import numpy as np
import tensorflow as tf

import util.mpi_util as mpi_util
from env.env import Terminate
from learning.agent_config import ConfigError, PPOAgentConfig
from learning.losses import (ACTION_BOUND_WEIGHT, action_bound_loss, critic_loss, gaussian_logp,
                             ppo_clip_loss, weight_decay_loss)
from learning.pg_agent import PGAgent
from learning.rl_util import compute_return
from learning.solvers.mpi_adam import MPIAdamSolver
from learning.solvers.mpi_solver import MPISolver

CLIP_FRAC_TOL = 1.5                     # the clip fraction's band: [tar / 1.5, tar * 1.5]
ACTOR_STEPSIZE_RANGE = (1e-8, 1e-2)
ACTOR_STEPSIZE_WARMUP_ITERS = 5


def adapt_actor_stepsize(stepsize, clip_frac, tar_clip_frac, decay):
    """The actor's next step size: times `decay` when clip_frac > tar_clip_frac * CLIP_FRAC_TOL,
    divided by it when clip_frac < tar_clip_frac / CLIP_FRAC_TOL, then clipped to
    ACTOR_STEPSIZE_RANGE; inside the band it stays as it is (unclipped)."""
    if clip_frac > tar_clip_frac * CLIP_FRAC_TOL:
        stepsize *= decay
    elif clip_frac < tar_clip_frac / CLIP_FRAC_TOL:
        stepsize /= decay
    else:
        return stepsize
    return float(np.clip(stepsize, *ACTOR_STEPSIZE_RANGE))


def build_solver(optimizer, name, variables, stepsize, momentum):
    """The agent file's optimizer: "SGD" (momentum SGD, DeepMimic's) or "Adam" (momentum unused)."""
    if optimizer == "Adam":
        return MPIAdamSolver(name, variables, stepsize)
    return MPISolver(name, variables, stepsize, momentum)


class PPOAgent(PGAgent):
    NAME = "PPO"
    CONFIG = PPOAgentConfig
    ADV_EPS = 1e-5

    def _load_params(self, config):
        super()._load_params(config)
        self.local_batch_size = int(np.ceil(config.batch_size / mpi_util.size()))
        if self.replay_buffer_size <= 2 * self.local_batch_size:
            raise ConfigError(f"ReplayBufferSize: {config.replay_buffer_size} over {mpi_util.size()} "
                              f"rank(s) must exceed twice the per-rank batch ({self.local_batch_size})")

    def _build_losses(self):
        cfg, model = self.config, self.model
        in_spec = self._input_spec()
        vec = tf.TensorSpec([None], tf.float32)
        bound = tf.TensorSpec([self.get_action_size()], tf.float32)
        act = tf.TensorSpec([None, self.get_action_size()], tf.float32)

        @tf.function(input_signature=[in_spec, vec])
        def critic_step(inputs, tar_vals):
            with tf.GradientTape() as tape:
                loss = critic_loss(tar_vals, model.critic(list(inputs)))
                if cfg.critic_weight_decay != 0:
                    loss += cfg.critic_weight_decay * weight_decay_loss(model.critic_vars)
            return loss, tape.gradient(loss, model.critic_vars)

        @tf.function(input_signature=[in_spec, act, vec, vec, bound, bound])
        def actor_step(inputs, norm_a, old_logp, adv, norm_bound_min, norm_bound_max):
            with tf.GradientTape() as tape:
                norm_mean = model.actor_mean(list(inputs))
                logp = gaussian_logp(norm_a, norm_mean, model.logstd)
                loss, clip_frac = ppo_clip_loss(logp, old_logp, adv, cfg.ratio_clip)
                loss += ACTION_BOUND_WEIGHT * action_bound_loss(norm_mean, norm_bound_min, norm_bound_max)
                if cfg.actor_weight_decay != 0:
                    loss += cfg.actor_weight_decay * weight_decay_loss(model.actor_vars)
            return loss, clip_frac, tape.gradient(loss, model.actor_vars)

        self._critic_step = critic_step
        self._actor_step = actor_step

    def _build_solvers(self):
        cfg = self.config
        self.actor_solver = build_solver(cfg.actor_optimizer, "actor", self.model.actor_vars, cfg.actor_stepsize,
                                         cfg.actor_momentum)
        self.critic_solver = build_solver(cfg.critic_optimizer, "critic", self.model.critic_vars,
                                          cfg.critic_stepsize, cfg.critic_momentum)

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

    # ---- the step ----
    def _fetch_batch_rewards(self, idx):
        """Rewards of the slots idx (AMP replaces them with style rewards)."""
        return self.replay_buffer.get("rewards", idx).astype(np.float64)

    def _compute_batch_vals(self, idx, is_end):
        buf = self.replay_buffer
        vals = self._eval_critic(buf.get("states", idx), buf.get("goals", idx))
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

    def _prepare_batch(self):
        """The stored paths as one batch: (slots, is_end, rewards, values, TD(lambda) returns,
        positions of the non-end slots, positions of the exploratory slots)."""
        buf = self.replay_buffer
        paths = buf.path_slots()
        idx = np.concatenate(paths)
        is_end = buf.is_path_end(idx)
        rewards = self._fetch_batch_rewards(idx)
        vals = self._compute_batch_vals(idx, is_end)
        new_vals = self._compute_batch_new_vals(paths, rewards, vals)
        valid_pos = np.nonzero(~is_end)[0]
        exp_pos = np.nonzero(buf.filter_masks[self.EXP_ACTION_FLAG][idx])[0]
        return idx, is_end, rewards, vals, new_vals, valid_pos, exp_pos

    def _train_step(self):
        cfg = self.config
        idx, is_end, rewards, vals, new_vals, valid_pos, exp_pos = self._prepare_batch()
        global_count = int(mpi_util.reduce_sum(valid_pos.size))
        mini_batches = int(np.ceil(global_count / self.mini_batch_size))

        adv = new_vals[exp_pos] - vals[exp_pos]
        tar_vals = np.clip(new_vals, self.val_min, self.val_max)
        adv_mean, adv_std = float(np.mean(adv)), float(np.std(adv))
        adv = np.clip((adv - adv_mean) / (adv_std + self.ADV_EPS), -cfg.norm_adv_clip, cfg.norm_adv_clip)

        totals = {"critic_loss": 0.0, "actor_loss": 0.0, "clip_frac": 0.0}
        exp_order = np.arange(exp_pos.size)
        size = self.local_mini_batch_size
        for _ in range(cfg.epochs):
            np.random.shuffle(valid_pos)
            np.random.shuffle(exp_order)
            for b in range(mini_batches):
                batch = np.arange(b * size, (b + 1) * size)
                critic_pos = valid_pos[batch % valid_pos.size]
                actor_sel = batch % exp_order.size
                reshuffle = actor_sel[-1] < actor_sel[0] or actor_sel[-1] == exp_order.size - 1
                actor_k = exp_order[actor_sel]
                totals["critic_loss"] += self._update_critic(idx[critic_pos], tar_vals[critic_pos])
                actor_loss, clip_frac = self._update_actor(idx[exp_pos[actor_k]], adv[actor_k])
                totals["actor_loss"] += abs(actor_loss)
                totals["clip_frac"] += clip_frac
                if reshuffle:
                    np.random.shuffle(exp_order)
        self.model.refresh_mirror()

        num_batches = max(mini_batches * cfg.epochs, 1)
        info = mpi_util.reduce_dict_mean({k: v / num_batches for k, v in totals.items()})
        log = self.logger.log_tabular
        log("Critic_Loss", info["critic_loss"])
        log("Critic_Stepsize", float(self.critic_solver.stepsize.numpy()))
        log("Actor_Loss", info["actor_loss"])
        log("Actor_Stepsize", self._update_actor_stepsize(info["clip_frac"]))
        log("Clip_Frac", info["clip_frac"])
        log("Adv_Mean", adv_mean)
        log("Adv_Std", adv_std)

    def _update_actor_stepsize(self, clip_frac):
        """Adapts the actor's step size to the (rank-averaged) clip fraction once the iteration
        count exceeds ACTOR_STEPSIZE_WARMUP_ITERS, when TarClipFrac >= 0; returns the step size."""
        cfg, stepsize_var = self.config, self.actor_solver.stepsize
        stepsize = float(stepsize_var.numpy())
        if cfg.tar_clip_frac >= 0 and self.iter > ACTOR_STEPSIZE_WARMUP_ITERS:
            stepsize_var.assign(adapt_actor_stepsize(stepsize, clip_frac, cfg.tar_clip_frac,
                                                     cfg.actor_stepsize_decay))
            stepsize = float(stepsize_var.numpy())
        return stepsize

    def _batch_inputs(self, slots):
        buf = self.replay_buffer
        return tuple(self._norm_inputs(buf.get("states", slots), buf.get("goals", slots)))

    def _update_critic(self, slots, tar_vals):
        loss, grads = self._critic_step(self._batch_inputs(slots), tar_vals.astype(np.float32))
        self.critic_solver.update(grads)
        return float(loss)

    def _update_actor(self, slots, adv):
        norm_a = self.a_norm.normalize(self.replay_buffer.get("actions", slots))
        logp = self.replay_buffer.get("logps", slots)
        loss, clip_frac, grads = self._actor_step(
            self._batch_inputs(slots), norm_a.astype(np.float32), logp.astype(np.float32),
            adv.astype(np.float32), self.a_norm.normalize(self.a_bound_min).astype(np.float32),
            self.a_norm.normalize(self.a_bound_max).astype(np.float32))
        self.actor_solver.update(grads)
        return float(loss), float(clip_frac)
