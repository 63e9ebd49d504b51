"""strike_amp against DeepMimic's core (cSceneStrikeAMP) along the same actions.

The core's strike target placement is not pinned (its hooks pin the reset and TargetAMP's target
only), so after the same pinned reset our target is copied from their goal (the target in the
heading frame, y above the ground). Both sides get --init_hit_prob 0 (the hit phase then starts at
0 on both), the shipped run clip, and either only near targets or only far ones (with a
pos_reward_scale small enough for the position term to count at a few metres). Then cases.NUM_ACTIONS noisy actions (as
test_core_trajectory). Asserted: identical layouts (goal 4), the same decisions and terminations,
task rewards and goals (incl. the hit phase) within the trajectory tolerances.

    make test-reference DEEPMIMIC=<checkout>   (or: pytest -m reference tests/reference_core/test_core_strike.py)
"""
import numpy as np
import pytest

from tests.reference_core import cases as C
from tests.reference_core import common
from tests.reference_core.compare import compare_layout
from tests.reference_core.harness import Case
from tests.reference_core.test_core_dribble import GOAL_TOL
from tests.reference_core.test_core_trajectory import REWARD_MAX_TOL, REWARD_MEAN_TOL, STATE_MEAN_TOL
from util import math_util

pytestmark = pytest.mark.reference

ARGS = "args/train_amp_strike_humanoid3d_walk_punch_args.txt"


def copy_target(scene, their_goal):
    """Our target where theirs is, read back through our character's heading frame."""
    root_pos, root_rot = scene.sim_pose_vel()[0][0:3], scene.sim_pose_vel()[0][3:7]
    heading = math_util.quat_heading_rot(root_rot)
    offset = math_util.quat_rotate(heading, np.asarray(their_goal[0:3], dtype=float))
    scene.target_pos = np.array([root_pos[0], scene.world.ground_height, root_pos[2]]) + offset
    scene._touch()


@pytest.mark.parametrize("placement", [
    ["--tar_far_prob", "0"],                                   # near: the strike body's reward terms
    ["--tar_far_prob", "1", "--pos_reward_scale", "0.05"],     # far: a position term that is not ~0
], ids=["near", "far"])
def test_strike_trajectory(make_sides, tmp_path, placement):
    case = Case("strike_amp/run/rot", ARGS, ARGS, layout="rot", amp=True,
                overrides=["--init_hit_prob", "0", *placement, "--motion_file", C.dataset_file(tmp_path, "run")])
    ours, theirs = make_sides(case)
    diffs, layout = compare_layout(ours, theirs)
    assert max(diffs.values()) == 0.0, {k: v for k, v in diffs.items() if v}

    actions = common.noise_actions(layout["action_offset"], C.NUM_ACTIONS, seed=0)
    pins = dict(reset_time=C.RESET_TIMES[0], reset_heading=C.RESET_HEADING)
    for side in (ours, theirs):
        side.call("set_mode", case.mode)
        side.set_pins(**pins)
        side.reset()
    their_goal = theirs.call("record_goal", 0)
    assert len(their_goal) == 4 and their_goal[3] == 0.0
    copy_target(ours.env, their_goal)
    np.testing.assert_allclose(ours.call("record_goal", 0), their_goal, atol=1e-6)
    ro, rt = ours.rollout(actions, amp=True), theirs.rollout(actions, amp=True)

    assert (ro["end"], len(ro["steps"])) == (rt["end"], len(rt["steps"]))
    assert len(ro["steps"]) > 5
    rewards, state_means = [], []
    for a, b in zip(ro["steps"], rt["steps"]):
        assert a["terminate"] == b["terminate"]
        assert np.abs(np.subtract(a["goal"], b["goal"])).max() <= GOAL_TOL
        state_means.append(np.abs(np.subtract(a["state"], b["state"])).mean())
        if "reward" in a:
            rewards.append(abs(a["reward"] - b["reward"]))
    assert max(rewards) <= REWARD_MAX_TOL and np.mean(rewards) <= REWARD_MEAN_TOL, rewards
    assert np.mean(state_means[:-1]) <= STATE_MEAN_TOL, state_means
