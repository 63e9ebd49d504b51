"""Exploration parameters: Rate (probability of a sampled rather than mean action) and Noise (the
policy's std in normalised action units); annealed linearly from ExpParamsBeg to ExpParamsEnd over
ExpAnnealSamples samples."""
from dataclasses import dataclass, field
from typing import ClassVar

from learning.configs.config import range_problems


@dataclass(frozen=True, kw_only=True)
class ExpParams:
    rate: float = field(default=0.2, metadata={"key": "Rate"})
    noise: float = field(default=0.1, metadata={"key": "Noise"})

    LEGACY_KEYS: ClassVar[tuple] = ("InitActionRate", "NoiseInternal", "Temp")  # 2018 files; unused

    def lerp(self, other, t):
        return ExpParams(rate=self.rate + t * (other.rate - self.rate),
                         noise=self.noise + t * (other.noise - self.noise))

    def problems(self):
        yield from range_problems("in [0, 1]", ("Rate", self.rate))
        yield from range_problems("> 0", ("Noise", self.noise))
