"""RLAgent's config: the keys every agent file has (DeepMimic's RLAgent)."""
import math
from dataclasses import dataclass
from typing import ClassVar

from learning.configs.config import key, range_problems
from learning.configs.exp_params import ExpParams


@dataclass(frozen=True, kw_only=True)
class RLAgentConfig:
    agent_type: str = key("AgentType")
    iters_per_update: int = key("ItersPerUpdate", 1)
    discount: float = key("Discount", 0.95)
    mini_batch_size: int = key("MiniBatchSize", 32)
    replay_buffer_size: int = key("ReplayBufferSize", 50000)
    init_samples: int = key("InitSamples", 1000)
    normalizer_samples: float = key("NormalizerSamples", math.inf)
    output_iters: int = key("OutputIters", 100)
    int_output_iters: int = key("IntOutputIters", 100)
    sync_check_iters: int = key("SyncCheckIters", 200)     # ranks compare parameter fingerprints
    test_episodes: int = key("TestEpisodes", 0)
    exp_anneal_samples: float = key("ExpAnnealSamples", 320000)
    exp_params_beg: ExpParams = key("ExpParamsBeg", ExpParams())
    exp_params_end: ExpParams = key("ExpParamsEnd", ExpParams())

    LEGACY_KEYS: ClassVar[tuple] = ("UpdatePeriod",)

    def problems(self):
        yield from range_problems("in [0, 1)", ("Discount", self.discount))
        yield from range_problems(">= 1", ("ItersPerUpdate", self.iters_per_update),
                                  ("MiniBatchSize", self.mini_batch_size), ("ReplayBufferSize", self.replay_buffer_size),
                                  ("OutputIters", self.output_iters), ("IntOutputIters", self.int_output_iters),
                                  ("SyncCheckIters", self.sync_check_iters))
        yield from range_problems(">= 0", ("TestEpisodes", self.test_episodes))
        yield from range_problems("> 0", ("ExpAnnealSamples", self.exp_anneal_samples))
        for json_key, params in (("ExpParamsBeg", self.exp_params_beg), ("ExpParamsEnd", self.exp_params_end)):
            for sub_key, problem in params.problems():
                yield f"{json_key}.{sub_key}", problem
        if self.exp_params_end.noise != self.exp_params_beg.noise:
            yield "ExpParamsEnd.Noise", (f"must equal ExpParamsBeg.Noise ({self.exp_params_beg.noise}): "
                                         "the policy's std does not anneal")
