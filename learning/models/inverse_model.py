"""The goal hierarchy's inverse model: from a transition (s_t, s_t+1) it predicts the action a_t
and the goal g_t that produced it.

Units: states enter normalised (s_norm); the action head predicts normalised action units (a_norm);
the goal head gives NumGoals logits. Its loss and the stability reward built from its errors are
learning/goals_util.py's.

With goal entries (InverseModelGoalInputs: indices into the state) the goal head has a trunk of
its own over those entries of s_t and s_t+1, so a goal is told only by what they show; without,
both heads share one trunk over the whole transition.

TF1 names: agent/inverse/{trunk}, agent/inverse/action/{kernel,bias},
agent/inverse/goal_logits/{kernel,bias}; with goal entries the goal head's are
agent/inverse_goal/{trunk}, agent/inverse_goal/goal_logits/{kernel,bias}.
"""
import tensorflow as tf

from learning.nets.net import TF_OPS, Net, TrunkHead, uniform_init
from learning.nets.net_builder import build_net

INVERSE_SCOPE = "agent/inverse"
INVERSE_GOAL_SCOPE = "agent/inverse_goal"


class InverseHeads(Net):
    """The action head, and the goal head unless num_goals is 0 (a separate goal trunk's)."""

    def __init__(self, in_size, action_size, num_goals, scope):
        super().__init__(scope)
        self.action = self.add_dense("action", in_size, action_size, uniform_init(0.01)) if action_size else None
        self.goal_logits = self.add_dense("goal_logits", in_size, num_goals, uniform_init(0.01)) if num_goals else None

    def forward(self, ops, params, inputs):
        h = inputs[0]
        return tuple(self.dense(ops, params, layer, h) for layer in (self.action, self.goal_logits) if layer)


class InverseModel(TrunkHead):
    """(a_pred, goal_logits) of (normalised s_t, normalised s_t+1)."""

    def __init__(self, net_name, state_size, action_size, num_goals, goal_entries=()):
        self.goal_entries = tf.constant(list(goal_entries), tf.int32)
        split = len(goal_entries) > 0
        trunk = build_net(net_name, [state_size, state_size], INVERSE_SCOPE)
        super().__init__(trunk, InverseHeads(trunk.out_size, action_size, 0 if split else num_goals, INVERSE_SCOPE))
        self.goal_net = None
        if split:
            goal_trunk = build_net(net_name, [len(goal_entries)] * 2, INVERSE_GOAL_SCOPE)
            self.goal_net = TrunkHead(goal_trunk, InverseHeads(goal_trunk.out_size, 0, num_goals, INVERSE_GOAL_SCOPE))
            self.variables = {**self.variables, **self.goal_net.variables}
            self.trainable_variables = self.trainable_variables + self.goal_net.trainable_variables

    def __call__(self, s0, s1):
        if self.goal_net is None:
            return self.forward(TF_OPS, self.variables, [s0, s1])
        (a_pred,) = self.forward(TF_OPS, self.variables, [s0, s1])
        (logits,) = self.goal_net.forward(TF_OPS, self.variables, [tf.gather(s, self.goal_entries, axis=1)
                                                                   for s in (s0, s1)])
        return a_pred, logits
