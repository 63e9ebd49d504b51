"""Agents by AgentType: the registry the agent files' "AgentType" key selects from.

Entries name a module and class, imported on first use, so an agent type's module (and its
dependencies) loads only when a file asks for it. A class declares its config schema as CONFIG.
"""
from importlib import import_module

from learning.configs.config import ConfigError, config_from_dict, read_agent_file
from util.paths import resolve_data_path

AGENT_TYPES = {
    "PPO": "learning.agents.ppo_agent:PPOAgent",
    "AMP": "learning.agents.amp_agent:AMPAgent",
    "Goals": "learning.agents.goals_agent:GoalsAgent",
    "GoalsAMP": "learning.agents.goals_amp_agent:GoalsAMPAgent",
    "GAIL": "learning.agents.gail_agent:GAILAgent",
}


def agent_class(agent_type, source):
    if agent_type not in AGENT_TYPES:
        raise ConfigError(f"{source}: AgentType: unknown agent type {agent_type!r} "
                          f"(known: {', '.join(AGENT_TYPES)})")
    module_name, class_name = AGENT_TYPES[agent_type].split(":")
    return getattr(import_module(module_name), class_name)


def load_agent_config(agent_file):
    """(agent class, validated config, resolved path) of an agent file (found like other data
    files: as given, in the project, in the pybullet wheel's data)."""
    path = resolve_data_path(agent_file)
    data = read_agent_file(path)
    if not isinstance(data, dict) or "AgentType" not in data:
        raise ConfigError(f"{path}: AgentType: required key missing")
    cls = agent_class(data["AgentType"], path)
    return cls, config_from_dict(cls.CONFIG, data, path), path


def build_agent(world, id, agent_file):
    """The agent of an agent file, given what its class needs from the world besides the env (a
    class with NEEDS_DEMOS gets the world's demonstrations as `demos`)."""
    cls, config, path = load_agent_config(agent_file)
    try:
        inputs = {"demos": world.load_demos(id, config.agent_type)} if cls.NEEDS_DEMOS else {}
        return cls(world, id, config, **inputs)
    except ConfigError as err:      # checks that need the env or the number of ranks
        raise ConfigError(f"{path}: {err}") from None
