"""Agent files: the validated schema, defaults, errors naming the file and key."""
import json
import math

import pybullet_data
import pytest

from learning.agent_builder import load_agent_config
from learning.agents.ppo_agent import PPOAgent
from learning.configs.config import ConfigError, config_from_dict
from learning.configs.ppo_agent import PPOAgentConfig
from learning.nets.net_builder import NETS
from util.paths import project_root

BASE = {"AgentType": "PPO", "ActorNet": "fc_2layers_1024units", "CriticNet": "fc_2layers_1024units"}


def load(tmp_path, **entries):
    path = tmp_path / "agent.txt"
    path.write_text(json.dumps({**BASE, **entries}))
    return load_agent_config(path)


def test_project_agent_file_has_2021_values():
    cls, cfg, _ = load_agent_config("data/agents/ct_agent_humanoid_ppo.txt")
    assert cls is PPOAgent
    assert (cfg.actor_stepsize, cfg.critic_stepsize, cfg.discount) == (2e-6, 5e-4, 0.95)
    assert (cfg.batch_size, cfg.mini_batch_size, cfg.replay_buffer_size) == (4096, 256, 1_000_000)
    assert (cfg.norm_adv_clip, cfg.td_lambda, cfg.actor_weight_decay) == (4, 0.95, 5e-4)
    assert (cfg.output_iters, cfg.int_output_iters, cfg.test_episodes) == (10, 200, 32)
    assert (cfg.exp_params_beg.rate, cfg.exp_params_end.rate, cfg.exp_params_end.noise) == (1, 0.2, 0.05)


@pytest.mark.parametrize("name", sorted(p.name for p in (project_root() / "data/agents").glob("*.txt")))
def test_every_shipped_agent_file_passes_its_schema(name):
    """A recipe file a user is pointed to loads: known keys, values in range, a registered net."""
    cls, cfg, _ = load_agent_config(f"data/agents/{name}")
    assert cls.__name__.upper().startswith(cfg.agent_type.upper())
    assert cfg.actor_net in NETS and cfg.critic_net in NETS


def test_the_half_width_recipe_differs_from_the_recipe_only_in_its_nets():
    fast, half = (json.loads((project_root() / f"data/agents/ct_agent_humanoid_ppo_fast{s}.txt").read_text())
                  for s in ("", "512"))
    assert {k for k in fast if fast[k] != half[k]} == {"ActorNet", "CriticNet"} and fast.keys() == half.keys()
    assert half["ActorNet"] == half["CriticNet"] == "fc_2layers_512units"


def test_wheel_agent_file_loads_with_legacy_keys():
    path = f"{pybullet_data.getDataPath()}/data/agents/ct_agent_humanoid_ppo.txt"
    _, cfg, _ = load_agent_config(path)      # UpdatePeriod, InitActionRate, NoiseInternal, Temp
    assert cfg.critic_stepsize == 0.01 and cfg.replay_buffer_size == 500000


def test_defaults_in_one_place(tmp_path):
    _, cfg, _ = load(tmp_path)
    assert cfg == PPOAgentConfig(agent_type="PPO", actor_net="fc_2layers_1024units",
                                 critic_net="fc_2layers_1024units")
    assert cfg.normalizer_samples == math.inf and cfg.norm_adv_clip == 5 and cfg.init_samples == 1000


def test_integral_floats_are_integers(tmp_path):
    _, cfg, _ = load(tmp_path, ReplayBufferSize=1e6)
    assert cfg.replay_buffer_size == 1000000 and isinstance(cfg.replay_buffer_size, int)


@pytest.mark.parametrize("entries,message", [
    ({"ActorStepSize": 1e-3}, "agent.txt: ActorStepSize: unknown key"),
    ({"BatchSize": "4096"}, "agent.txt: BatchSize: expects an integer, got '4096'"),
    ({"BatchSize": 4096.5}, "agent.txt: BatchSize: expects an integer"),
    ({"Discount": True}, "agent.txt: Discount: expects a number, got True"),
    ({"ActorNet": 3}, "agent.txt: ActorNet: expects a string"),
    ({"ExpParamsBeg": {"Rate": 1, "Nois": 0.1}}, "agent.txt: ExpParamsBeg.Nois: unknown key"),
    ({"ExpParamsBeg": {"Rate": "high"}}, "agent.txt: ExpParamsBeg.Rate: expects a number"),
    ({"ExpParamsBeg": 1}, "agent.txt: ExpParamsBeg: expects an object"),
    ({"Discount": 1.0}, r"agent.txt: Discount: must be in \[0, 1\)"),
    ({"TDLambda": -0.1}, "agent.txt: TDLambda: must be in"),
    ({"MiniBatchSize": 0}, "agent.txt: MiniBatchSize: must be >= 1"),
    ({"ExpParamsEnd": {"Noise": 0.2}}, "agent.txt: ExpParamsEnd.Noise: must equal ExpParamsBeg.Noise"),
    ({"ExpParamsBeg": {"Rate": 2}}, r"agent.txt: ExpParamsBeg.Rate: must be in \[0, 1\]"),
    ({"CriticNet": "fc_3layers"}, "agent.txt: CriticNet: unknown net 'fc_3layers'"),
    ({"AgentType": "DQN"}, "agent.txt: AgentType: unknown agent type 'DQN'"),
    ({"ActorStepsize": float("nan")}, "agent.txt: NaN is not a finite number"),
    ({"ExpParamsBeg": {"Noise": float("inf")}}, "agent.txt: Infinity is not a finite number"),
    ({"NormalizerSamples": -math.inf}, "agent.txt: -Infinity is not a finite number"),
    ({"ActorStepsize": -1e-3}, "agent.txt: ActorStepsize: must be > 0, got -0.001"),
    ({"ActorWeightDecay": -5e-4}, "agent.txt: ActorWeightDecay: must be >= 0"),
    ({"ActorInitOutputScale": 0}, "agent.txt: ActorInitOutputScale: must be > 0"),
])
def test_errors_name_file_and_key(tmp_path, entries, message):
    with pytest.raises(ConfigError, match=message):
        load(tmp_path, **entries)




def test_required_keys(tmp_path):
    with pytest.raises(ConfigError, match="x.txt: ActorNet: required key missing"):
        config_from_dict(PPOAgentConfig, {"AgentType": "PPO", "CriticNet": "fc_2layers_1024units"}, "x.txt")
    path = tmp_path / "agent.txt"
    path.write_text('{"ActorNet": "fc_2layers_1024units"}')
    with pytest.raises(ConfigError, match="agent.txt: AgentType: required key missing"):
        load_agent_config(path)
    path.write_text('{"AgentType": "PPO",}')
    with pytest.raises(ConfigError, match="agent.txt: not valid JSON"):
        load_agent_config(path)


def test_per_rank_buffer_check_names_file(tmp_path):
    from learning.rl_world import RLWorld
    from tests.toy_env import PointMassEnv, register_small_net, toy_args, write_agent_file
    register_small_net()
    agent_file = write_agent_file(tmp_path / "small.txt", ReplayBufferSize=1000, BatchSize=512)
    with pytest.raises(ConfigError, match="small.txt: ReplayBufferSize: 1000 over 1 rank"):
        RLWorld(PointMassEnv(), toy_args(agent_file))


def test_non_finite_values_given_as_data_name_the_key():
    """Agent data built in code (not read from a file) gets the same check, by key."""
    data = {**BASE, "ActorStepsize": float("nan")}
    with pytest.raises(ConfigError, match="made.txt: ActorStepsize: expects a finite number, got nan"):
        config_from_dict(PPOAgentConfig, data, "made.txt")
