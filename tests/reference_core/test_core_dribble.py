"""dribble_amp against DeepMimic's core (cSceneDribbleAMP) along the same actions.

The core's ball and target placements are not pinned (its hooks pin the reset and TargetAMP's
target only), so after the same pinned reset our ball and target are copied from theirs: the ball
from their 15 ball features (position in the heading frame, rotation from its normal and tangent),
the target from their goal (heading-frame direction and distance from the ball). Both sides get
--min/max_tar_obj_dist 2..4 so the ball is out of the character's reach for the whole second (a
kick would compare two engines' contact solvers, not the scene), and --target_succ_dist 0.001: the
core's target lands within the default 0.5 m of the ball in ~3% of its draws, and both episodes
then succeed at their first update (seen once: 2 decisions). Then cases.NUM_ACTIONS noisy
actions (as test_core_trajectory). Asserted: identical layouts (state 15 longer than the
controller's, its offsets, scales, norm groups), the same decisions and terminations, task rewards
and goals within the trajectory tolerances; the ball features within GOAL_TOL while the ball rests.

    make test-reference DEEPMIMIC=<checkout>   (or: pytest -m reference tests/reference_core/test_core_dribble.py)
"""
import numpy as np
import pytest

from tests.reference_core import cases as C
from tests.reference_core import common
from tests.reference_core.compare import compare_layout
from tests.reference_core.harness import Case
from tests.reference_core.test_core_trajectory import REWARD_MAX_TOL, REWARD_MEAN_TOL, STATE_MEAN_TOL
from util import math_util

pytestmark = pytest.mark.reference

ARGS = "args/train_amp_dribble_humanoid3d_locomotion_args.txt"
BALL_FEATURES = 15
# heading-frame goal and ball features: the characters' headings drift ~2e-3 rad apart, times the ball's
# 2-4 m distance; measured (3 runs, the core's placement differs each time) at most 9.1e-3 for the
# ball features; task rewards at most 1.1e-6 apart, the character's state 2.7e-3 (mean)
GOAL_TOL = 0.03


def copy_ball_and_target(scene, their_state, their_goal):
    """Our ball and target where theirs are, read back through our character's heading frame."""
    features = np.asarray(their_state[-BALL_FEATURES:])
    root_pos, root_rot = scene.sim_pose_vel()[0][0:3], scene.sim_pose_vel()[0][3:7]
    heading = math_util.quat_heading_rot(root_rot)
    ball = np.array([root_pos[0], 0.0, root_pos[2]]) + math_util.quat_rotate(heading, features[0:3])
    normal, tangent = features[3:6], features[6:9]
    local = math_util.quat_from_matrix(np.stack([tangent, normal, np.cross(tangent, normal)], axis=1))
    scene.ball.place(ball, math_util.quat_mul(heading, local))
    scene.prev_action_ball = scene.ball.get_pos()
    direction = math_util.quat_rotate(heading, np.array([their_goal[0], 0.0, their_goal[1]]))
    scene.target_pos = np.array([ball[0] + their_goal[2] * direction[0], 0.0, ball[2] + their_goal[2] * direction[2]])
    scene._touch()


def test_dribble_trajectory(make_sides, tmp_path):
    case = Case("dribble_amp/run/rot", ARGS, ARGS, layout="rot", amp=True,
                overrides=["--rand_target_time_min", "100", "--rand_target_time_max", "100",
                           "--min_tar_obj_dist", "2", "--max_tar_obj_dist", "4", "--target_succ_dist", "0.001",
                           "--motion_file", C.dataset_file(tmp_path, "run")])
    ours, theirs = make_sides(case)
    diffs, layout = compare_layout(ours, theirs)
    assert max(diffs.values()) == 0.0, {k: v for k, v in diffs.items() if v}
    assert layout["state_size"] == 226 + BALL_FEATURES

    actions = common.noise_actions(layout["action_offset"], C.NUM_ACTIONS, seed=0)
    pins = dict(reset_time=C.RESET_TIMES[0], reset_heading=C.RESET_HEADING)
    for side in (ours, theirs):
        side.call("set_mode", case.mode)
        side.set_pins(**pins)
        side.reset()
    their_state, their_goal = theirs.call("record_state", 0), theirs.call("record_goal", 0)
    copy_ball_and_target(ours.env, their_state, their_goal)
    ro, rt = ours.rollout(actions, amp=True), theirs.rollout(actions, amp=True)

    assert (ro["end"], len(ro["steps"])) == (rt["end"], len(rt["steps"]))
    assert len(ro["steps"]) > 5
    n = layout["state_size"] - BALL_FEATURES
    rewards, state_means = [], []
    for a, b in zip(ro["steps"], rt["steps"]):
        assert a["terminate"] == b["terminate"]
        assert np.abs(np.subtract(a["goal"], b["goal"])).max() <= GOAL_TOL
        sa, sb = np.asarray(a["state"]), np.asarray(b["state"])
        state_means.append(np.abs(sa[:n] - sb[:n]).mean())
        assert np.abs(sb[-6:]).max() < 0.05            # their ball rests: nothing touched it
        assert np.abs(sa[-BALL_FEATURES:] - sb[-BALL_FEATURES:]).max() <= GOAL_TOL
        if "reward" in a:
            rewards.append(abs(a["reward"] - b["reward"]))
    assert max(rewards) <= REWARD_MAX_TOL and np.mean(rewards) <= REWARD_MEAN_TOL, rewards
    assert np.mean(state_means[:-1]) <= STATE_MEAN_TOL, state_means
