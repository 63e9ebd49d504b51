"""GoalsAgent: the goal-setting hierarchy (goal policy, goal-conditioned action policy, inverse
model, habituation) as a sibling of PPO and AMP (AgentType "Goals").

Three learners, each with its own MPI solver(s):
- Goal policy (agent/goal/...): PPO over a categorical choice among NumGoals goals from the
  state (and the env's goal, if any; GoalPolicyState false: from the env's goal alone). It
  chooses at the first decision of an episode and then every GoalSteps decisions; training
  samples draw from softmax(logits), test ones take argmax.
- Action policy (agent/main/..., DeepMimic's actor-critic): PPO with a Gaussian actor whose input
  is [state, (env goal unless ActionPolicyEnvGoal is false), one-hot of the current goal]; rewarded by the stability reward plus
  MotionPriorWeight x the scene's reward (the motion prior).
- Inverse model (agent/inverse/..., learning/models/inverse_model.py): predicts (a_t, g_t) from
  (s_t, s_t+1); its loss, and the stability reward computed from its errors, are documented in
  learning/goals_util.py.

Rewards, per decision t of goal g_t (r_t the env's external reward, stab_t the stability reward
from the inverse model as it is at the start of the iteration, before its update, w the
MotionPriorWeight):
    action policy:  r_t^a = stab_t + w r_t         (in [-1 + w r_min, 1 + w r_max]; w = 0: stab_t)
    goal policy:    r_t^g = rh_t r_t + sh_t stab_t
with rh_t the reward habituation and sh_t the chosen goal's stability habituation at that time
(learning/goals_util.py; both evolve only on training steps, per rank). A goal decision k spanning
decisions [t_k, t_{k+1}) earns R_k = sum_t r_t^g (undiscounted within the segment). On the
imitate scene r_t is DeepMimic's imitation reward: w r_t is a motion prior that keeps the body up
and human-like, which the stability reward alone cannot (the reference hierarchy rewards the
action policy with stab_t only).

TrainActionPolicy false (a pretrained action policy, loaded with --model_files): the action
policy (actor and critic), the inverse model and the normalisers (s_norm, g_norm, a_norm, which
the goal policy shares) keep their loaded values, and the goal policy learns a task from
    goal policy:    r_t^g = r_t
(no stability term: it rewards the skills' predictability, which the frozen learners no longer
trade against the task; no reward habituation: it shrinks the reward whenever the task goes better
than its running mean, which works against learning the task). The habituation state still evolves
and is logged; the action policy still acts with its exploration (ExpParams), as it was trained;
checkpoints hold every network.

Advantages: GAE-lambda (learning/rl_util.gae_lambda): the action policy per decision with
Discount and TDLambda, the goal policy per goal decision with GoalDiscount and GoalLambda. The
value after a path's last step is the critic's after a time-limit (Null) end; after a Fail or Succ
end it is 0 for the goal policy and w r_fail / (1 - Discount) or w r_succ / (1 - Discount) for the
action policy (no stability reward after an end). Critic targets are the lambda-returns (advantage
+ value) for the action policy (as PPOAgent, clipped to the range of r_t^a over 1 - Discount) and
the rewards-to-go for the goal policy.
Advantages are normalised per rank and clipped to +-NormAdvClip, as PPOAgent does.

Each iteration (one collective _train_step, the same number of minibatches on every rank):
action policy (PPOAgent's loop, exploratory actions for the actor), goal policy (Epochs passes of
ceil(global goal decisions / GoalMiniBatchSize) minibatches; clipped surrogate minus
GoalEntropyWeight x entropy; critic 0.5 (G - V)^2), inverse model (Epochs passes of
ceil(global transitions / MiniBatchSize) minibatches). Checkpoints hold all three networks and
the normalisers; the resume state adds the habituation state and the solvers' slots.
"""
from typing import NamedTuple

import numpy as np
import tensorflow as tf

import util.mpi_util as mpi_util
from env.env import Mode, Terminate
from learning import checkpoint
from learning.agents.pg_agent import input_spec
from learning.agents.ppo_agent import PPOAgent
from learning.configs.config import ConfigError
from learning.configs.goals_agent import GoalsAgentConfig
from learning.goals_util import (RewardHabituation, balanced_accuracy, goals_used, inverse_model_loss,
                                 relative_likelihood, softmax_np, stability_habituation_step, stability_reward)
from learning.losses import critic_loss, ppo_clip_loss
from learning.models.goal_policy import GOAL_SCOPE, GoalPolicy
from learning.models.inverse_model import InverseModel
from learning.replay_buffer import Field
from learning.rl_util import gae_lambda, normalize_advantages
from learning.solvers.mpi_solver import MPISolver

LOG_COLUMNS = ("Goal_Actor_Loss", "Goal_Critic_Loss", "Goal_Clip_Frac", "Goal_Entropy", "Goal_Return_Mean",
               "InvModel_Loss", "InvModel_Action_Err", "InvModel_Goal_Acc", "InvModel_Goal_Acc_Balanced",
               "Stability_Reward_Mean", "Motion_Prior_Mean", "Stability_Habituation_Min", "Reward_Habituation",
               "Goals_Used")


class GoalBatch(NamedTuple):
    """The goal policy's samples of one iteration (one row per goal decision)."""
    states: np.ndarray
    env_goals: np.ndarray
    goals: np.ndarray           # chosen goal ids
    advantages: np.ndarray
    rewards_to_go: np.ndarray
    values: np.ndarray
    logps: np.ndarray


class GoalsAgent(PPOAgent):
    NAME = "Goals"
    CONFIG = GoalsAgentConfig
    GOAL_START_FLAG = 1 << 1

    def __init__(self, world, id, config):
        self._step = 0
        self.goal_id = 0                # the goal the action policy is conditioned on now
        self._goal_logp = 0.0
        self._stab_factor = 1.0
        self._goal_start = False
        super().__init__(world, id, config)

    def __str__(self):
        return f"{super().__str__()}, {self.config.num_goals} goals every {self.config.goal_steps} decisions"

    # ---- set-up ----
    def _load_params(self, config):
        super()._load_params(config)
        env, i, gamma, w = self.env, self.id, config.discount, config.motion_prior_weight
        # action rewards stab + w r: stab in [-1, 1], r in the prior's [r_min, r_max]; no stab after an end
        prior_min, prior_max = self._motion_prior_range()
        self.val_min = (-1 + w * prior_min) / (1 - gamma)
        self.val_max = (1 + w * prior_max) / (1 - gamma)
        self.val_fail = w * env.get_reward_fail(i) / (1 - gamma)
        self.val_succ = w * env.get_reward_succ(i) / (1 - gamma)
        if not config.train_action_policy:
            self.need_normalizer_update = False     # the loaded normalisers are the frozen policy's
        if not config.goal_policy_state and not self.has_goal():
            raise ConfigError(f"GoalPolicyState false: scene {env.name} has no goal, so the goal policy "
                              f"would see nothing")
        self.num_goals = config.num_goals
        self.local_goal_mini_batch_size = max(int(np.ceil(config.goal_mini_batch_size / mpi_util.size())), 1)
        self.stab_hab = np.ones(config.num_goals)
        self.reward_hab = RewardHabituation(config.reward_habituation_factor, config.reward_restoration_factor)
        self._batch_info = {}
        self.held_goal = self._parse_hold_goal(self.world.arg_parser)
        self.cycle_goals = self._parse_cycle_goals(self.world.arg_parser)
        # row k: the action policy's goal input for goal k (GoalInputScale at entry k, 0 elsewhere)
        self._goal_inputs = np.eye(config.num_goals, dtype=np.float32) * np.float32(config.goal_input_scale)

    def _motion_prior_range(self):
        """[r_min, r_max] of the motion prior r_t: the scene's reward range."""
        return self.env.get_reward_min(self.id), self.env.get_reward_max(self.id)

    def _parse_hold_goal(self, arg_parser):
        """--hold_goal K (world args): test episodes hold goal K instead of the goal policy's choice."""
        goal = arg_parser.parse_int("hold_goal", -1)
        if goal == -1:
            return None
        if not 0 <= goal < self.num_goals:
            raise ValueError(f"--hold_goal {goal}: goals are 0-{self.num_goals - 1} (NumGoals {self.num_goals})")
        return goal

    def _parse_cycle_goals(self, arg_parser):
        """--cycle_goals K (world args): test episodes take the goals in turn, 0 first, each for K
        goal periods (K x GoalSteps decisions), instead of the goal policy's choice; 0: off. A held
        goal (--hold_goal, the viewer's digit keys) comes first."""
        periods = arg_parser.parse_int("cycle_goals", 0)
        if periods < 0:
            raise ValueError(f"--cycle_goals {periods}: goal periods per goal must be >= 0")
        return periods

    def _test_goal(self, probs):
        """The goal a test episode takes at a goal choice: the held one, else the one in turn
        (--cycle_goals), else the goal policy's most likely."""
        if self.held_goal is not None:
            return self.held_goal
        if self.cycle_goals:
            return (self._step // (self.config.goal_steps * self.cycle_goals)) % self.num_goals
        return int(np.argmax(probs))

    def _buffer_fields(self):
        return super()._buffer_fields() + [Field("goal_ids", (), np.int32), Field("goal_logps", (), np.float64),
                                           Field("stab_habs", (), np.float64), Field("reward_habs", (), np.float64)]

    def _goal_input_sizes(self):
        """The goal policy's inputs: the state and the scene's goal (GoalPolicyState false: the goal)."""
        goal = [self.get_goal_size()] if self.has_goal() else []
        return goal if not self.config.goal_policy_state else [self.get_state_size()] + goal

    def _input_sizes(self):
        env_goal = self.has_goal() and self.config.action_policy_env_goal
        return [self.get_state_size()] + ([self.get_goal_size()] if env_goal else []) + [self.num_goals]

    def _goal_policy_inputs(self, states, env_goals):
        """The goal policy's normalised inputs for batches of states and scene goals."""
        inputs = self._norm_inputs(states, env_goals)
        return inputs if self.config.goal_policy_state else inputs[1:]

    def _first_layers(self):
        """The action policy's and critic's first layers, and the goal policy's: a hierarchy
        started from another hierarchy's checkpoint on a task scene (--init_model_files) widens
        the goal policy's for the task's goal (zero rows: it starts choosing as the checkpoint's)."""
        goal_layers = {f"{GOAL_SCOPE}/{net}/0/dense/kernel": self._goal_input_sizes() for net in ("actor", "critic")}
        return {**super()._first_layers(), **goal_layers}

    def _init_kept_inputs(self, name):
        """--init_model_files: the action policy's one-hot goal rows keep their initial draw. Zero
        rows would start every goal as the same policy, whose transitions the inverse model cannot
        tell apart, so the stability reward would give the goals no reason to part."""
        return 0 if name.startswith(GOAL_SCOPE) else self.num_goals

    def _init_tensors(self, tensors, source):
        """InitGoalCommands: goal k starts as the checkpoint's goal-conditioned policy (and critic)
        under command k (checkpoint.goal_commands_as_one_hot), so the goals start as behaviours
        that policy knows instead of random perturbations of one. GoalPolicyState false: the
        checkpoint's goal policy, which saw the state, is not copied."""
        if not self.config.goal_policy_state:
            tensors = {name: t for name, t in tensors.items() if not name.startswith(GOAL_SCOPE + "/")}
        commands = self.config.init_goal_commands
        if not commands:
            return tensors
        layers = super()._first_layers()
        if any(list(sizes) != [self.get_state_size(), self.num_goals] for sizes in layers.values()):
            raise ConfigError("InitGoalCommands: the action policy's input must be the state and the goal's "
                              "one-hot alone (ActionPolicyEnvGoal false, or a scene without a goal)")
        variables = self._checkpoint_variables()
        kernels = {name: variables[name].shape[1] for name in layers}
        return checkpoint.goal_commands_as_one_hot(tensors, kernels, commands, self.config.goal_input_scale, source)

    def _goal_input_spec(self):
        return input_spec(self._goal_input_sizes())

    def _goal_entries(self):
        """The state indices of InverseModelGoalInputs, by the scene's state names."""
        wanted = self.config.inverse_model_goal_inputs
        if not wanted:
            return []
        names = self.env.state_names(self.id)
        unknown = [name for name in wanted if name not in names]
        if unknown:
            known = f"e.g. {', '.join(names[:3])}, ..." if names else "the scene names no state entries"
            raise ConfigError(f"InverseModelGoalInputs: {', '.join(unknown)} not a state "
                              f"entry of scene {self.env.name} ({known})")
        return [names.index(name) for name in wanted]

    def _build_nets(self):
        super()._build_nets()
        cfg = self.config
        self.goal_policy = GoalPolicy(cfg.goal_actor_net, cfg.goal_critic_net, self._goal_input_sizes(), cfg.num_goals)
        self.inverse_model = InverseModel(cfg.inverse_model_net, self.get_state_size(), self.get_action_size(),
                                          cfg.num_goals, self._goal_entries())
        gp, inv = self.goal_policy, self.inverse_model
        self._goal_critic_tf = tf.function(lambda inputs: gp.critic(list(inputs)),
                                           input_signature=[self._goal_input_spec()])
        state = tf.TensorSpec([None, self.get_state_size()], tf.float32)
        self._inverse_tf = tf.function(lambda s0, s1: inv(s0, s1), input_signature=[state, state])

    def _build_losses(self):
        super()._build_losses()
        cfg, gp, inv = self.config, self.goal_policy, self.inverse_model
        in_spec = self._goal_input_spec()
        vec = tf.TensorSpec([None], tf.float32)
        ids = tf.TensorSpec([None], tf.int32)
        state = tf.TensorSpec([None, self.get_state_size()], tf.float32)
        act = tf.TensorSpec([None, self.get_action_size()], tf.float32)

        @tf.function(input_signature=[in_spec, ids, vec, vec])
        def goal_actor_step(inputs, goal_ids, old_logp, adv):
            with tf.GradientTape() as tape:
                logp_all = tf.nn.log_softmax(gp.logits(list(inputs)))
                logp = tf.gather(logp_all, goal_ids, axis=1, batch_dims=1)
                loss, clip_frac = ppo_clip_loss(logp, old_logp, adv, cfg.ratio_clip)
                entropy = -tf.reduce_mean(tf.reduce_sum(tf.exp(logp_all) * logp_all, axis=-1))
                loss -= cfg.goal_entropy_weight * entropy
            return loss, clip_frac, entropy, tape.gradient(loss, gp.actor_vars)

        @tf.function(input_signature=[in_spec, vec])
        def goal_critic_step(inputs, tar_vals):
            with tf.GradientTape() as tape:
                loss = critic_loss(tar_vals, gp.critic(list(inputs)))
            return loss, tape.gradient(loss, gp.critic_vars)

        def inverse_loss(s0, s1, norm_a, goal_ids, p_a):
            a_pred, logits = inv(s0, s1)
            g = tf.one_hot(goal_ids, cfg.num_goals)
            loss, _, _ = inverse_model_loss(norm_a, a_pred, g, tf.nn.softmax(logits), p_a,
                                            cfg.inverse_model_goal_error_base)
            return loss

        @tf.function(input_signature=[state, state, act, ids, vec])
        def inverse_step(s0, s1, norm_a, goal_ids, p_a):
            with tf.GradientTape() as tape:
                loss = inverse_loss(s0, s1, norm_a, goal_ids, p_a)
            return loss, tape.gradient(loss, inv.trainable_variables)

        self._goal_actor_step = goal_actor_step
        self._goal_critic_step = goal_critic_step
        self._inverse_step = inverse_step
        self._inverse_loss = tf.function(inverse_loss, input_signature=[state, state, act, ids, vec])

    def _build_solvers(self):
        super()._build_solvers()
        cfg = self.config
        self.goal_actor_solver = MPISolver("goal_actor", self.goal_policy.actor_vars, cfg.goal_actor_stepsize,
                                           cfg.goal_momentum)
        self.goal_critic_solver = MPISolver("goal_critic", self.goal_policy.critic_vars, cfg.goal_critic_stepsize,
                                            cfg.goal_momentum)
        self.inverse_solver = MPISolver("inverse", self.inverse_model.trainable_variables,
                                        cfg.inverse_model_stepsize, cfg.inverse_model_momentum)

    def _solvers(self):
        return {**super()._solvers(), "goal_actor": self.goal_actor_solver, "goal_critic": self.goal_critic_solver,
                "inverse": self.inverse_solver}

    def _checkpoint_variables(self):
        return {**super()._checkpoint_variables(), **self.goal_policy.variables, **self.inverse_model.variables}

    def _on_params_changed(self):
        super()._on_params_changed()
        if hasattr(self, "goal_policy"):
            self.goal_policy.refresh_mirror()

    # ---- inputs ----
    def _one_hot(self, goal_ids):
        """The action policy's goal input: GoalInputScale at the goal's entry, 0 elsewhere."""
        return self._goal_inputs[np.asarray(goal_ids, dtype=np.int64)]

    def _main_inputs(self, states, env_goals, goal_ids):
        inputs = self._norm_inputs(states, env_goals)
        if not self.config.action_policy_env_goal:
            inputs = inputs[:1]
        return inputs + [self._one_hot(goal_ids)]

    def _batch_inputs(self, slots):
        buf = self.replay_buffer
        return tuple(self._main_inputs(buf.get("states", slots), buf.get("goals", slots), buf.get("goal_ids", slots)))

    def _decision_inputs(self, s, g):
        """The action policy's inputs at a decision: with the one-hot of the current goal."""
        return self._main_inputs(np.asarray(s)[None], np.asarray(g)[None], [self.goal_id])

    def _norm_states(self, states):
        return self.s_norm.normalize(states).astype(np.float32)

    # ---- decisions ----
    def reset(self):
        super().reset()
        self._step = 0

    def _is_training_step(self):
        return self.enable_training and self.mode in (Mode.TRAIN, Mode.TRAIN_END)

    def _choose_goal(self, s, g):
        probs = self.goal_policy.probs_np(self._goal_policy_inputs(np.asarray(s)[None], np.asarray(g)[None]))[0]
        if self._is_training_step():
            goal = int(min(np.searchsorted(np.cumsum(probs), np.random.rand() * probs.sum()), self.num_goals - 1))
            self._stab_factor = float(self.stab_hab[goal])
            self.stab_hab = stability_habituation_step(self.stab_hab, goal, self.config.stability_habituation_factor,
                                                       self.config.stability_restoration_factor)
        else:
            goal = self._test_goal(probs)
            self._stab_factor = float(self.stab_hab[goal])
        self.goal_id, self._goal_logp = goal, float(np.log(max(probs[goal], 1e-30)))

    def _decide_action(self, s, g):
        goal_start = self._step % self.config.goal_steps == 0
        if goal_start:
            self._choose_goal(s, g)
        self._step += 1
        self._goal_start = goal_start
        a, logp = super()._decide_action(s, g)
        extras = self.path.extras
        extras["goal_ids"].append(self.goal_id)
        extras["goal_logps"].append(self._goal_logp if goal_start else 0.0)
        extras["stab_habs"].append(self._stab_factor)
        return a, logp

    def _record_flags(self):
        return super()._record_flags() | (self.GOAL_START_FLAG if self._goal_start else 0)

    def _record_reward(self):
        super()._record_reward()
        reward = self.path.rewards[-1]
        factor = self.reward_hab.step(reward) if self._is_training_step() else self.reward_hab.value
        self.path.extras["reward_habs"].append(factor)

    # ---- the action policy's PPO step (PPOAgent's, with these hooks) ----
    def _fetch_batch_rewards(self, idx):
        """The action policy's rewards of the slots idx (0 at path ends),
            r_t^a = stab_t + MotionPriorWeight x r_t,
        stab_t the stability reward from the inverse model as it is now (learning/goals_util.py),
        r_t the motion prior: the rewards the agent's base class trains on (PPO: the scene's own
        reward; GoalsAMP: the AMP style reward). Keeps stab_t for the goal policy and the batch's
        inverse-model and prior statistics for the log (Motion_Prior_Mean: mean r_t)."""
        buf = self.replay_buffer
        valid = ~buf.is_path_end(idx)
        slots = idx[valid]
        next_slots = (slots + 1) % buf.capacity
        a_pred, logits = self._inverse_tf(self._norm_states(buf.get("states", slots)),
                                          self._norm_states(buf.get("states", next_slots)))
        a_pred = a_pred.numpy().astype(np.float64)
        g_pred = softmax_np(logits.numpy().astype(np.float64))
        norm_a = self.a_norm.normalize(buf.get("actions", slots))
        goal_ids = buf.get("goal_ids", slots)
        p_a = relative_likelihood(buf.get("logps", slots), self.model.logp_at_mean_np)
        cfg = self.config
        stab = stability_reward(norm_a, a_pred, goal_ids, g_pred, p_a, cfg.goal_error_factor,
                                cfg.action_error_factor, cfg.action_error_discount)
        prior = super()._fetch_batch_rewards(idx)[valid]
        self._batch_stability = np.zeros(idx.size)
        self._batch_stability[valid] = stab
        rewards = np.zeros(idx.size)
        rewards[valid] = stab + cfg.motion_prior_weight * prior
        hit = np.argmax(g_pred, axis=-1) == goal_ids
        self._batch_info = {"inv_action_err": float(np.mean(np.abs(norm_a - a_pred))),
                            "inv_goal_acc": float(np.mean(hit)),
                            "inv_goal_acc_balanced": balanced_accuracy(hit, goal_ids),
                            "stability_mean": float(np.mean(stab)), "motion_prior_mean": float(np.mean(prior))}
        return rewards

    def _compute_batch_vals(self, idx, is_end):
        buf = self.replay_buffer
        goal_ids = buf.get("goal_ids", idx).copy()
        ends = np.nonzero(is_end)[0]
        goal_ids[ends] = goal_ids[ends - 1]          # an end state is valued under its path's last goal
        inputs = self._main_inputs(buf.get("states", idx), buf.get("goals", idx), goal_ids)
        vals = self._critic_tf(tuple(inputs)).numpy().astype(np.float64)
        vals[is_end & buf.check_terminate(idx, Terminate.Fail)] = self.val_fail
        vals[is_end & buf.check_terminate(idx, Terminate.Succ)] = self.val_succ
        return vals

    def _compute_batch_new_vals(self, paths, rewards, vals):
        """lambda-returns adv + V from GAE-lambda (Discount, TDLambda), 0 at end positions."""
        new_vals = np.zeros_like(vals)
        start = 0
        for slots in paths:
            n = len(slots) - 1
            adv, _ = gae_lambda(rewards[start:start + n], vals[start:start + n + 1], self.config.discount,
                                self.config.td_lambda)
            new_vals[start:start + n] = adv + vals[start:start + n]
            start += n + 1
        return new_vals

    # ---- the whole step ----
    def _valid_train_step(self):
        """PPO's rule (a batch, and a minibatch of exploratory actions for the actor's step); with
        TrainActionPolicy false the actor does not step, so a batch alone: the frozen skills may
        then act without exploration (ExpParams Rate 0), as they do in test episodes."""
        if self.config.train_action_policy:
            return super()._valid_train_step()
        return self.replay_buffer.current_size() >= self.local_batch_size

    def _train_step(self):
        """The action policy's PPO step, the goal policy's, the inverse model's; with
        TrainActionPolicy false the goal policy's alone (the action policy's log columns are then
        absent, InvModel_Loss is the frozen model's loss on the batch)."""
        if self.config.train_action_policy:
            super()._train_step()
        else:
            self._fetch_batch_rewards(np.concatenate(self.replay_buffer.path_slots()))   # stab_t, the log's stats
        info = dict(self._batch_info)
        goal_batch, goal_counts = self._build_goal_batch()
        info.update(self._update_goal_policy(goal_batch))
        info["inv_loss"] = self._update_inverse_model(self.config.train_action_policy)
        info = mpi_util.reduce_dict_mean(info)
        counts = mpi_util.reduce_sum(goal_counts)
        columns = {
            "Goal_Actor_Loss": info["goal_actor_loss"], "Goal_Critic_Loss": info["goal_critic_loss"],
            "Goal_Clip_Frac": info["goal_clip_frac"], "Goal_Entropy": info["goal_entropy"],
            "Goal_Return_Mean": info["goal_return_mean"], "InvModel_Loss": info["inv_loss"],
            "InvModel_Action_Err": info["inv_action_err"], "InvModel_Goal_Acc": info["inv_goal_acc"],
            "InvModel_Goal_Acc_Balanced": info["inv_goal_acc_balanced"],
            "Stability_Reward_Mean": info["stability_mean"], "Motion_Prior_Mean": info["motion_prior_mean"],
            "Stability_Habituation_Min": float(mpi_util.reduce_min(float(self.stab_hab.min()))),
            "Reward_Habituation": float(mpi_util.reduce_mean(self.reward_hab.value)),
            "Goals_Used": goals_used(counts)}
        for column in LOG_COLUMNS:
            self.logger.log_tabular(column, columns[column])

    def _build_goal_batch(self):
        """The goal policy's samples from the stored paths (see the module docstring), and how often
        each goal was chosen."""
        cfg, buf = self.config, self.replay_buffer
        parts = {name: [] for name in GoalBatch._fields}
        start = 0
        for slots in buf.path_slots():
            n = len(slots) - 1
            steps = slots[:-1]
            stab = self._batch_stability[start:start + n]
            start += n + 1
            if cfg.train_action_policy:
                step_r = buf.get("reward_habs", steps) * buf.get("rewards", steps) + buf.get("stab_habs", steps) * stab
            else:
                step_r = buf.get("rewards", steps).astype(np.float64)      # frozen action policy: the task's
            starts = np.nonzero(buf.get("flags", steps) & self.GOAL_START_FLAG)[0]
            seg_r = np.add.reduceat(step_r, starts)
            dec = steps[starts]
            state_slots = np.append(dec, slots[-1])
            inputs = self._goal_policy_inputs(buf.get("states", state_slots), buf.get("goals", state_slots))
            vals = self._goal_critic_tf(tuple(inputs)).numpy().astype(np.float64)
            if buf.terminate[slots[-1]] != int(Terminate.Null):
                vals[-1] = 0.0
            adv, rtg = gae_lambda(seg_r, vals, cfg.goal_discount, cfg.goal_lambda)
            for name, val in (("states", buf.get("states", dec)), ("env_goals", buf.get("goals", dec)),
                              ("goals", buf.get("goal_ids", dec)), ("advantages", adv), ("rewards_to_go", rtg),
                              ("values", vals[:-1]), ("logps", buf.get("goal_logps", dec))):
                parts[name].append(val)
        batch = GoalBatch(**{name: np.concatenate(vals) for name, vals in parts.items()})
        return batch, np.bincount(batch.goals, minlength=self.num_goals).astype(np.float64)

    def _update_goal_policy(self, batch):
        cfg = self.config
        n = batch.goals.size
        inputs = self._goal_policy_inputs(batch.states, batch.env_goals)
        adv, _, _ = normalize_advantages(batch.advantages, cfg.norm_adv_clip)
        mini_batches = int(np.ceil(mpi_util.reduce_sum(n) / cfg.goal_mini_batch_size))
        size = self.local_goal_mini_batch_size
        totals = dict.fromkeys(("goal_actor_loss", "goal_critic_loss", "goal_clip_frac", "goal_entropy"), 0.0)
        order = np.arange(n)
        for _ in range(cfg.epochs):
            np.random.shuffle(order)
            for b in range(mini_batches):
                sel = order[np.arange(b * size, (b + 1) * size) % n]
                batch_in = tuple(x[sel] for x in inputs)
                loss, clip_frac, entropy, grads = self._goal_actor_step(
                    batch_in, batch.goals[sel].astype(np.int32), batch.logps[sel].astype(np.float32),
                    adv[sel].astype(np.float32))
                self.goal_actor_solver.update(grads)
                c_loss, c_grads = self._goal_critic_step(batch_in, batch.rewards_to_go[sel].astype(np.float32))
                self.goal_critic_solver.update(c_grads)
                totals["goal_actor_loss"] += abs(float(loss))
                totals["goal_critic_loss"] += float(c_loss)
                totals["goal_clip_frac"] += float(clip_frac)
                totals["goal_entropy"] += float(entropy)
        self.goal_policy.refresh_mirror()
        num = max(mini_batches * cfg.epochs, 1)
        info = {k: v / num for k, v in totals.items()}
        info["goal_return_mean"] = float(np.mean(batch.rewards_to_go))
        return info

    def _update_inverse_model(self, train=True):
        """The inverse model's minibatches over this iteration's transitions; mean loss. train
        False: no step, the loss over all of them."""
        cfg, buf = self.config, self.replay_buffer
        idx = np.concatenate(buf.path_slots())
        slots = idx[~buf.is_path_end(idx)]
        s0 = self._norm_states(buf.get("states", slots))
        s1 = self._norm_states(buf.get("states", (slots + 1) % buf.capacity))
        norm_a = self.a_norm.normalize(buf.get("actions", slots)).astype(np.float32)
        goal_ids = buf.get("goal_ids", slots).astype(np.int32)
        p_a = relative_likelihood(buf.get("logps", slots), self.model.logp_at_mean_np).astype(np.float32)
        if not train:
            return float(self._inverse_loss(s0, s1, norm_a, goal_ids, p_a))
        mini_batches = int(np.ceil(mpi_util.reduce_sum(slots.size) / self.mini_batch_size))
        size = self.local_mini_batch_size
        order = np.arange(slots.size)
        total = 0.0
        for _ in range(cfg.epochs):
            np.random.shuffle(order)
            for b in range(mini_batches):
                sel = order[np.arange(b * size, (b + 1) * size) % slots.size]
                loss, grads = self._inverse_step(s0[sel], s1[sel], norm_a[sel], goal_ids[sel], p_a[sel])
                self.inverse_solver.update(grads)
                total += float(loss)
        return total / max(mini_batches * cfg.epochs, 1)

    # ---- resume ----
    def resume_state(self):
        return {**super().resume_state(), "goals/stab_hab": self.stab_hab,
                "goals/reward_hab": np.array([self.reward_hab.value, self.reward_hab.mean, self.reward_hab.count])}

    def load_resume_state(self, state):
        super().load_resume_state(state)
        self.stab_hab = np.array(state["goals/stab_hab"], dtype=np.float64)
        value, mean, count = (float(x) for x in state["goals/reward_hab"])
        self.reward_hab.value, self.reward_hab.mean, self.reward_hab.count = value, mean, int(count)

