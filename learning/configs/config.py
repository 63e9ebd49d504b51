"""Validated agent files: one frozen dataclass per agent type (learning/configs/<agent>.py, named
as the agent's module in learning/agents/), built from the agent JSON by config_from_dict.

Each field names its JSON key (DeepMimic's spelling) and holds the one default. Unknown keys,
missing required keys, wrong types and out-of-range values are ConfigError("<file>: <key>: ...").
Keys that older DeepMimic files carry but no 2021 agent reads (LEGACY_KEYS) are accepted and
ignored, so the pybullet wheel's agent file still loads. A subclass (e.g. the AMP agent's) adds
fields with `key(...)` and checks with `problems()`.
"""
import math
from dataclasses import MISSING, field, fields, is_dataclass
from typing import get_args, get_origin, get_type_hints

from util.paths import load_json


class ConfigError(ValueError):
    """An invalid agent file; the message names the file and the key."""


RANGES = {">= 0": lambda v: v >= 0, ">= 1": lambda v: v >= 1, ">= 2": lambda v: v >= 2, "> 0": lambda v: v > 0,
          "in [0, 1)": lambda v: 0 <= v < 1, "in [0, 1]": lambda v: 0 <= v <= 1,
          "in (0, 1]": lambda v: 0 < v <= 1, "in (0, 1)": lambda v: 0 < v < 1}


def range_problems(requirement, *pairs):
    """(json key, "must be <requirement>, got <value>") for each (json key, value) outside the
    range RANGES[requirement]; a value of None (an optional key not given) is not checked."""
    inside = RANGES[requirement]
    for json_key, val in pairs:
        if val is not None and not inside(val):
            yield json_key, f"must be {requirement}, got {val}"


def key(json_key, default=MISSING):
    """A config field read from `json_key`; no default means required."""
    if is_dataclass(default):
        return field(default_factory=lambda: default, metadata={"key": json_key})
    return field(default=default, metadata={"key": json_key})


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
    elif get_origin(typ) is tuple:      # tuple[item, ...]: a JSON list
        if not isinstance(val, list):
            raise ConfigError(f"{where}: expects a list, got {val!r}")
        return tuple(_convert(get_args(typ)[0], v, f"{where}[{i}]") for i, v in enumerate(val))
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
