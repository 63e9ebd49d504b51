"""PPOAgent's config: DeepMimic's PPO step (learning/solvers/ppo_step.py)."""
from dataclasses import dataclass

from learning.configs.config import key, range_problems
from learning.configs.pg_agent import PGAgentConfig
from learning.solvers.solver_builder import OPTIMIZERS


@dataclass(frozen=True, kw_only=True)
class PPOAgentConfig(PGAgentConfig):
    epochs: int = key("Epochs", 1)
    batch_size: int = key("BatchSize", 1024)
    ratio_clip: float = key("RatioClip", 0.2)
    norm_adv_clip: float = key("NormAdvClip", 5.0)
    td_lambda: float = key("TDLambda", 0.95)
    tar_clip_frac: float = key("TarClipFrac", -1.0)           # < 0: the actor's step size is fixed
    actor_stepsize_decay: float = key("ActorStepsizeDecay", 0.5)
    actor_optimizer: str = key("ActorOptimizer", "SGD")       # SGD: momentum SGD (DeepMimic); Adam
    critic_optimizer: str = key("CriticOptimizer", "SGD")

    def problems(self):
        yield from super().problems()
        yield from range_problems(">= 1", ("Epochs", self.epochs), ("BatchSize", self.batch_size))
        yield from range_problems("in [0, 1]", ("TDLambda", self.td_lambda))
        yield from range_problems("> 0", ("RatioClip", self.ratio_clip), ("NormAdvClip", self.norm_adv_clip))
        yield from range_problems("in (0, 1]", ("ActorStepsizeDecay", self.actor_stepsize_decay))
        for json_key, name in (("ActorOptimizer", self.actor_optimizer), ("CriticOptimizer", self.critic_optimizer)):
            if name not in OPTIMIZERS:
                yield json_key, f"must be one of {', '.join(OPTIMIZERS)}, got {name!r}"
