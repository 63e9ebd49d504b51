"""GAILAgent: generative adversarial imitation learning (Ho and Ermon 2016) from recorded
demonstrations (learning/demos.py), with DeepMimic's PPO step or TRPO (PolicyStep).

The scene's reward is replaced by the discriminator's: stored paths keep the env's reward, which is
logged (Train_Return, Test_Return) and never trained on. The demonstrations come from the builder
(RLWorld.load_demos: the args' --demo_file, checked against the env's sizes and layout).

Discriminator D(x), x = disc_norm(concat(state, action)), or disc_norm(state) with DiscInputs "state"
(state-only GAIL: the discriminator judges where the agent goes, not the actions that took it
there): DiscHiddenLayers layers of
DiscHiddenUnits units (DiscActivation, tanh), then one logit whose layer starts at zero. Labels
expert 1, agent 0. Loss (class-balanced; each class's mean, as the reference weights its samples):
    mean_agent [softplus(D) - c H(D)] + mean_expert [softplus(-D) - c H(D)],
    H(D) = softplus(D) - sigmoid(D) D   (the Bernoulli entropy of sigmoid(D)),  c = DiscEntropyCoef
plus DiscGradPenalty * 0.5 mean_expert |dD/dx|^2 (x the normalised expert inputs; AMP's gradient
penalty, which keeps D smooth around the demonstrations so that its reward still grades the agent's
samples once it separates them; learning/disc_losses.py), minimised by Adam (DiscStepsize,
learning/solvers/mpi_adam.py; rank-averaged gradients),
DiscStepsPerIter full-batch steps per iteration on this rank's agent samples (the non-end slots
of the buffer) and as many expert samples drawn uniformly from the demonstrations.
DiscExpertActionNoise (off by default): each drawn expert action gets the policy's exploration
noise, a_norm^-1(a_norm(a_E) + std n), n ~ N(0, I), the draw the expert's own Gaussian at the
agent's std would have made. Demonstrations are recorded with mean actions (a policy may not keep
its feet on its sampled ones) while the agent's stored actions are sampled, so without it D can
tell them apart by the noise alone.
disc_norm (agent/resource/disc_norm) is one MPI-summed normaliser fed with the agent and the expert
batch of every iteration (before the discriminator's step); it starts at the scene's state and
action offsets and scales.

Reward (DiscRewardType) times RewardScale, from the discriminator after its update:
    "neg_log_one_minus_d": -log(1 - sigmoid(D)) = softplus(D)  in [0, inf)  (tasks that end on failure)
    "log_d":                log sigmoid(D)      = -softplus(-D) in (-inf, 0] (tasks that end on success)
A path that ends in Fail or Succ is worth 0 after its end (no reward follows); a time-limit end is
bootstrapped by the critic (as PPO). Value targets are TD(lambda) returns (Discount, TDLambda), so
the advantages R - V are GAE(lambda).

PolicyStep "PPO" (default): DeepMimic's PPO step
(learning/solvers/ppo_step.py) on those rewards (the modern libraries' GAIL; a documented deviation
from the paper's TRPO). "TRPO" (the paper's): learning/solvers/trpo_step.py. Under TRPO, with
TRPOLearnStd (default, as the reference) the policy's state-independent log-std is one of the step's
parameters: it starts at log(Noise) of ExpParamsBeg, the KL is the full Gaussian one, it is saved in
agent/main/actor/dist_gauss_diag/logstd/bias and logged as Action_Std (its mean std); without it
the log-std stays log(Noise), as in PPO. The critic takes one more input, the time feature
k / TRPOTimeHorizon (k the decision's index in its episode), as the reference's value function.
Order of an iteration (both steps): discriminator, rewards, policy, value (the reference takes the
policy step on the previous discriminator's rewards and refits the value function on new ones).

Checkpoints add agent/main/disc/{i}/dense/{kernel,bias}, agent/main/disc/disc_logits/{kernel,bias}
and agent/resource/disc_norm/{count,mean,std}; the resume state adds disc_norm's sums and Adam's
second moments.
"""
import numpy as np
import tensorflow as tf

import util.mpi_util as mpi_util
from learning.agents.ppo_agent import PPOAgent
from learning.agents.tf_agent import RESOURCE_SCOPE
from learning.configs.gail_agent import GAILAgentConfig
from learning.disc_losses import DISC_REWARDS, disc_reward, gail_disc_loss, grad_penalty
from learning.models.actor_critic import build_critic
from learning.models.gail_discriminator import GAILDiscriminator
from learning.normalizer import Normalizer
from learning.solvers.mpi_adam import MPIAdamSolver
from learning.solvers.trpo_step import TRPOStep

DISC_NORM_SCOPE = f"{RESOURCE_SCOPE}/disc_norm"
DISC_LOG_COLUMNS = (("Disc_Loss", "loss"), ("Disc_Acc_Expert", "acc_expert"), ("Disc_Acc_Agent", "acc_agent"),
                    ("Disc_Entropy", "entropy"), ("Disc_Reward_Mean", "reward_mean"),
                    ("Disc_Reward_Std", "reward_std"), ("Disc_Reward_Expert", "reward_expert"),
                    ("Grad_Penalty", "grad_penalty"))


class GAILAgent(PPOAgent):
    NAME = "GAIL"
    CONFIG = GAILAgentConfig
    NEEDS_DEMOS = True

    def __init__(self, world, id, config, demos):
        """demos: the expert's DemoDataset, checked against the env (RLWorld.load_demos)."""
        self.demos = demos
        self.disc_reward_mean = self.disc_reward_std = 0.0
        super().__init__(world, id, config)

    def __str__(self):
        return (f"{super().__str__()}, {self.config.policy_step}, demonstrations {self.demos.source} "
                f"({self.demos.num_steps} steps, {self.demos.num_episodes} episodes)")

    # ---- set-up ----
    def _load_params(self, config):
        super()._load_params(config)
        self.use_trpo = config.policy_step == "TRPO"
        self.disc_sees_actions = config.disc_inputs == "state_action"
        self.expert_x = self._disc_rows(self.demos.states, self.demos.actions)
        r_min, r_max = DISC_REWARDS[config.disc_reward_type][1]
        gamma = config.discount
        self.val_min, self.val_max = r_min * config.reward_scale / (1 - gamma), r_max * config.reward_scale / (1 - gamma)
        self.val_fail = self.val_succ = 0.0

    def _disc_rows(self, states, actions):
        """The discriminator's raw inputs (float64; rows or one row): states, with their actions
        where it sees them."""
        states = np.asarray(states, dtype=np.float64)
        return np.concatenate([states, actions], axis=-1) if self.disc_sees_actions else states

    def _disc_input_size(self):
        return self.get_state_size() + (self.get_action_size() if self.disc_sees_actions else 0)

    def _build_normalizers(self):
        super()._build_normalizers()
        env, i = self.env, self.id
        groups = self._disc_rows(env.build_state_norm_groups(i), np.zeros(self.get_action_size()))
        self.disc_norm = Normalizer(self._disc_input_size(), groups.astype(np.int32))
        self.disc_norm.set_mean_std(-self._disc_rows(env.build_state_offset(i), env.build_action_offset(i)),
                                    1 / self._disc_rows(env.build_state_scale(i), env.build_action_scale(i)))

    def _normalizers(self):
        return {**super()._normalizers(), DISC_NORM_SCOPE: self.disc_norm}

    # ---- the model and the policy step ----
    def _learn_std(self):
        return self.use_trpo and self.config.trpo_learn_std

    def _critic_input_sizes(self):
        """Under TRPO the critic also sees the time feature (the reference's value function)."""
        return super()._critic_input_sizes() + ([1] if self.use_trpo else [])

    def _build_critic(self):
        if self.use_trpo:
            # Drawn and dropped: the TRPO model once drew a critic of the policy's inputs before this
            # one, and keeping the draw keeps the initial weights (and runs) of a seed as they were.
            build_critic(self.config.critic_net, self._input_sizes())
        return super()._build_critic()

    def _build_nets(self):
        super()._build_nets()
        cfg = self.config
        self.disc = GAILDiscriminator(self._disc_input_size(), cfg.disc_hidden_layers, cfg.disc_hidden_units,
                                      cfg.disc_activation)
        self._disc_logits = tf.function(lambda x: self.disc([x]), input_signature=[self._disc_spec()])

    def _disc_spec(self):
        return tf.TensorSpec([None, self._disc_input_size()], tf.float32)

    def _build_losses(self):
        cfg, disc, spec = self.config, self.disc, self._disc_spec()

        @tf.function(input_signature=[spec, spec])
        def disc_step(norm_expert, norm_agent):
            with tf.GradientTape() as tape:
                with tf.GradientTape(watch_accessed_variables=False) as input_tape:
                    input_tape.watch(norm_expert)
                    logits_expert = disc([norm_expert])
                logits_agent = disc([norm_agent])
                loss, info = gail_disc_loss(logits_expert, logits_agent, cfg.disc_entropy_coef)
                info["grad_penalty"] = grad_penalty(logits_expert, norm_expert, input_tape)
                if cfg.disc_grad_penalty != 0:
                    loss += cfg.disc_grad_penalty * info["grad_penalty"]
                    info["loss"] = loss
            return info, tape.gradient(loss, disc.trainable_variables())

        self._disc_step = disc_step

    def _build_policy_step(self):
        if not self.use_trpo:
            return super()._build_policy_step()
        return TRPOStep(self.model, self.config, self.actor_solver, self.critic_solver, self._input_spec(),
                        self._critic_spec(), self.get_action_size())

    def _build_solvers(self):
        super()._build_solvers()
        self.disc_solver = MPIAdamSolver("disc", self.disc.trainable_variables(), self.config.disc_stepsize)

    def _solvers(self):
        return {**super()._solvers(), "disc": self.disc_solver}

    def _checkpoint_variables(self):
        return {**super()._checkpoint_variables(), **self.disc.variables}

    # ---- the critic's inputs (with the time feature under TRPO) ----
    def _time_feature(self, steps):
        return (np.asarray(steps, dtype=np.float32) / np.float32(self.config.trpo_time_horizon))[:, None]

    def _slot_steps(self, idx):
        """Each slot's decision index in its path."""
        buf = self.replay_buffer
        return (idx - buf.path_start[idx]) % buf.capacity

    def _critic_batch_inputs(self, slots, inputs):
        if not self.use_trpo:
            return inputs
        return inputs + (self._time_feature(self._slot_steps(slots)),)

    def _batch_critic_values(self, idx):
        inputs = self._critic_batch_inputs(idx, self._batch_inputs(idx))
        return self._critic_tf(inputs).numpy().astype(np.float64)

    def _log_val(self, s, g):
        if not self.use_trpo:
            return super()._log_val(s, g)
        inputs = self._decision_inputs(s, g) + [self._time_feature([len(self.path.states)])]
        val = self.model.critic_np(inputs)[0]
        self.env.log_val(self.id, float((1 - self.config.discount) * val))

    # ---- the discriminator ----
    def _agent_disc_inputs(self, idx):
        buf = self.replay_buffer
        return self._disc_rows(buf.get("states", idx), buf.get("actions", idx))

    def _norm_disc(self, x):
        return self.disc_norm.normalize(x).astype(np.float32)

    def calc_disc_logits(self, x):
        """Logits (float64) of raw discriminator rows (concat(state, action), or states)."""
        return self._disc_logits(self._norm_disc(x)).numpy().astype(np.float64)

    def calc_disc_rewards(self, x):
        return disc_reward(self.calc_disc_logits(x), self.config.disc_reward_type, self.config.reward_scale)

    def _update_disc(self):
        """Feeds disc_norm with this iteration's agent and expert batch, then DiscStepsPerIter
        full-batch Adam steps; their info averaged over the steps."""
        buf = self.replay_buffer
        idx = np.concatenate(buf.path_slots())
        agent_x = self._agent_disc_inputs(idx[~buf.is_path_end(idx)])
        expert_x = self.expert_x[np.random.randint(0, len(self.expert_x), size=len(agent_x))]
        if self.config.disc_expert_action_noise:
            expert_x = self._with_policy_noise(expert_x)
        self.disc_norm.record(agent_x)
        self.disc_norm.record(expert_x)
        self.disc_norm.update()
        norm_agent, norm_expert = self._norm_disc(agent_x), self._norm_disc(expert_x)
        totals = {}
        for _ in range(self.config.disc_steps_per_iter):
            info, grads = self._disc_step(norm_expert, norm_agent)
            self.disc_solver.update(grads)
            for k, v in info.items():
                totals[k] = totals.get(k, 0.0) + float(v)
        info = {k: v / self.config.disc_steps_per_iter for k, v in totals.items()}
        info["reward_expert"] = float(np.mean(self.calc_disc_rewards(expert_x)))
        return info

    def _with_policy_noise(self, x):
        """Rows of concat(state, action) with the policy's exploration noise on the actions."""
        n = self.get_state_size()
        norm_a = self.a_norm.normalize(x[:, n:])
        norm_a = norm_a + self.model.std_np * np.random.randn(*norm_a.shape)
        return np.concatenate([x[:, :n], self.a_norm.unnormalize(norm_a)], axis=1)

    def _fetch_batch_rewards(self, idx):
        """The discriminator's rewards of the slots idx (0 at path ends); the env's are not used."""
        rewards = self.calc_disc_rewards(self._agent_disc_inputs(idx))
        valid = ~self.replay_buffer.is_path_end(idx)
        rewards[~valid] = 0.0
        self.disc_reward_mean = float(np.mean(rewards[valid]))
        self.disc_reward_std = float(np.std(rewards[valid]))
        return rewards

    # ---- training ----
    def _train_step(self):
        disc_info = self._update_disc()
        super()._train_step()
        disc_info["reward_mean"], disc_info["reward_std"] = self.disc_reward_mean, self.disc_reward_std
        info = mpi_util.reduce_dict_mean(disc_info)
        for column, name in DISC_LOG_COLUMNS:
            self.logger.log_tabular(column, info[name])

    # ---- resume ----
    def resume_state(self):
        return {**super().resume_state(), "disc_norm/mean_sq": self.disc_norm.mean_sq}

    def load_resume_state(self, state):
        super().load_resume_state(state)
        self.disc_norm.mean_sq = np.array(state["disc_norm/mean_sq"], dtype=np.float64)
