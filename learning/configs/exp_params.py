"""Exploration parameters: Rate (probability of a sampled rather than mean action) and Noise (the
policy's std in normalised action units); annealed linearly from ExpParamsBeg to ExpParamsEnd over
ExpAnnealSamples samples."""
from dataclasses import dataclass, field
from typing import ClassVar


@dataclass(frozen=True, kw_only=True)
class ExpParams:
    rate: float = field(default=0.2, metadata={"key": "Rate"})
    noise: float = field(default=0.1, metadata={"key": "Noise"})

    LEGACY_KEYS: ClassVar[tuple] = ("InitActionRate", "NoiseInternal", "Temp")  # 2018 files; unused

    def lerp(self, other, t):
        return ExpParams(rate=self.rate + t * (other.rate - self.rate),
                         noise=self.noise + t * (other.noise - self.noise))

    def problems(self):
        if not 0 <= self.rate <= 1:
            yield "Rate", f"must be in [0, 1], got {self.rate}"
        if self.noise <= 0:
            yield "Noise", f"must be > 0, got {self.noise}"
