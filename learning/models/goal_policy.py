"""The goal hierarchy's goal policy: a categorical actor over NumGoals goals and a critic, both over
[normalised state, (normalised env goal)] (GoalPolicyState false: the env goal alone), in TF and
as a numpy mirror (refresh_mirror).

TF1 names: agent/goal/actor/{trunk}, agent/goal/actor/logits/{kernel,bias},
agent/goal/critic/{trunk}, agent/goal/critic/dense/{kernel,bias}.
"""
import numpy as np

from learning.goals_util import softmax_np
from learning.models.actor_critic import ActorCriticBase, build_critic
from learning.nets.net import Net, TrunkHead, uniform_init
from learning.nets.net_builder import build_net

GOAL_SCOPE = "agent/goal"


class LogitsHead(Net):
    def __init__(self, in_size, num_goals, scope):
        super().__init__(scope)
        self.out = self.add_dense("logits", in_size, num_goals, uniform_init(0.01))

    def forward(self, ops, params, inputs):
        return self.dense(ops, params, self.out, inputs[0])


class GoalPolicy(ActorCriticBase):
    """The categorical actor's output is the goals' logits (logits, probs_np)."""

    def __init__(self, actor_net, critic_net, input_sizes, num_goals):
        trunk = build_net(actor_net, input_sizes, f"{GOAL_SCOPE}/actor")
        super().__init__(TrunkHead(trunk, LogitsHead(trunk.out_size, num_goals, f"{GOAL_SCOPE}/actor")),
                         build_critic(critic_net, input_sizes, f"{GOAL_SCOPE}/critic"))

    logits = ActorCriticBase.actor_out

    def probs_np(self, inputs):
        return softmax_np(self.actor_out_np(inputs).astype(np.float64))
