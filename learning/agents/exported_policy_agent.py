"""An agent that acts with an exported policy (DeepMimic.py --policy_file), so that an export can be
watched and evaluated in its scene: every decision is the exported model's action (the mean
action, as in test mode); the agent never trains. It keeps the replaced agent's config (test
episodes, buffer sizes) for RLAgent's bookkeeping.
"""
import numpy as np

from learning.policy_files import load_policy
from learning.agents.rl_agent import RLAgent
from util.logger import Logger


class ExportedPolicyAgent(RLAgent):
    NAME = "Exported"

    def __init__(self, world, id, config, policy_file):
        super().__init__(world, id, config)
        self.policy_file = policy_file
        self.policy = load_policy(policy_file)
        meta = self.policy.metadata
        for name, size in (("state_size", self.get_state_size()), ("goal_size", self.get_goal_size()),
                           ("action_size", self.get_action_size())):
            if meta.get(name) != size:
                raise ValueError(f"{policy_file}: {name} {meta.get(name)} but the scene's is {size} "
                                 f"(exported from {meta.get('source')}, layout {meta.get('layout')})")

    def __str__(self):
        return f"{super().__str__()}, exported policy {self.policy_file}"

    def set_enable_training(self, enable):
        super().set_enable_training(False)

    def _decide_action(self, s, g):
        goal = np.asarray(g)[None] if self.has_goal() else None
        return self.policy(np.asarray(s)[None], goal)[0].astype(np.float64), 0.0


def use_exported_policy(world, policy_file, agent_id=0):
    """Replaces the world's agent `agent_id` by an ExportedPolicyAgent acting with `policy_file`,
    then re-applies the world's training switch (the env goes to test mode)."""
    agent = world.agents[agent_id] if world.agents else None
    if agent is None:
        raise ValueError(f"--policy_file {policy_file}: {type(world.env).__name__} has no agent {agent_id}")
    world.agents[agent_id] = ExportedPolicyAgent(world, agent_id, agent.config, policy_file)
    Logger.print(str(world.agents[agent_id]))
    world.set_enable_training(world.enable_training)
