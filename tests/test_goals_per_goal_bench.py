"""tests/bench/goals_per_goal.py: travel speed and turn rate against a circle and a line written
out by formula; each goal held through its episodes, reported per goal, as a JSON."""
import json

import numpy as np
import pytest

from tests.bench.goals_per_goal import main, travel_speed_and_turn_rate


@pytest.mark.parametrize("turn", [0.4, -0.25, 0.0])
def test_speed_and_turn_rate_of_a_circle(turn):
    """Heading h = turn t (DeepMimic's: direction (cos h, 0, -sin h), left positive), speed 1.5:
    the positions integrate that velocity in closed form."""
    speed, dt = 1.5, 1 / 600
    t = np.arange(0, 10 + dt / 2, dt)
    h = turn * t
    if turn:
        points = np.stack([speed / turn * np.sin(h), np.zeros_like(t), speed / turn * (np.cos(h) - 1)], axis=1)
    else:
        points = np.stack([speed * t, np.zeros_like(t), np.zeros_like(t)], axis=1)
    points += [0.3, 0.9, -2.0]
    got_speed, got_turn = travel_speed_and_turn_rate(points, dt, window=1.0)
    assert got_speed == pytest.approx(speed, rel=1e-5)
    assert got_turn == pytest.approx(turn, abs=1e-9)


def test_each_goal_held_and_reported(tmp_path):
    from tests.test_goals_agent import make_world
    world = make_world(tmp_path)            # an untrained hierarchy on goals_point
    world.save_outputs()
    world.shutdown()
    out = tmp_path / "per_goal.json"
    main(["--arg_file", "args/train_goals_goals_point_args.txt", "--model_files",
          str(tmp_path / "out" / "agent0_model.ckpt"), "--episodes", "2", "--episode_time", "1", "--json", str(out)])
    report = json.loads(out.read_text())
    assert sorted(report["goals"]) == ["0", "1", "2", "3"] and report["chance"] == 0.25
    for r in report["goals"].values():
        assert r["goal_held"] and r["mean_length_s"] == pytest.approx(1.0, abs=1 / 60)
        assert 0 <= r["inverse_acc"] <= 1 and r["speed"] >= 0 and 0 <= r["falls"] <= 2
