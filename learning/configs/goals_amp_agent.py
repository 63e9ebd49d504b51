"""GoalsAMPAgent's config: the goal hierarchy's keys and the AMP discriminator's, one schema
(learning/agents/goals_amp_agent.py)."""
from dataclasses import dataclass

from learning.configs.amp_agent import AMPAgentConfig
from learning.configs.goals_agent import GoalsAgentConfig


@dataclass(frozen=True, kw_only=True)
class GoalsAMPAgentConfig(GoalsAgentConfig, AMPAgentConfig):
    pass
