"""PPOStep: DeepMimic's PPO step (deepmimic.md 5.3) as a solver of an actor-critic model
(learning/models/actor_critic.py), given an iteration's PolicyBatch.

1. Advantages R - V of the exploratory rows only, normalised with this rank's mean and std
   (eps 1e-5, not MPI-reduced) and clipped to +-NormAdvClip; critic targets R clipped to the
   value range the agent gives (target_range).
2. ceil(global decisions / MiniBatchSize) minibatches per epoch, the same count on every rank so
   the solvers' Allreduce calls stay in lockstep; critic batches cycle over shuffled decision rows,
   actor batches over shuffled exploratory rows (reshuffled after a full pass).
3. The agent's solvers step: momentum SGD (DeepMimic's), or Adam with ActorOptimizer /
   CriticOptimizer "Adam". Critic loss 0.5 mean (R - V)^2 (+ CriticWeightDecay L2); actor loss: clipped surrogate +
   10 x action-bound loss + ActorWeightDecay x L2 of the non-bias weights (learning/losses.py).
   Per minibatch both gradients are computed, averaged over the ranks and applied together
   (learning/solvers/joint_update.py: the two nets share no variable, so this equals stepping
   the critic and then the actor).
4. With TarClipFrac >= 0, the actor's step size adapts to the iteration's clip fraction
   (adapt_actor_stepsize; DeepMimic 2018's PPOAgent.update_actor_stepsize, which the 2021 code
   dropped while still reading TarClipFrac). The current step size is in the resume state (the
   actor solver's "stepsize").
The config is a PPOAgentConfig (or one that extends it).
"""
import numpy as np
import tensorflow as tf

import util.mpi_util as mpi_util
from learning.losses import (ACTION_BOUND_WEIGHT, action_bound_loss, critic_loss, gaussian_logp,
                             ppo_clip_loss, weight_decay_loss)
from learning.rl_util import normalize_advantages
from learning.solvers.joint_update import JointUpdate
from learning.solvers.policy_batch import take_rows

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


class PPOStep:
    def __init__(self, model, config, actor_solver, critic_solver, input_spec, action_size, mini_batch_size,
                 local_mini_batch_size, target_range):
        """actor_solver, critic_solver: the MPI solvers of the model's actor and critic variables;
        input_spec: the TensorSpecs of the model's inputs (the actor's and the critic's);
        mini_batch_size: the global minibatch, local_mini_batch_size this rank's part of it;
        target_range: (min, max) of the critic's targets."""
        self.model, self.config = model, config
        self.actor_solver, self.critic_solver = actor_solver, critic_solver
        self.mini_batch_size, self.local_mini_batch_size = mini_batch_size, local_mini_batch_size
        self.target_range = target_range
        vec = tf.TensorSpec([None], tf.float32)
        bound = tf.TensorSpec([action_size], tf.float32)
        act = tf.TensorSpec([None, action_size], tf.float32)
        self._update = JointUpdate([critic_solver, actor_solver], self._grads,
                                   [input_spec, vec, input_spec, act, vec, vec, bound, bound])

    def _critic_grads(self, inputs, tar_vals):
        """The critic's loss and its gradients (TF)."""
        cfg, model = self.config, self.model
        with tf.GradientTape() as tape:
            loss = critic_loss(tar_vals, model.critic(list(inputs)))
            if cfg.critic_weight_decay != 0:
                loss += cfg.critic_weight_decay * weight_decay_loss(model.critic_vars)
        return loss, tape.gradient(loss, model.critic_vars)

    def _actor_grads(self, inputs, norm_a, old_logp, adv, norm_bound_min, norm_bound_max):
        """The actor's loss, clip fraction and gradients (TF)."""
        cfg, model = self.config, self.model
        with tf.GradientTape() as tape:
            norm_mean = model.actor_mean(list(inputs))
            logp = gaussian_logp(norm_a, norm_mean, model.logstd)
            loss, clip_frac = ppo_clip_loss(logp, old_logp, adv, cfg.ratio_clip)
            loss += ACTION_BOUND_WEIGHT * action_bound_loss(norm_mean, norm_bound_min, norm_bound_max)
            if cfg.actor_weight_decay != 0:
                loss += cfg.actor_weight_decay * weight_decay_loss(model.actor_vars)
        return loss, clip_frac, tape.gradient(loss, model.actor_vars)

    def _grads(self, critic_inputs, tar_vals, actor_inputs, *actor_args):
        """A minibatch's (critic loss, actor loss, clip fraction) and [critic grads, actor grads]."""
        c_loss, c_grads = self._critic_grads(critic_inputs, tar_vals)
        a_loss, clip_frac, a_grads = self._actor_grads(actor_inputs, *actor_args)
        return (c_loss, a_loss, clip_frac), [c_grads, a_grads]

    def step(self, batch, iteration):
        """One iteration's step on `batch` (a PolicyBatch); the log columns in order. iteration:
        the agent's, for the step-size adaptation's warm-up."""
        cfg = self.config
        valid_pos, exp_pos = batch.valid_pos, batch.exp_pos
        global_count = int(mpi_util.reduce_sum(valid_pos.size))
        mini_batches = int(np.ceil(global_count / self.mini_batch_size))
        tar_vals = np.clip(batch.returns, *self.target_range)
        adv, adv_mean, adv_std = normalize_advantages(batch.returns[exp_pos] - batch.vals[exp_pos], cfg.norm_adv_clip)

        totals = {"critic_loss": 0.0, "actor_loss": 0.0, "clip_frac": 0.0}
        exp_order = np.arange(exp_pos.size)
        size = self.local_mini_batch_size
        for _ in range(cfg.epochs):
            np.random.shuffle(valid_pos)
            np.random.shuffle(exp_order)
            for b in range(mini_batches):
                rows = np.arange(b * size, (b + 1) * size)
                critic_pos = valid_pos[rows % valid_pos.size]
                actor_sel = rows % exp_order.size
                reshuffle = actor_sel[-1] < actor_sel[0] or actor_sel[-1] == exp_order.size - 1
                actor_k = exp_order[actor_sel]
                c_loss, a_loss, clip_frac = self._update_minibatch(
                    batch, critic_pos, tar_vals[critic_pos], exp_pos[actor_k], adv[actor_k])
                totals["critic_loss"] += c_loss
                totals["actor_loss"] += abs(a_loss)
                totals["clip_frac"] += clip_frac
                if reshuffle:
                    np.random.shuffle(exp_order)
        self.model.refresh_mirror()

        num_batches = max(mini_batches * cfg.epochs, 1)
        info = mpi_util.reduce_dict_mean({k: v / num_batches for k, v in totals.items()})
        return {"Critic_Loss": info["critic_loss"], "Critic_Stepsize": float(self.critic_solver.stepsize.numpy()),
                "Actor_Loss": info["actor_loss"],
                "Actor_Stepsize": self._update_actor_stepsize(info["clip_frac"], iteration),
                "Clip_Frac": info["clip_frac"], "Adv_Mean": adv_mean, "Adv_Std": adv_std}

    def _update_actor_stepsize(self, clip_frac, iteration):
        """Adapts the actor's step size to the (rank-averaged) clip fraction once the iteration
        count exceeds ACTOR_STEPSIZE_WARMUP_ITERS, when TarClipFrac >= 0; returns the step size."""
        cfg, stepsize_var = self.config, self.actor_solver.stepsize
        stepsize = float(stepsize_var.numpy())
        if cfg.tar_clip_frac >= 0 and iteration > ACTOR_STEPSIZE_WARMUP_ITERS:
            stepsize_var.assign(adapt_actor_stepsize(stepsize, clip_frac, cfg.tar_clip_frac,
                                                     cfg.actor_stepsize_decay))
            stepsize = float(stepsize_var.numpy())
        return stepsize

    def _update_minibatch(self, batch, critic_pos, tar_vals, actor_pos, adv):
        """Steps the critic on the rows critic_pos (targets tar_vals) and the actor on the rows
        actor_pos (advantages adv); (critic loss, actor loss, clip fraction)."""
        outputs = self._update(take_rows(batch.critic_inputs, critic_pos), tar_vals.astype(np.float32),
                               take_rows(batch.inputs, actor_pos), batch.norm_actions[actor_pos].astype(np.float32),
                               batch.logps[actor_pos].astype(np.float32), adv.astype(np.float32),
                               batch.norm_bound_min, batch.norm_bound_max)
        return tuple(float(x) for x in outputs)
