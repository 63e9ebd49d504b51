"""Validated agent files: one frozen dataclass per agent type, built from the agent JSON.

Each field names its JSON key (DeepMimic's spelling) and holds the one default. Unknown keys,
missing required keys, wrong types and out-of-range values are ConfigError("<file>: <key>: ...").
Keys that older DeepMimic files carry but no 2021 agent reads (LEGACY_KEYS) are accepted and
ignored, so the pybullet wheel's agent file still loads. A subclass (e.g. the AMP agent's) adds
fields with `key(...)` and checks with `problems()`.
"""
import math
from dataclasses import MISSING, dataclass, field, fields, is_dataclass
from typing import ClassVar, get_type_hints

from learning.exp_params import ExpParams
from util.paths import load_json


class ConfigError(ValueError):
    """An invalid agent file; the message names the file and the key."""


def key(json_key, default=MISSING):
    """A config field read from `json_key`; no default means required."""
    if is_dataclass(default):
        return field(default_factory=lambda: default, metadata={"key": json_key})
    return field(default=default, metadata={"key": json_key})


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
        if not 0 <= self.discount < 1:
            yield "Discount", f"must be in [0, 1), got {self.discount}"
        for json_key, val in (("ItersPerUpdate", self.iters_per_update),
                              ("MiniBatchSize", self.mini_batch_size),
                              ("ReplayBufferSize", self.replay_buffer_size),
                              ("OutputIters", self.output_iters),
                              ("IntOutputIters", self.int_output_iters),
                              ("SyncCheckIters", self.sync_check_iters)):
            if val < 1:
                yield json_key, f"must be >= 1, got {val}"
        if self.test_episodes < 0:
            yield "TestEpisodes", f"must be >= 0, got {self.test_episodes}"
        if self.exp_anneal_samples <= 0:
            yield "ExpAnnealSamples", f"must be > 0, got {self.exp_anneal_samples}"
        for json_key, params in (("ExpParamsBeg", self.exp_params_beg), ("ExpParamsEnd", self.exp_params_end)):
            for sub_key, problem in params.problems():
                yield f"{json_key}.{sub_key}", problem
        if self.exp_params_end.noise != self.exp_params_beg.noise:
            yield "ExpParamsEnd.Noise", (f"must equal ExpParamsBeg.Noise ({self.exp_params_beg.noise}): "
                                         "the policy's std does not anneal")


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
        from learning.nets.net_builder import NETS
        for json_key, name in (("ActorNet", self.actor_net), ("CriticNet", self.critic_net)):
            if name not in NETS:
                yield json_key, f"unknown net {name!r} (known: {', '.join(sorted(NETS))})"
        for json_key, val in (("ActorStepsize", self.actor_stepsize), ("CriticStepsize", self.critic_stepsize)):
            if val <= 0:
                yield json_key, f"must be > 0, got {val}"
        for json_key, val in (("ActorMomentum", self.actor_momentum), ("CriticMomentum", self.critic_momentum)):
            if not 0 <= val < 1:
                yield json_key, f"must be in [0, 1), got {val}"
        for json_key, val in (("ActorWeightDecay", self.actor_weight_decay),
                              ("CriticWeightDecay", self.critic_weight_decay)):
            if val < 0:
                yield json_key, f"must be >= 0, got {val}"
        if self.actor_init_output_scale <= 0:
            yield "ActorInitOutputScale", f"must be > 0, got {self.actor_init_output_scale}"


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

    OPTIMIZERS: ClassVar[tuple] = ("SGD", "Adam")

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
            if name not in self.OPTIMIZERS:
                yield json_key, f"must be one of {', '.join(self.OPTIMIZERS)}, got {name!r}"


def _convert(typ, val, where):
    if is_dataclass(typ):
        if not isinstance(val, dict):
            raise ConfigError(f"{where}: expects an object, got {val!r}")
        return _build(typ, val, where + ".")
    if typ is bool:
        if isinstance(val, bool):
            return val
    elif typ is int:
        if isinstance(val, int) and not isinstance(val, bool):
            return val
        if isinstance(val, float) and val.is_integer():
            return int(val)
    elif typ is float:
        if isinstance(val, (int, float)) and not isinstance(val, bool):
            if not math.isfinite(val):      # json reads NaN and Infinity; no key takes them
                raise ConfigError(f"{where}: expects a finite number, got {val!r}")
            return float(val)
    elif typ is str:
        if isinstance(val, str):
            return val
    else:
        raise TypeError(f"unsupported config field type {typ}")
    names = {bool: "true or false", int: "an integer", float: "a number", str: "a string"}
    raise ConfigError(f"{where}: expects {names[typ]}, got {val!r}")


def _build(cls, data, prefix):
    """cls from the JSON object `data`; prefix is "<file>: " plus any parent key."""
    by_key = {f.metadata["key"]: f for f in fields(cls)}
    for json_key in data:
        if json_key not in by_key and json_key not in cls.LEGACY_KEYS:
            raise ConfigError(f"{prefix}{json_key}: unknown key (known: {', '.join(by_key)})")
    hints = get_type_hints(cls)
    kwargs = {}
    for json_key, f in by_key.items():
        if json_key in data:
            kwargs[f.name] = _convert(hints[f.name], data[json_key], prefix + json_key)
        elif f.default is MISSING and f.default_factory is MISSING:
            raise ConfigError(f"{prefix}{json_key}: required key missing")
    return cls(**kwargs)


def config_from_dict(cls, data, source):
    """A validated `cls` from a parsed agent file; `source` names the file in errors."""
    if not isinstance(data, dict):
        raise ConfigError(f"{source}: an agent file holds one JSON object")
    config = _build(cls, data, f"{source}: ")
    for json_key, problem in config.problems():
        raise ConfigError(f"{source}: {json_key}: {problem}")
    return config


def read_agent_file(path):
    """The JSON object of an agent file; ConfigError naming the file on a syntax error."""
    return load_json(path, ConfigError)[1]
