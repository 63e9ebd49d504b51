"""PGAgent's config: the actor and the critic (DeepMimic's PGAgent)."""
from dataclasses import dataclass

from learning.configs.config import key, range_problems
from learning.configs.rl_agent import RLAgentConfig
from learning.nets.net_builder import NETS


@dataclass(frozen=True, kw_only=True)
class PGAgentConfig(RLAgentConfig):
    actor_net: str = key("ActorNet")
    actor_stepsize: float = key("ActorStepsize", 0.001)
    actor_momentum: float = key("ActorMomentum", 0.9)
    actor_weight_decay: float = key("ActorWeightDecay", 0.0)
    actor_init_output_scale: float = key("ActorInitOutputScale", 1.0)
    critic_net: str = key("CriticNet")
    critic_stepsize: float = key("CriticStepsize", 0.01)
    critic_momentum: float = key("CriticMomentum", 0.9)
    critic_weight_decay: float = key("CriticWeightDecay", 0.0)

    def problems(self):
        yield from super().problems()
        yield from net_problems(("ActorNet", self.actor_net), ("CriticNet", self.critic_net))
        yield from range_problems("> 0", ("ActorStepsize", self.actor_stepsize), ("CriticStepsize", self.critic_stepsize))
        yield from range_problems("in [0, 1)", ("ActorMomentum", self.actor_momentum),
                                  ("CriticMomentum", self.critic_momentum))
        yield from range_problems(">= 0", ("ActorWeightDecay", self.actor_weight_decay),
                                  ("CriticWeightDecay", self.critic_weight_decay))
        yield from range_problems("> 0", ("ActorInitOutputScale", self.actor_init_output_scale))


def net_problems(*keys_and_names):
    """(key, problem) for each (json key, net name) whose net is not registered (net_builder.NETS)."""
    for json_key, name in keys_and_names:
        if name not in NETS:
            yield json_key, f"unknown net {name!r} (known: {', '.join(sorted(NETS))})"
