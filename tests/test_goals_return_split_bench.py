"""tests/bench/goals_return_split.py: an episode's return split at its arrival on a spot, played on
goals_check's test starts."""
import json

import pytest

from tests.bench.goals_check import AGENT, PPO_KEYS, ROOT, run_eval, train
from tests.bench.goals_return_split import main, split_episode


def test_an_episode_splits_at_its_arrival():
    s = split_episode([0.2, 0.6, 0.95, 0.99, 0.97], [3.0, 3.0, 1.0, 0.5, 0.5])
    assert s["arrival"] == 2 and s["decisions"] == 5
    assert s["travel_loss"] == pytest.approx(0.8 + 0.4) and s["hold_loss"] == pytest.approx(0.05 + 0.01 + 0.03)
    assert s["return"] == pytest.approx(5 - s["travel_loss"] - s["hold_loss"])
    assert s["hold_speed"] == pytest.approx(2.0 / 3.0)


def test_an_episode_that_never_arrives_is_all_travel():
    s = split_episode([0.1, 0.9], [2.0, 2.0])
    assert s["arrival"] == 2 and s["hold_loss"] == 0 and s["hold_speed"] is None
    assert s["travel_loss"] == pytest.approx(1.0)


def saved_agent(data, folder, seed):
    world, agent, *_ = train(data, folder, 0, seed)
    agent.save_model(str(folder / "agent0_model.ckpt"))
    world.shutdown()
    return folder


def test_agents_split_on_goals_checks_test_starts(tmp_path):
    goals_data = json.loads((ROOT / AGENT).read_text())
    ppo_data = {"AgentType": "PPO", **{k: goals_data[k] for k in PPO_KEYS}}
    hier = saved_agent(goals_data, tmp_path / "goals", 3)
    flat = saved_agent(ppo_data, tmp_path / "ppo", 3)
    out = tmp_path / "split.json"
    main(["--agent", f"hierarchy={hier}", "--agent", f"flat={flat}", "--seed", "3", "--episodes", "2",
          "--json", str(out)])
    result = json.loads(out.read_text())
    for name, folder, data in (("hierarchy", hier, goals_data), ("flat", flat, ppo_data)):
        episodes = result["agents"][name]["episodes"]
        assert len(episodes) == 2
        for e in episodes:
            assert e["return"] == pytest.approx(e["decisions"] - e["travel_loss"] - e["hold_loss"])
        # the same episodes as goals_check's test: its mean return from the same checkpoint
        world, agent, _, evaluate, np = train(data, tmp_path / f"{name}_again", 0, 3,
                                              model_file=folder / "agent0_model.ckpt")
        expected, _ = run_eval(world, agent, 2, 3, evaluate, np)
        world.shutdown()
        assert result["agents"][name]["mean"]["return"] == pytest.approx(expected, rel=1e-9)


def test_an_agent_folder_without_a_checkpoint_is_one_clear_error(tmp_path, capsys):
    with pytest.raises(SystemExit):
        main(["--agent", f"flat={tmp_path}"])
    assert f"--agent flat={tmp_path}: expected NAME=DIR" in capsys.readouterr().err
