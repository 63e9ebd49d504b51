"""The goal hierarchy's inverse model: from a transition (s_t, s_t+1) it predicts the action a_t
and the goal g_t that produced it.

Units: states enter normalised (s_norm); the action head predicts normalised action units (a_norm);
the goal head gives NumGoals logits. Its loss and the stability reward built from its errors are
learning/goals_util.py's.

TF1 names: agent/inverse/{trunk}, agent/inverse/action/{kernel,bias},
agent/inverse/goal_logits/{kernel,bias}.
"""
from learning.nets.net import TF_OPS, Net, TrunkHead, uniform_init
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


class InverseModel(TrunkHead):
    """(a_pred, goal_logits) of (normalised s_t, normalised s_t+1)."""

    def __init__(self, net_name, state_size, action_size, num_goals):
        trunk = build_net(net_name, [state_size, state_size], INVERSE_SCOPE)
        super().__init__(trunk, InverseHeads(trunk.out_size, action_size, num_goals, INVERSE_SCOPE))

    def __call__(self, s0, s1):
        return self.forward(TF_OPS, self.variables, [s0, s1])
