"""GAILAgent: generative adversarial imitation learning (Ho and Ermon 2016) from recorded
demonstrations (learning/demos.py), with DeepMimic's PPO step or TRPO (PolicyStep).

The scene's reward is replaced by the discriminator's: stored paths keep the env's reward, which is
logged (Train_Return, Test_Return) and never trained on. The demonstrations come from the builder
(RLWorld.load_demos: the args' --demo_file, checked against the env's sizes and layout).

Discriminator D(x), x = disc_norm(concat(state, action)): DiscHiddenLayers layers of
DiscHiddenUnits units (DiscActivation, tanh), then one logit whose layer starts at zero. Labels
expert 1, agent 0. Loss (class-balanced; each class's mean, as the reference weights its samples):
    mean_agent [softplus(D) - c H(D)] + mean_expert [softplus(-D) - c H(D)],
    H(D) = softplus(D) - sigmoid(D) D   (the Bernoulli entropy of sigmoid(D)),  c = DiscEntropyCoef
plus DiscGradPenalty * 0.5 mean_expert |dD/dx|^2 (x the normalised expert inputs; AMP's gradient
penalty, which keeps D smooth around the demonstrations so that its reward still grades the agent's
samples once it separates them), minimised by Adam (DiscStepsize, learning/solvers/mpi_adam.py; rank-averaged gradients),
DiscStepsPerIter full-batch steps per iteration on this rank's agent samples (the non-end slots
of the buffer) and as many expert samples drawn uniformly from the demonstrations.
disc_norm (agent/resource/disc_norm) is one MPI-summed normaliser fed with the agent and the expert
batch of every iteration (before the discriminator's step); it starts at the scene's state and
action offsets and scales.

Reward (DiscRewardType) times RewardScale, from the discriminator after its update:
    "neg_log_one_minus_d": -log(1 - sigmoid(D)) = softplus(D)  in [0, inf)  (tasks that end on failure)
    "log_d":                log sigmoid(D)      = -softplus(-D) in (-inf, 0] (tasks that end on success)
A path that ends in Fail or Succ is worth 0 after its end (no reward follows); a time-limit end is
bootstrapped by the critic (as PPO). Value targets are TD(lambda) returns (Discount, TDLambda), so
the advantages R - V are GAE(lambda).

PolicyStep "PPO" (default): learning/ppo_agent.py's step on those rewards (the modern libraries'
GAIL; a documented deviation from the paper's TRPO).
PolicyStep "TRPO" (the paper's): on the exploratory samples, advantages standardised over all ranks;
surrogate L = -mean(exp(logp - logp_old) A); one trust-region step (learning/solvers/trpo.py) with
the KL of the Gaussian policy (mean KL(old || new) over the samples) as constraint, TRPOMaxKL,
damping TRPODamping, TRPOCGIters CG iterations, Fisher-vector products on a TRPOFVPSubsample
fraction of this rank's samples (all averaged over ranks), TRPOLineSearchSteps trials. With
TRPOLearnStd (default, as the reference) the policy's state-independent log-std is one of the step's
parameters: it starts at log(Noise) of ExpParamsBeg, the KL is the full Gaussian one, it is saved in
agent/main/actor/dist_gauss_diag/logstd/bias and logged as Action_Std (its mean std); without it
the log-std stays log(Noise), as in PPO. Then the value
function: the critic takes one more input, the time feature k / TRPOTimeHorizon (k the decision's
index in its episode), and takes one trust-region step on 0.5 mean (V - R)^2 / var(R) subject to
0.5 mean (V - V_old)^2 / var(R) <= TRPOValueMaxKL (var over all ranks' targets: the reference
standardises its targets), with the same damping and CG iterations.
Order of an iteration (both steps): discriminator, rewards, policy, value (the reference takes the
policy step on the previous discriminator's rewards and refits the value function on new ones).

Checkpoints add agent/main/disc/{i}/dense/{kernel,bias}, agent/main/disc/disc_logits/{kernel,bias}
and agent/resource/disc_norm/{count,mean,std}; the resume state adds disc_norm's sums and Adam's
second moments.
"""
from dataclasses import dataclass

import numpy as np
import tensorflow as tf

import util.mpi_util as mpi_util
from env.env import Terminate
from learning.actor_critic import CRITIC_SCOPE, ActorCritic, ValueHead
from learning.agent_config import PPOAgentConfig, key
from learning.amp_util import grad_penalty
from learning.gail_util import (DISC_REWARDS, disc_reward, fisher_vector_product, flat_concat,
                                gail_disc_loss, gaussian_kl, get_flat, set_flat)
from learning.losses import gaussian_logp
from learning.nets.net import Net, glorot_uniform
from learning.nets.net_builder import build_net
from learning.normalizer import Normalizer
from learning.ppo_agent import PPOAgent
from learning.solvers.mpi_adam import MPIAdamSolver
from learning.solvers.trpo import trust_region_step
from learning.tf_agent import RESOURCE_SCOPE

DISC_SCOPE = "agent/main/disc"
DISC_LOGIT_NAME = "disc_logits"
DISC_NORM_SCOPE = f"{RESOURCE_SCOPE}/disc_norm"
POLICY_STEPS = ("PPO", "TRPO")
DISC_ACTIVATIONS = {"tanh": tf.tanh, "relu": tf.nn.relu}
DISC_LOG_COLUMNS = (("Disc_Loss", "loss"), ("Disc_Acc_Expert", "acc_expert"), ("Disc_Acc_Agent", "acc_agent"),
                    ("Disc_Entropy", "entropy"), ("Disc_Reward_Mean", "reward_mean"),
                    ("Disc_Reward_Std", "reward_std"), ("Disc_Reward_Expert", "reward_expert"),
                    ("Grad_Penalty", "grad_penalty"))


# ---- config and networks -------------------------------------------------------------------------

@dataclass(frozen=True, kw_only=True)
class GAILAgentConfig(PPOAgentConfig):
    policy_step: str = key("PolicyStep", "PPO")
    disc_hidden_layers: int = key("DiscHiddenLayers", 2)
    disc_hidden_units: int = key("DiscHiddenUnits", 100)
    disc_activation: str = key("DiscActivation", "tanh")
    disc_stepsize: float = key("DiscStepsize", 0.01)
    disc_steps_per_iter: int = key("DiscStepsPerIter", 1)
    disc_entropy_coef: float = key("DiscEntropyCoef", 0.001)
    disc_grad_penalty: float = key("DiscGradPenalty", 0.0)
    disc_reward_type: str = key("DiscRewardType", "neg_log_one_minus_d")
    reward_scale: float = key("RewardScale", 1.0)
    trpo_max_kl: float = key("TRPOMaxKL", 0.01)
    trpo_damping: float = key("TRPODamping", 0.1)
    trpo_cg_iters: int = key("TRPOCGIters", 10)
    trpo_fvp_subsample: float = key("TRPOFVPSubsample", 0.1)
    trpo_line_search_steps: int = key("TRPOLineSearchSteps", 10)
    trpo_value_max_kl: float = key("TRPOValueMaxKL", 0.01)
    trpo_time_horizon: float = key("TRPOTimeHorizon", 600.0)
    trpo_learn_std: bool = key("TRPOLearnStd", True)

    def problems(self):
        yield from super().problems()
        for json_key, val, known in (("PolicyStep", self.policy_step, POLICY_STEPS),
                                     ("DiscActivation", self.disc_activation, tuple(DISC_ACTIVATIONS)),
                                     ("DiscRewardType", self.disc_reward_type, tuple(DISC_REWARDS))):
            if val not in known:
                yield json_key, f"is {val!r}, expected one of {', '.join(known)}"
        for json_key, val in (("DiscHiddenUnits", self.disc_hidden_units), ("DiscStepsPerIter", self.disc_steps_per_iter),
                              ("TRPOCGIters", self.trpo_cg_iters), ("TRPOLineSearchSteps", self.trpo_line_search_steps)):
            if val < 1:
                yield json_key, f"must be >= 1, got {val}"
        if self.disc_hidden_layers < 0:
            yield "DiscHiddenLayers", f"must be >= 0, got {self.disc_hidden_layers}"
        for json_key, val in (("DiscStepsize", self.disc_stepsize), ("RewardScale", self.reward_scale),
                              ("TRPOMaxKL", self.trpo_max_kl), ("TRPOValueMaxKL", self.trpo_value_max_kl),
                              ("TRPOTimeHorizon", self.trpo_time_horizon)):
            if val <= 0:
                yield json_key, f"must be > 0, got {val}"
        for json_key, val in (("DiscEntropyCoef", self.disc_entropy_coef), ("DiscGradPenalty", self.disc_grad_penalty),
                              ("TRPODamping", self.trpo_damping)):
            if val < 0:
                yield json_key, f"must be >= 0, got {val}"
        if not 0 < self.trpo_fvp_subsample <= 1:
            yield "TRPOFVPSubsample", f"must be in (0, 1], got {self.trpo_fvp_subsample}"


class GAILDiscriminator(Net):
    """D(x): hidden dense layers with `activation`, then a zero-initialised logit layer."""

    def __init__(self, in_size, num_layers, units, activation):
        super().__init__(DISC_SCOPE)
        self.activation = DISC_ACTIVATIONS[activation]
        self.layer_names = []
        size = in_size
        for i in range(num_layers):
            self.layer_names.append(self.add_dense(f"{i}/dense", size, units, glorot_uniform))
            size = units
        self.out = self.add_dense(DISC_LOGIT_NAME, size, 1, lambda n_in, n_out: np.zeros((n_in, n_out)))

    def forward(self, ops, params, inputs):
        h = inputs[0]
        for prefix in self.layer_names:
            h = self.activation(self.dense(ops, params, prefix, h))
        return self.dense(ops, params, self.out, h)[..., 0]


class TimeFeatureActorCritic(ActorCritic):
    """ActorCritic whose critic takes one more input after the others: the time feature."""

    def __init__(self, actor_net, critic_net, input_sizes, action_size, init_output_scale, noise, learn_std):
        super().__init__(actor_net, critic_net, input_sizes, action_size, init_output_scale, noise, learn_std)
        for net in self.critic_nets:
            for name in net.variables:
                del self.variables[name]
        self.critic_trunk = build_net(critic_net, list(input_sizes) + [1], CRITIC_SCOPE)
        self.critic_head = ValueHead(self.critic_trunk.out_size, CRITIC_SCOPE)
        self.critic_nets = (self.critic_trunk, self.critic_head)
        for net in self.critic_nets:
            self.variables.update(net.variables)
        self.critic_vars = [v for net in self.critic_nets for v in net.trainable_variables()]
        self.refresh_mirror()


# ---- the agent -----------------------------------------------------------------------------------

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
        self.expert_x = np.concatenate([self.demos.states.astype(np.float64), self.demos.actions], axis=1)
        r_min, r_max = DISC_REWARDS[config.disc_reward_type][1]
        gamma = config.discount
        self.val_min, self.val_max = r_min * config.reward_scale / (1 - gamma), r_max * config.reward_scale / (1 - gamma)
        self.val_fail = self.val_succ = 0.0

    def _disc_input_size(self):
        return self.get_state_size() + self.get_action_size()

    def _build_normalizers(self):
        super()._build_normalizers()
        env, i = self.env, self.id
        groups = np.concatenate([env.build_state_norm_groups(i), np.zeros(self.get_action_size(), np.int32)])
        self.disc_norm = Normalizer(self._disc_input_size(), groups)
        self.disc_norm.set_mean_std(-np.concatenate([env.build_state_offset(i), env.build_action_offset(i)]),
                                    1 / np.concatenate([env.build_state_scale(i), env.build_action_scale(i)]))

    def _normalizers(self):
        return {**super()._normalizers(), DISC_NORM_SCOPE: self.disc_norm}

    def _critic_spec(self):
        return self._input_spec() + ((tf.TensorSpec([None, 1], tf.float32),) if self.use_trpo else ())

    def _build_nets(self):
        cfg = self.config
        if self.use_trpo:
            self.model = TimeFeatureActorCritic(cfg.actor_net, cfg.critic_net, self._input_sizes(),
                                                self.get_action_size(), cfg.actor_init_output_scale,
                                                self.exp_params_curr.noise, cfg.trpo_learn_std)
            self._critic_tf = tf.function(lambda inputs: self.model.critic(list(inputs)),
                                          input_signature=[self._critic_spec()])
        else:
            super()._build_nets()
        self.disc = GAILDiscriminator(self._disc_input_size(), cfg.disc_hidden_layers, cfg.disc_hidden_units,
                                      cfg.disc_activation)
        self._disc_logits = tf.function(lambda x: self.disc([x]), input_signature=[self._disc_spec()])

    def _disc_spec(self):
        return tf.TensorSpec([None, self._disc_input_size()], tf.float32)

    def _build_losses(self):
        super()._build_losses()
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
        if self.use_trpo:
            self._build_trpo_losses()

    def _build_trpo_losses(self):
        model = self.model
        in_spec, critic_spec = self._input_spec(), self._critic_spec()
        vec = tf.TensorSpec([None], tf.float32)
        act = tf.TensorSpec([None, self.get_action_size()], tf.float32)
        flat = tf.TensorSpec([None], tf.float32)
        scalar = tf.TensorSpec([], tf.float32)

        def surrogate(inputs, norm_a, old_logp, adv):
            logp = gaussian_logp(norm_a, model.actor_mean(list(inputs)), model.logstd)
            return -tf.reduce_mean(tf.exp(logp - old_logp) * adv)

        @tf.function(input_signature=[in_spec, act, vec, vec])
        def surrogate_grad(inputs, norm_a, old_logp, adv):
            with tf.GradientTape() as tape:
                loss = surrogate(inputs, norm_a, old_logp, adv)
            return loss, flat_concat(tape.gradient(loss, model.actor_vars))

        @tf.function(input_signature=[in_spec, act, vec, vec, act, flat])
        def surrogate_kl(inputs, norm_a, old_logp, adv, old_mean, old_logstd):
            return (surrogate(inputs, norm_a, old_logp, adv),
                    gaussian_kl(old_mean, old_logstd, model.actor_mean(list(inputs)), model.logstd))

        @tf.function(input_signature=[in_spec, flat])
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

        self._surrogate_grad, self._surrogate_kl, self._actor_fvp = surrogate_grad, surrogate_kl, actor_fvp
        self._value_grad, self._value_loss_kl, self._value_fvp = value_grad, value_loss_kl, value_fvp

    def _build_solvers(self):
        super()._build_solvers()     # in TRPO mode the actor and critic solvers only sync and check
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

    def _critic_inputs(self, idx):
        buf = self.replay_buffer
        inputs = self._norm_inputs(buf.get("states", idx), buf.get("goals", idx))
        if self.use_trpo:
            inputs.append(self._time_feature(self._slot_steps(idx)))
        return tuple(inputs)

    def _compute_batch_vals(self, idx, is_end):
        buf = self.replay_buffer
        vals = self._critic_tf(self._critic_inputs(idx)).numpy().astype(np.float64)
        vals[is_end & buf.check_terminate(idx, Terminate.Fail)] = self.val_fail
        vals[is_end & buf.check_terminate(idx, Terminate.Succ)] = self.val_succ
        return vals

    def _log_val(self, s, g):
        if not self.use_trpo:
            return super()._log_val(s, g)
        inputs = self._norm_inputs(np.asarray(s)[None], np.asarray(g)[None])
        inputs.append(self._time_feature([len(self.path.states)]))
        val = self.model.critic_np(inputs)[0]
        self.env.log_val(self.id, float((1 - self.config.discount) * val))

    # ---- the discriminator ----
    def _agent_disc_inputs(self, idx):
        buf = self.replay_buffer
        return np.concatenate([buf.get("states", idx).astype(np.float64), buf.get("actions", idx)], axis=1)

    def _norm_disc(self, x):
        return self.disc_norm.normalize(x).astype(np.float32)

    def calc_disc_logits(self, x):
        """Logits (float64) of raw concat(state, action) rows."""
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
        if self.use_trpo:
            self._trpo_train_step()
        else:
            super()._train_step()
        disc_info["reward_mean"], disc_info["reward_std"] = self.disc_reward_mean, self.disc_reward_std
        info = mpi_util.reduce_dict_mean(disc_info)
        for column, name in DISC_LOG_COLUMNS:
            self.logger.log_tabular(column, info[name])

    def _trpo_train_step(self):
        idx, is_end, rewards, vals, new_vals, valid_pos, exp_pos = self._prepare_batch()

        adv = new_vals[exp_pos] - vals[exp_pos]
        count, total, total_sq = mpi_util.reduce_sum(np.array([adv.size, adv.sum(), np.square(adv).sum()]))
        adv_mean = total / count
        adv_std = float(np.sqrt(max(total_sq / count - adv_mean ** 2, 0.0)))
        adv = (adv - adv_mean) / (adv_std + self.ADV_EPS)

        policy = self._trpo_policy_step(idx[exp_pos], adv)
        value = self._trpo_value_step(idx[valid_pos], new_vals[valid_pos])
        self.model.refresh_mirror()
        log = self.logger.log_tabular
        log("Critic_Loss", value.loss_before)
        log("Actor_Loss", policy.loss)        # the surrogate after the step (before: -mean A = 0)
        log("KL", policy.kl)
        log("Line_Search_Steps", policy.steps)
        log("Action_Std", float(np.mean(self.model.std_np)))
        log("Value_KL", value.kl)
        log("Value_Line_Search_Steps", value.steps)
        log("Adv_Mean", adv_mean)
        log("Adv_Std", adv_std)

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

    def _trpo_policy_step(self, slots, adv):
        model = self.model
        inputs = self._batch_inputs(slots)
        norm_a = self.a_norm.normalize(self.replay_buffer.get("actions", slots)).astype(np.float32)
        old_mean = model.actor_mean(list(inputs))
        old_logstd = tf.constant(model.logstd.numpy())
        old_logp = gaussian_logp(norm_a, old_mean, old_logstd)
        adv = adv.astype(np.float32)
        sub = self._fvp_subsample(len(slots))
        sub_inputs = tuple(x[sub] for x in inputs)
        return self._trust_region(
            self.actor_solver, model.actor_vars,
            lambda: self._surrogate_grad(inputs, norm_a, old_logp, adv),
            lambda: self._surrogate_kl(inputs, norm_a, old_logp, adv, old_mean, old_logstd),
            lambda v: self._actor_fvp(sub_inputs, v), self.config.trpo_max_kl)

    def _trpo_value_step(self, slots, targets):
        inputs = self._critic_inputs(slots)
        count, total, total_sq = mpi_util.reduce_sum(np.array([targets.size, targets.sum(), np.square(targets).sum()]))
        var = max(total_sq / count - (total / count) ** 2, 1e-8)
        inv_var = tf.constant(1.0 / var, tf.float32)
        tar = targets.astype(np.float32)
        old_vals = self.model.critic(list(inputs))
        sub = self._fvp_subsample(len(slots))
        sub_inputs = tuple(x[sub] for x in inputs)
        return self._trust_region(
            self.critic_solver, self.model.critic_vars,
            lambda: self._value_grad(inputs, tar, old_vals, inv_var),
            lambda: self._value_loss_kl(inputs, tar, old_vals, inv_var),
            lambda v: self._value_fvp(sub_inputs, inv_var, v), self.config.trpo_value_max_kl)

    # ---- resume ----
    def resume_state(self):
        return {**super().resume_state(), "disc_norm/mean_sq": self.disc_norm.mean_sq}

    def load_resume_state(self, state):
        super().load_resume_state(state)
        self.disc_norm.mean_sq = np.array(state["disc_norm/mean_sq"], dtype=np.float64)
