"""The goals_point scene through DeepMimicEnv: sizes, decision period, spot reward, arena Fail,
reset starts, and that it runs thousands of env updates per second of CPU time."""

import numpy as np
import pytest

from env.deepmimic_env import DeepMimicEnv
from env.env import Terminate
from util.arg_parser import load_args
from util.paths import project_root

ARGS = str(project_root() / "args/train_goals_goals_point_args.txt")
DT = 1 / 120          # num_update_substeps 2 in the args file


@pytest.fixture
def env():
    e = DeepMimicEnv(load_args(["--arg_file", ARGS]), seed=0)
    yield e
    e.shutdown()


def test_sizes_and_bounds(env):
    assert env.get_num_agents() == 1 and env.get_num_update_substeps() == 2
    assert (env.get_state_size(0), env.get_goal_size(0), env.get_action_size(0)) == (4, 0, 2)
    np.testing.assert_array_equal(env.build_action_bound_min(0), [-1, -1])
    np.testing.assert_array_equal(env.build_action_bound_max(0), [1, 1])
    assert (env.get_reward_min(0), env.get_reward_max(0)) == (0.0, 1.0)
    assert env.get_layout_desc(0) == {}       # sizes only: the layout is "2021" (checkpoint names)


def test_decision_every_four_updates_and_motion(env):
    assert env.need_new_action(0)
    s0 = env.record_state(0)
    assert np.all(np.abs(s0[:2]) <= 1) and np.all(s0[2:] == 0)
    counts = []
    for k in range(3):
        env.set_action(0, np.array([1.0, 0.0]))
        counts.append(env.advance(DT, 10))
        assert env.need_new_action(0)
        # F = 60 a - 20 v on a 1 kg body, 4 explicit updates of 1/120 s per decision from rest:
        # v = 3 (1 - (5/6)^(4 (k + 1))), half way to the commanded 3 m/s within one decision
        assert env.record_state(0)[2] == pytest.approx(3 * (1 - (5 / 6) ** (4 * (k + 1))), rel=2e-2)
    assert counts == [4, 4, 4]
    assert env.advance(DT, 10) == 1          # no new action: every update needs the caller
    s1 = env.record_state(0)
    assert s1[0] > s0[0] + 0.01 and abs(s1[1] - s0[1]) < 1e-6 and s1[2] > 0


def test_spot_reward_and_arena_fail(env):
    scene = env
    assert scene.spot_reward([1.2, 1.2]) == pytest.approx(1.0)
    assert scene.spot_reward([1.2 + 0.3, 1.2]) == pytest.approx(np.exp(-0.5))
    assert scene.spot_reward([-1.9, -1.9]) < 1e-3
    scene.pos = np.array([2.1, 0.0])
    assert env.check_terminate(0) == Terminate.Fail and env.is_episode_end() and env.calc_reward(0) == 0.0
    env.reset()
    assert env.check_terminate(0) == Terminate.Null and not env.is_episode_end()


def test_drawn_ball_spots_and_arena(env):
    from env.scenes.goals_point import RADIUS
    [(shape, size, pos, _, _)], lines = env.draw_task_objects()
    assert shape == "sphere" and np.allclose(size, 2 * RADIUS)
    np.testing.assert_allclose(pos, [env.pos[0], RADIUS, env.pos[1]])
    *circles, (border, _) = lines
    assert len(circles) == 3
    for (points, _), spot in zip(circles, [(1.2, 1.2), (-1.2, 0.8), (0.0, -1.3)]):
        np.testing.assert_allclose(np.hypot(points[:, 0] - spot[0], points[:, 2] - spot[1]), 0.3)
    np.testing.assert_allclose(np.abs(border[:, [0, 2]]), 2.0)
