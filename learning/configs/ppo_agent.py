"""PPOAgent's config: DeepMimic's PPO step (learning/solvers/ppo_step.py)."""
from dataclasses import dataclass

from learning.configs.config import key
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
        for json_key, val in (("Epochs", self.epochs), ("BatchSize", self.batch_size)):
            if val < 1:
                yield json_key, f"must be >= 1, got {val}"
        if not 0 <= self.td_lambda <= 1:
            yield "TDLambda", f"must be in [0, 1], got {self.td_lambda}"
        if self.ratio_clip <= 0:
            yield "RatioClip", f"must be > 0, got {self.ratio_clip}"
        if self.norm_adv_clip <= 0:
            yield "NormAdvClip", f"must be > 0, got {self.norm_adv_clip}"
        if not 0 < self.actor_stepsize_decay <= 1:
            yield "ActorStepsizeDecay", f"must be in (0, 1], got {self.actor_stepsize_decay}"
        for json_key, name in (("ActorOptimizer", self.actor_optimizer), ("CriticOptimizer", self.critic_optimizer)):
            if name not in OPTIMIZERS:
                yield json_key, f"must be one of {', '.join(OPTIMIZERS)}, got {name!r}"
