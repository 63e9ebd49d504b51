"""AMPAgent: PPO trained on a learned style reward (deepmimic.md 5.8; DeepMimic's AMPAgent).

Per path: one agent AMP observation per action (from the second decision on, plus one at the path's
end; env.record_amp_obs_agent), and as many expert observations, drawn in one batch (an array) at
the path's end (env.record_amp_obs_expert_batch: the expert's draws do not depend on the agent's
states). Stored paths also fill the discriminator's expert and agent buffers (learning/amp_buffer.py,
DiscExpertBufferSize and DiscAgentBufferSize split over the ranks), and feed the AMP normaliser with
both kinds.

Each training iteration:
1. Discriminator: ceil(DiscStepsPerBatch * global buffer samples / (ranks * local batch)) steps,
   each on ceil(DiscBatchSize / ranks) expert and agent observations per rank (normalised by
   amp_obs_norm), momentum SGD through its own MPI solver, minimising
       DiscLoss "lsgan" (DeepMimic): 0.5 [mean 0.5 (D_e - 1)^2 + mean 0.5 (D_a + 1)^2]
                "bce" (its successor): 0.5 [mean BCE(D_e, 1) + mean BCE(D_a, 0)]  (learning/disc_losses.py)
       + DiscWeightDecay * sum_W l2(W)   (kernels of the trunk and the logit layer)
       + DiscLogitRegWeight * l2(logit kernel)
       + DiscGradPenalty * 0.5 mean |dD_e / dx_e|^2      (x_e normalised expert obs; with
         DiscGradPenaltyInputs "both", plus 0.5 mean |dD_a / dx_a|^2 of the agent's)
   with l2(W) = 0.5 sum W^2. The agent half of a batch comes from the agent buffer, or with
   DiscReplaySamples k: k from that buffer and the rest from the paths stored since the last update.
2. PPO (learning/agents/ppo_agent.py) on rewards that replace the stored ones, the style reward
       lsgan: r = max(0, 1 - 0.25 (1 - D(agent obs))^2) * RewardScale
       bce:   r = min(-log(1 - sigmoid(D(agent obs))), -log(1e-4)) * RewardScale
   or, when the scene enables the task reward, (1 - TaskRewardLerp) r + TaskRewardLerp r_task
   (DeepMimic), or DiscRewardWeight r + TaskRewardWeight r_task (its successor; without a task
   DiscRewardWeight r). The critic's values are clipped to [r_min, r_max] / (1 - gamma) of the
   rewards seen so far (MPI-reduced); its targets to the range the rewards can take.
DiscObsSteps N: the scene's AMP observation is a window of N states one decision apart
(env/amp_obs.py; 2 is DeepMimic's pair).

Checkpoints add agent/main/disc/{trunk}, agent/main/disc/disc_logits/{kernel,bias} and
agent/resource/amp_obs_norm/{count,mean,std}.
"""
import numpy as np
import tensorflow as tf

import util.mpi_util as mpi_util
from env.env import Mode, Terminate
from learning.agents.ppo_agent import PPOAgent
from learning.agents.tf_agent import RESOURCE_SCOPE
from learning.amp_buffer import AMPObsBuffer
from learning.configs.amp_agent import AMPAgentConfig
from learning.configs.config import ConfigError
from learning.disc_losses import DISC_LOSSES, STYLE_REWARDS, disc_accuracy, grad_penalty
from learning.losses import weight_decay_loss
from learning.models.amp_discriminator import Discriminator
from learning.normalizer import Normalizer
from learning.replay_buffer import Field
from learning.solvers.joint_update import JointUpdate
from learning.solvers.mpi_solver import MPISolver

AMP_OBS_NORM_SCOPE = f"{RESOURCE_SCOPE}/amp_obs_norm"
DISC_LOG_COLUMNS = (("Disc_Loss", "loss"), ("Disc_Acc_Expert", "acc_expert"), ("Disc_Acc_Agent", "acc_agent"),
                    ("Disc_Stepsize", None), ("Disc_Steps", None), ("Disc_Prob", "prob_agent"),
                    ("Disc_Abs_Logit", "abs_logit"), ("Disc_Reward_Mean", "reward_mean"),
                    ("Disc_Reward_Std", "reward_std"), ("Grad_Penalty", "grad_penalty"))


def disc_steps(steps_per_batch, global_count, num_ranks, rank_batch):
    """The discriminator's steps per rank in one update: DiscStepsPerBatch passes over the
    global_count samples of the iteration, num_ranks * rank_batch of them per step."""
    return int(np.ceil(steps_per_batch * global_count / (num_ranks * rank_batch)))


class AMPAgent(PPOAgent):
    NAME = "AMP"
    CONFIG = AMPAgentConfig

    def __init__(self, world, id, config):
        self.reward_min, self.reward_max = np.inf, -np.inf
        self.disc_reward_mean = self.disc_reward_std = 0.0
        self._fresh_agent_obs = []      # agent observations stored since the last discriminator update
        super().__init__(world, id, config)

    def __str__(self):
        return f"{super().__str__()}, AMP observation {self.get_amp_obs_size()}"

    def get_amp_obs_size(self):
        return self.env.get_amp_obs_size()

    # ---- set-up ----
    def _load_params(self, config):
        super()._load_params(config)
        if self.get_amp_obs_size() <= 0:
            raise ConfigError("AgentType: AMP needs a scene with AMP observations "
                              "(imitate_amp, heading_amp, target_amp)")
        self.env.set_amp_obs_steps(config.disc_obs_steps)
        num_procs = mpi_util.size()
        self.local_disc_batch_size = int(np.ceil(config.disc_batch_size / num_procs))
        self.local_disc_replay_samples = (None if config.disc_replay_samples is None else
                                          min(int(np.ceil(config.disc_replay_samples / num_procs)),
                                              self.local_disc_batch_size))
        self.enable_amp_task_reward = self.env.enable_amp_task_reward()
        self.style_reward_fn, style_peak = STYLE_REWARDS[config.disc_loss]
        self.style_weight, self.task_weight = config.reward_weights()
        gamma = config.discount
        style_min, style_max = 0.0, style_peak * config.reward_scale
        if self.enable_amp_task_reward:
            style_min = self._combine_rewards(style_min, self.env.get_reward_min(self.id))
            style_max = self._combine_rewards(style_max, self.env.get_reward_max(self.id))
        elif config.weighted:
            style_min, style_max = self.style_weight * style_min, self.style_weight * style_max
        self.amp_reward_range = (style_min, style_max)      # of the rewards PPO trains on
        self.val_min, self.val_max = style_min / (1 - gamma), style_max / (1 - gamma)

    def _combine_rewards(self, style_r, task_r):
        """The style and the task reward as the agent file weighs them (with a task)."""
        return self.style_weight * style_r + self.task_weight * task_r

    def _build_normalizers(self):
        super()._build_normalizers()
        env = self.env
        self.amp_obs_norm = Normalizer(self.get_amp_obs_size(), env.get_amp_obs_norm_group())
        self.amp_obs_norm.set_mean_std(-env.get_amp_obs_offset(), 1 / env.get_amp_obs_scale())

    def _normalizers(self):
        return {**super()._normalizers(), AMP_OBS_NORM_SCOPE: self.amp_obs_norm}

    def _buffer_fields(self):
        return super()._buffer_fields() + [Field("amp_obs_agent", (self.get_amp_obs_size(),), np.float32)]

    def _path_extra_fields(self):
        return super()._path_extra_fields() + ["amp_obs_expert"]

    def _build_replay_buffer(self):
        super()._build_replay_buffer()
        cfg, num_procs, size = self.config, mpi_util.size(), self.get_amp_obs_size()
        self.disc_expert_buffer = AMPObsBuffer(int(np.ceil(cfg.disc_expert_buffer_size / num_procs)), size)
        self.disc_agent_buffer = AMPObsBuffer(int(np.ceil(cfg.disc_agent_buffer_size / num_procs)), size)

    def _amp_obs_spec(self):
        return tf.TensorSpec([None, self.get_amp_obs_size()], tf.float32)

    def _build_nets(self):
        super()._build_nets()
        cfg = self.config
        self.disc = Discriminator(cfg.disc_net, self.get_amp_obs_size(), cfg.disc_init_output_scale, cfg.disc_compute_dtype)
        self._disc_logits = tf.function(self.disc, input_signature=[self._amp_obs_spec()])

    def _build_losses(self):
        super()._build_losses()
        cfg, disc, obs_spec = self.config, self.disc, self._amp_obs_spec()
        disc_loss = DISC_LOSSES[cfg.disc_loss]
        penalise_agent = cfg.disc_grad_penalty_inputs == "both"

        def disc_grads(norm_expert, norm_agent):
            with tf.GradientTape() as tape:
                with tf.GradientTape(watch_accessed_variables=False, persistent=penalise_agent) as input_tape:
                    input_tape.watch(norm_expert)
                    logits_expert = disc(norm_expert)
                    if penalise_agent:
                        input_tape.watch(norm_agent)
                        logits_agent = disc(norm_agent)
                if not penalise_agent:
                    logits_agent = disc(norm_agent)
                loss = disc_loss(logits_expert, logits_agent)
                if cfg.disc_weight_decay != 0:
                    loss += cfg.disc_weight_decay * weight_decay_loss(disc.trainable_variables)
                if cfg.disc_logit_reg_weight != 0:
                    loss += cfg.disc_logit_reg_weight * tf.nn.l2_loss(disc.logit_kernel)
                penalty = tf.constant(0.0)
                if cfg.disc_grad_penalty != 0:
                    penalty = grad_penalty(logits_expert, norm_expert, input_tape)
                    if penalise_agent:
                        penalty += grad_penalty(logits_agent, norm_agent, input_tape)
                    loss += cfg.disc_grad_penalty * penalty
            acc_expert, acc_agent = disc_accuracy(logits_expert, logits_agent)
            info = {"loss": loss, "acc_expert": acc_expert, "acc_agent": acc_agent,
                    "prob_agent": tf.reduce_mean(tf.sigmoid(logits_agent)),
                    "abs_logit": tf.reduce_mean(tf.abs(logits_agent)), "grad_penalty": penalty}
            return info, [tape.gradient(loss, disc.trainable_variables)]

        self._disc_grads = disc_grads

    def _build_solvers(self):
        super()._build_solvers()
        cfg = self.config
        self.disc_solver = MPISolver("disc", self.disc.trainable_variables, cfg.disc_stepsize, cfg.disc_momentum)
        self._disc_update = JointUpdate([self.disc_solver], self._disc_grads, [self._amp_obs_spec()] * 2)

    def _solvers(self):
        return {**super()._solvers(), "disc": self.disc_solver}

    def _checkpoint_variables(self):
        return {**super()._checkpoint_variables(), **self.disc.variables}

    # ---- recording ----
    def _records_amp_obs(self):
        """Only paths that will be stored need AMP observations."""
        return self.enable_training and self.mode != Mode.TEST

    def _update_new_action(self):
        first_step = self._is_first_step()
        super()._update_new_action()
        if not first_step and self._records_amp_obs():
            self._record_amp_obs()

    def _end_path(self):
        super()._end_path()
        if self._records_amp_obs():
            self._record_amp_obs()
            count = len(self.path.extras["amp_obs_agent"])
            self.path.extras["amp_obs_expert"] = self.env.record_amp_obs_expert_batch(self.id, count)

    def _record_amp_obs(self):
        self.path.extras["amp_obs_agent"].append(np.asarray(self.env.record_amp_obs_agent(self.id)))

    def _store_path(self, path):
        path_id = super()._store_path(path)
        if path_id >= 0:
            self.disc_expert_buffer.store(path.extras["amp_obs_expert"])
            self.disc_agent_buffer.store(path.extras["amp_obs_agent"])
            if self.local_disc_replay_samples is not None:
                self._fresh_agent_obs.append(np.asarray(path.extras["amp_obs_agent"], dtype=np.float32))
        return path_id

    def _record_normalizers(self, path):
        super()._record_normalizers(path)
        self.amp_obs_norm.record(path.extras["amp_obs_expert"])
        self.amp_obs_norm.record(path.extras["amp_obs_agent"])

    def _update_normalizers(self):
        super()._update_normalizers()
        self.amp_obs_norm.update()

    # ---- training ----
    def _train_step(self):
        disc_info = self._update_disc()
        super()._train_step()
        disc_info["reward_mean"], disc_info["reward_std"] = self.disc_reward_mean, self.disc_reward_std
        info = mpi_util.reduce_dict_mean(disc_info)
        info["Disc_Stepsize"] = float(self.disc_solver.stepsize.numpy())
        info["Disc_Steps"] = self.disc_solver.iter
        for column, name in DISC_LOG_COLUMNS:
            self.logger.log_tabular(column, info[name or column])

    def _norm_amp_obs(self, obs):
        return self.amp_obs_norm.normalize(obs).astype(np.float32)

    def _update_disc(self):
        """The discriminator's steps of one iteration; their info averaged over the steps."""
        batch = self.local_disc_batch_size
        global_count = int(mpi_util.reduce_sum(self.replay_buffer.current_size()))
        num_steps = disc_steps(self.config.disc_steps_per_batch, global_count, mpi_util.size(), batch)
        fresh = np.concatenate(self._fresh_agent_obs) if self._fresh_agent_obs else None
        self._fresh_agent_obs = []
        totals = {}
        for _ in range(num_steps):
            info = self._disc_update(self._norm_amp_obs(self.disc_expert_buffer.sample(batch)),
                                     self._norm_amp_obs(self._sample_disc_agent_obs(batch, fresh)))
            for k, v in info.items():
                totals[k] = totals.get(k, 0.0) + float(v)
        return {k: v / max(num_steps, 1) for k, v in totals.items()}

    def _sample_disc_agent_obs(self, n, fresh):
        """n agent observations: all from the agent buffer, or with DiscReplaySamples k, k from it
        and n - k from `fresh` (the paths stored since the last update; the buffer without any)."""
        replay = self.local_disc_replay_samples
        if replay is None or fresh is None or len(fresh) == 0:
            return self.disc_agent_buffer.sample(n)
        newest = fresh[np.random.randint(0, len(fresh), size=n - replay)]
        return np.concatenate([newest, self.disc_agent_buffer.sample(replay)]) if replay else newest

    def calc_disc_logits(self, amp_obs):
        """Logits (float64) of raw AMP observations (batch, obs_size)."""
        return self._disc_logits(self._norm_amp_obs(amp_obs)).numpy().astype(np.float64)

    def _fetch_batch_rewards(self, idx):
        """Style rewards of the slots idx from the updated discriminator (combined with the stored
        task rewards when the scene has a task); also updates the seen reward range."""
        style_r = self.style_reward_fn(self.calc_disc_logits(self.replay_buffer.get("amp_obs_agent", idx)),
                                       self.config.reward_scale)
        valid = ~self.replay_buffer.is_path_end(idx)
        self.disc_reward_mean = float(np.mean(style_r[valid]))
        self.disc_reward_std = float(np.std(style_r[valid]))
        rewards = style_r
        if self.enable_amp_task_reward:
            rewards = self._combine_rewards(style_r, super()._fetch_batch_rewards(idx))
        elif self.config.weighted:
            rewards = self.style_weight * style_r
        bounds = mpi_util.reduce_min(np.array([min(self.reward_min, rewards[valid].min()),
                                               -max(self.reward_max, rewards[valid].max())]))
        self.reward_min, self.reward_max = float(bounds[0]), float(-bounds[1])
        return rewards

    def _compute_batch_vals(self, idx, is_end):
        """Critic values clipped to the seen reward range / (1 - gamma); path ends as PPO's."""
        vals = super()._compute_batch_vals(idx, is_end)
        buf = self.replay_buffer
        free = ~(is_end & (buf.check_terminate(idx, Terminate.Fail) | buf.check_terminate(idx, Terminate.Succ)))
        gamma = self.config.discount
        vals[free] = np.clip(vals[free], self.reward_min / (1 - gamma), self.reward_max / (1 - gamma))
        return vals

    # ---- resume ----
    def resume_state(self):
        return {**super().resume_state(), "amp_obs_norm/mean_sq": self.amp_obs_norm.mean_sq,
                "reward_min": self.reward_min, "reward_max": self.reward_max}

    def load_resume_state(self, state):
        super().load_resume_state(state)
        self.amp_obs_norm.mean_sq = np.array(state["amp_obs_norm/mean_sq"], dtype=np.float64)
        self.reward_min, self.reward_max = float(state["reward_min"]), float(state["reward_max"])
