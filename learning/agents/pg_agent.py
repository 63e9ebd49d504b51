"""PGAgent: the actor-critic machinery PPO (and AMP) share: the model, decisions, the critic.

Decisions run the model's numpy mirror at batch 1. With probability Rate (while training) the
action is sampled from N(mean, exp(logstd)^2) in normalised action units, else it is the mean;
the exploration bit (EXP_ACTION_FLAG) of the step's flags records which. Actions leave the agent
un-normalised (a = a_norm.mean + a_norm.std * norm_a); logps are in normalised units.
Value bounds: rewards in [r_min, r_max] give values in [r_min, r_max] / (1 - gamma); a Fail end
is worth r_fail / (1 - gamma), a Succ end r_succ / (1 - gamma).
"""
import numpy as np
import tensorflow as tf

from env.env import Mode
from learning.agents.tf_agent import TFAgent
from learning.models.actor_critic import ActorCritic, build_actor, build_critic


class PGAgent(TFAgent):
    EXP_ACTION_FLAG = 1 << 0

    def __init__(self, world, id, config):
        self._exp_action = False
        super().__init__(world, id, config)

    def reset(self):
        super().reset()
        self._exp_action = False

    def _load_params(self, config):
        super()._load_params(config)
        env, i, gamma = self.env, self.id, config.discount
        r_min, r_max = env.get_reward_min(i), env.get_reward_max(i)
        r_fail, r_succ = env.get_reward_fail(i), env.get_reward_succ(i)
        if not (r_min <= r_fail <= r_max and r_min <= r_succ <= r_max):
            raise ValueError(f"agent {i}: reward_fail {r_fail} and reward_succ {r_succ} must lie in "
                             f"[reward_min {r_min}, reward_max {r_max}]")
        self.val_min, self.val_max = r_min / (1 - gamma), r_max / (1 - gamma)
        self.val_fail = r_fail / (1 - gamma) if gamma > 0 else 0.0
        self.val_succ = r_succ / (1 - gamma) if gamma > 0 else 0.0

    def _buffer_filter_flags(self):
        return (self.EXP_ACTION_FLAG,)

    def _legacy_val_norm(self):
        """DeepMimic 2018's val_norm: -offset and 1/scale of its value bounds, i.e. the middle and
        half-width of [val_min, val_max]; (0, 1) when they are not finite."""
        lo, hi = self.val_min, self.val_max
        if np.isfinite(lo) and np.isfinite(hi) and hi > lo:
            return 0.5 * (hi + lo), 0.5 * (hi - lo)
        return 0.0, 1.0

    def _input_sizes(self):
        """The sizes of the actor's inputs: [state] or [state, goal]."""
        return [self.get_state_size()] + ([self.get_goal_size()] if self.has_goal() else [])

    def _critic_input_sizes(self):
        return self._input_sizes()

    def _input_spec(self):
        return input_spec(self._input_sizes())

    def _critic_spec(self):
        return input_spec(self._critic_input_sizes())

    def _build_nets(self):
        self.model = ActorCritic(self._build_actor(), self._build_critic())
        self._critic_tf = tf.function(lambda inputs: self.model.critic(list(inputs)),
                                      input_signature=[self._critic_spec()])

    def _build_actor(self):
        cfg = self.config
        return build_actor(cfg.actor_net, self._input_sizes(), self.get_action_size(), cfg.actor_init_output_scale,
                           self.exp_params_curr.noise, self._learn_std())

    def _learn_std(self):
        """Whether the policy step trains the log-std (PPO's does not: it stays log(Noise))."""
        return False

    def _build_critic(self):
        return build_critic(self.config.critic_net, self._critic_input_sizes())

    def _checkpoint_variables(self):
        return dict(self.model.variables)

    def _optional_checkpoint_variables(self):
        return {self.model.logstd_name}   # the 2018 layout has no log-std variable

    def _first_layers(self):
        return {"agent/main/actor/0/dense/kernel": self._input_sizes(),
                "agent/main/critic/0/dense/kernel": self._critic_input_sizes()}

    def _on_params_changed(self):
        self.model.refresh_mirror()

    def _norm_inputs(self, states, goals):
        """Normalised float32 network inputs for batches of states and goals."""
        inputs = [self.s_norm.normalize(states).astype(np.float32)]
        if self.has_goal():
            inputs.append(self.g_norm.normalize(goals).astype(np.float32))
        return inputs

    def _enable_stoch_policy(self):
        return self.enable_training and self.mode in (Mode.TRAIN, Mode.TRAIN_END)

    def _decision_inputs(self, s, g):
        """The networks' inputs (a batch of one) at a decision with state s and goal g."""
        return self._norm_inputs(np.asarray(s)[None], np.asarray(g)[None])

    def calc_action(self, s, g, noise=None):
        """The policy's action at (s, g), un-normalised: the Gaussian's mean, or with `noise`
        (standard normal draws, one per action dimension) mean + std * noise."""
        model = self.model
        norm_a = model.actor_mean_np(self._decision_inputs(s, g))[0].astype(np.float64)
        if noise is not None:
            norm_a += model.std_np * noise
        return self.a_norm.unnormalize(norm_a)

    def _decide_action(self, s, g):
        self._exp_action = self._enable_stoch_policy() and np.random.rand() < self.exp_params_curr.rate
        if not self._exp_action:
            return self.calc_action(s, g), self.model.logp_at_mean_np
        noise = np.random.randn(self.get_action_size())
        return self.calc_action(s, g, noise), self.model.logp_at_mean_np - 0.5 * float(noise @ noise)

    def _record_flags(self):
        return self.EXP_ACTION_FLAG if self._exp_action else 0

    def _eval_critic(self, states, goals):
        """Critic values (float64) of batches of raw states and goals."""
        return self._critic_tf(tuple(self._norm_inputs(states, goals))).numpy().astype(np.float64)

    def _log_val(self, s, g):
        val = self.model.critic_np(self._decision_inputs(s, g))[0]
        self.env.log_val(self.id, float((1 - self.config.discount) * val))


def input_spec(sizes):
    """TensorSpecs of a network's float32 inputs (batches of the given widths)."""
    return tuple(tf.TensorSpec([None, n], tf.float32) for n in sizes)
