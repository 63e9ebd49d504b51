"""The goal hierarchy's inverse model: from a transition (s_t, s_t+1) it predicts the action a_t
and the goal g_t that produced it; its errors give the action policy's stability reward.

Units: states enter normalised (s_norm), actions are in normalised action units (a_norm), goals
are one-hot vectors of NumGoals entries; the goal head gives a softmax distribution g_pred.

p(a) is the action's likelihood under the policy *relative to the policy's peak*:
    p(a) = exp(logp - logp_at_mean) = exp(-0.5 |z|^2),  z = (a - mean) / std,  in (0, 1]
(the raw density exp(logp) of a narrow Gaussian is far above 1, so it cannot weigh an error).

Loss (per sample, then averaged over the batch):
    action_error = a - a_pred                                         (action_size,)
    goal_error   = (g - g_pred) * (mean_i |action_error_i| * p(a) + InverseModelGoalErrorBase)
    loss = mean(action_error^2) + mean(goal_error^2)
The goal error's weight is a constant of the step (stop_gradient): the goal head is corrected more
where the action is badly predicted but likely, never less than the base, and the action head is
not pushed to change its error to shrink the goal term.

Stability reward of a transition (the action policy's reward; in [-1, 1]):
    e_g = 1 - g_pred[g]                              (goal error: 0 when the goal is identified)
    e_a = tanh(mean_i |action_error_i|) * p(a)       (action error, in [0, 1))
    penalty   = GoalErrorFactor * e_g * (1 - e_a) + ActionErrorFactor * e_a * (1 - e_g)
    stability = clip(1 - (1 - ActionErrorDiscount * e_a) * penalty, -1, 1)
With both factors 1 and no discount this is the reference code's S = 1 + 2 e_a e_g - e_a - e_g.
ActionErrorDiscount in [0, 1] shrinks the penalty where the action is poorly predicted (new
regions the policy explores).

TF1 names: agent/inverse/{trunk}, agent/inverse/action/{kernel,bias},
agent/inverse/goal_logits/{kernel,bias}.
"""
import numpy as np
import tensorflow as tf

from learning.nets.net import TF_OPS, Net, uniform_init
from learning.nets.net_builder import build_net

INVERSE_SCOPE = "agent/inverse"


class InverseHeads(Net):
    def __init__(self, in_size, action_size, num_goals, scope):
        super().__init__(scope)
        self.action = self.add_dense("action", in_size, action_size, uniform_init(0.01))
        self.goal_logits = self.add_dense("goal_logits", in_size, num_goals, uniform_init(0.01))

    def forward(self, ops, params, inputs):
        h = inputs[0]
        return self.dense(ops, params, self.action, h), self.dense(ops, params, self.goal_logits, h)


class InverseModel:
    """(a_pred, goal_logits) of (normalised s_t, normalised s_t+1)."""

    def __init__(self, net_name, state_size, action_size, num_goals):
        self.trunk = build_net(net_name, [state_size, state_size], INVERSE_SCOPE)
        self.heads = InverseHeads(self.trunk.out_size, action_size, num_goals, INVERSE_SCOPE)
        self.variables = {**self.trunk.variables, **self.heads.variables}
        self.trainable_variables = self.trunk.trainable_variables() + self.heads.trainable_variables()

    def _run(self, ops, params, s0, s1):
        return self.heads.forward(ops, params, [self.trunk.forward(ops, params, [s0, s1])])

    def __call__(self, s0, s1):
        return self._run(TF_OPS, self.variables, s0, s1)


def softmax_np(logits):
    z = logits - logits.max(axis=-1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=-1, keepdims=True)


def relative_likelihood(logp, logp_at_mean):
    """p(a) = exp(logp - logp_at_mean), in (0, 1]."""
    return np.exp(np.minimum(np.asarray(logp, dtype=np.float64) - logp_at_mean, 0.0))


def inverse_model_loss(a, a_pred, g, g_pred, p_a, goal_error_base):
    """(loss, action_error, goal_error) of batches (TF or numpy-convertible tensors); see the module
    docstring. a, a_pred: (n, action_size); g (one-hot), g_pred (probabilities): (n, num_goals);
    p_a: (n,)."""
    action_error = a - a_pred
    weight = tf.stop_gradient(tf.reduce_mean(tf.abs(action_error), axis=-1) * p_a + goal_error_base)
    goal_error = (g - g_pred) * weight[:, None]
    loss = tf.reduce_mean(tf.square(action_error)) + tf.reduce_mean(tf.square(goal_error))
    return loss, action_error, goal_error


def stability_reward(a, a_pred, goal_ids, g_pred, p_a, goal_error_factor, action_error_factor,
                     action_error_discount):
    """Stability rewards (n,) of n transitions (numpy); see the module docstring."""
    a, a_pred, g_pred = (np.asarray(x, dtype=np.float64) for x in (a, a_pred, g_pred))
    goal_ids = np.asarray(goal_ids, dtype=np.int64)
    e_g = 1.0 - g_pred[np.arange(goal_ids.size), goal_ids]
    e_a = np.tanh(np.mean(np.abs(a - a_pred), axis=-1)) * np.asarray(p_a, dtype=np.float64)
    penalty = goal_error_factor * e_g * (1 - e_a) + action_error_factor * e_a * (1 - e_g)
    return np.clip(1.0 - (1.0 - action_error_discount * e_a) * penalty, -1.0, 1.0)
