"""Scene heading_amp_getup (DeepMimic's cSceneHeadingAMPGetup) with its args file: goal, getup
phase, rewards, the fall check while getting up, recovery episodes and test mode, on set states
against hand-computed values."""
import json
import math
from pathlib import Path

import numpy as np
import pytest

from env.deepmimic_env import DeepMimicEnv
from env.env import Mode, NormGroup, Terminate
from env.scenes.heading_amp_getup import HeadingAMPGetupScene
from env.scenes.scene_builder import scene_class
from tests.deepmimic_checkout import deepmimic_path
from util.arg_parser import load_args

ROOT = Path(__file__).resolve().parent.parent
GETUP_ARGS = str(ROOT / "args/train_amp_heading_getup_humanoid3d_locomotion_getup_args.txt")
FACEDOWN, FACEUP = 2, 3      # --getup_motion_ids 2 3 in the args file
HEAD_ID = 2


def make_env(*extra, seed=0):
    return DeepMimicEnv(load_args(["--arg_file", GETUP_ARGS, *map(str, extra)]), seed=seed)


@pytest.fixture()
def env():
    env = make_env()
    yield env
    env.shutdown()


def clip_duration(name):
    """Sum of a DeepMimic clip's frame durations, read from DeepMimic's own file."""
    frames = json.loads(deepmimic_path(f"data/motions/{name}.txt").read_text())["Frames"]
    return sum(f[0] for f in frames[:-1])


def yaw_quat(angle):
    return np.array([math.cos(angle / 2), 0.0, math.sin(angle / 2), 0.0])


def set_pose(scene, pose, vel=None):
    scene.sim_char.set_state(pose, np.zeros_like(pose) if vel is None else vel)
    scene._touch()


def lying_pose(scene):
    """The first frame of getup_facedown: the character lies face down on the ground."""
    return scene.motion_set.motions[FACEDOWN].calc_frame(0.0).copy()


def standing_pose(scene):
    """The walk clip's first frame, root moved to x = z = 0 and facing +x."""
    pose = scene.motion_set.motions[1].calc_frame(0.0).copy()
    pose[[0, 2]] = 0.0
    pose[3:7] = yaw_quat(0.0)
    return pose


def one_update(env):
    env.set_action(0, np.zeros(env.get_action_size(0)))
    env.update(env.update_timestep)


def test_registered_and_keys_read(env):
    scene = env
    assert scene_class("heading_amp_getup") is HeadingAMPGetupScene
    assert isinstance(scene, HeadingAMPGetupScene)
    assert scene.getup_motion_ids == [FACEDOWN, FACEUP]
    assert (scene.getup_height_root, scene.getup_height_head, scene.head_id) == (0.5, 1.3, HEAD_ID)
    assert scene.recover_episode_prob == 0.2
    assert (scene.sharp_turn_prob, scene.speed_change_prob, scene.vel_reward_scale) == (0.01, 0.02, 0.25)
    # T_g: the longest getup clip (faceup, 3.77 s)
    expected = max(clip_duration("humanoid3d_getup_facedown"), clip_duration("humanoid3d_getup_faceup"))
    assert scene.getup_time == pytest.approx(expected, abs=1e-9)
    assert scene.getup_time == pytest.approx(3.7665, abs=1e-3)


def test_defaults():
    env = make_env("--getup_height_head", 0.5, "--head_id", 0, "--recover_episode_prob", 0,
                   "--getup_motion_ids", 3)
    scene = env
    assert (scene.getup_height_root, scene.getup_height_head, scene.head_id, scene.recover_episode_prob) == \
        (0.5, 0.5, 0, 0.0)
    assert scene.getup_time == pytest.approx(clip_duration("humanoid3d_getup_faceup"), abs=1e-9)
    env.shutdown()


def test_bad_motion_id_is_one_line():
    with pytest.raises(ValueError, match=r"--getup_motion_ids 4 is not a motion index \(the motion set has 4"):
        make_env("--getup_motion_ids", 2, 4)


def test_separate_reset_clips_are_refused():
    """Its getup_motion_ids index the motion_file's clips, which its resets must play."""
    with pytest.raises(ValueError, match=r"--reset_motion_file: not in heading_amp_getup"):
        make_env("--reset_motion_file", "data/datasets/dataset_locomotion.txt")


def test_goal_layout_and_values(env):
    scene = env
    assert env.get_goal_size(0) == 4
    assert np.array_equal(env.build_goal_offset(0), [0, 0, 0, -0.5])
    assert np.array_equal(env.build_goal_scale(0), [1, 1, 1, 2])
    assert list(env.build_goal_norm_groups(0)) == [NormGroup.Zero] * 3 + [NormGroup.None_]

    pose = standing_pose(scene)
    pose[3:7] = yaw_quat(0.4)           # character heading 0.4 rad
    set_pose(scene, pose)
    scene.tar_heading, scene.tar_speed = 1.5, 2.5
    scene.getup_timer.time = 1.2
    dh = 1.5 - 0.4
    phase = 1.0 - 1.2 / scene.getup_time
    assert np.allclose(env.record_goal(0), [math.cos(dh), -math.sin(dh), 2.5, phase], atol=1e-6)
    # the policy sees (g + offset) * scale: the phase as 2 (p - 0.5)
    fed = (env.record_goal(0) + env.build_goal_offset(0)) * env.build_goal_scale(0)
    assert fed[3] == pytest.approx(2 * (phase - 0.5))
    scene.end_getup()
    assert env.record_goal(0)[3] == 0.0
    scene.begin_getup()
    assert env.record_goal(0)[3] == 1.0


def test_phase_advances_with_updates(env):
    scene = env
    set_pose(scene, lying_pose(scene))
    scene.begin_getup()
    dt = scene.update_timestep
    for _ in range(25):
        one_update(env)
    assert scene.getup_timer.time == pytest.approx(25 * dt)
    assert scene.calc_getup_phase() == pytest.approx(1.0 - 25 * dt / scene.getup_time)
    assert scene.check_getting_up()
    scene.getup_timer.time = scene.getup_time - 0.5 * dt
    one_update(env)
    assert not scene.check_getting_up() and scene.calc_getup_phase() == 0.0


def test_getup_reward(env):
    scene = env
    scene.begin_getup()
    pose = standing_pose(scene)
    set_pose(scene, pose)
    root_y = pose[1]
    head_y = scene.sim_char.get_body_centre(HEAD_ID)[1]
    assert root_y > 0.5 and head_y > 1.3
    assert env.calc_reward(0) == pytest.approx(1.0)     # standing: both terms saturate
    # the same pose lowered so that the root is at 0.25: root term 0.5, head term (head_y - drop) / 1.3
    drop = root_y - 0.25
    pose[1] = 0.25
    set_pose(scene, pose)
    expected = 0.2 * 0.5 + 0.8 * min((head_y - drop) / 1.3, 1.0)
    assert expected < 0.95
    assert env.calc_reward(0) == pytest.approx(expected, abs=1e-6)
    # getting up: the reward ignores falls
    scene._fallen_contact = True
    assert env.calc_reward(0) == pytest.approx(expected, abs=1e-6)


def test_walking_and_fallen_reward(env):
    scene = env
    scene.end_getup()
    set_pose(scene, standing_pose(scene))
    scene.tar_heading, scene.tar_speed = 0.7, 3.0
    direction = np.array([math.cos(0.7), 0.0, -math.sin(0.7)])
    side = np.array([math.sin(0.7), 0.0, math.cos(0.7)])   # perpendicular: ignored
    dt = 1 / 30
    scene.prev_action_time = scene.ctrl.time - dt
    scene.prev_action_com = scene.calc_com() - dt * (2.0 * direction + 1.5 * side + [0, 0.7, 0])
    assert env.calc_reward(0) == pytest.approx(math.exp(-0.25 * (3.0 - 2.0) ** 2), abs=1e-9)
    scene.prev_action_com = scene.calc_com() + dt * 0.5 * direction      # moving backwards
    assert env.calc_reward(0) == 0.0
    scene.prev_action_com = scene.calc_com() - dt * 2.0 * direction
    scene._fallen_contact = True                                         # fallen, not getting up
    assert env.calc_reward(0) == 0.0


def test_no_fall_while_getting_up(env):
    scene = env
    set_pose(scene, lying_pose(scene))
    scene.begin_getup()
    one_update(env)
    assert scene._fallen_contact                 # the raw contact check sees the fall
    assert not scene.has_fallen() and env.check_terminate(0) == Terminate.Null
    assert not env.is_episode_end()
    scene.end_getup()
    one_update(env)
    assert scene.has_fallen() and env.check_terminate(0) == Terminate.Fail and env.is_episode_end()


def fail_while_lying(env):
    scene = env
    set_pose(scene, lying_pose(scene))
    scene.end_getup()
    one_update(env)
    assert env.check_terminate(0) == Terminate.Fail


def test_recovery_reset_keeps_the_pose_and_chains():
    env = make_env("--recover_episode_prob", 1)
    scene = env
    for _ in range(10):
        one_update(env)
    scene.tar_heading, scene.tar_speed = 0.9, 4.2
    fail_while_lying(env)
    pose_before = scene.sim_char.get_state()[0].copy()
    motion, kin_time = scene.motion, scene.kin_char.time
    env.reset()
    assert np.allclose(scene.sim_char.get_state()[0], pose_before, atol=1e-9)
    assert scene.motion is motion and scene.kin_char.time == kin_time
    assert (scene.tar_heading, scene.tar_speed) == (0.9, 4.2)
    assert scene.getup_timer.time == 0.0 and scene.calc_getup_phase() == 1.0
    assert scene.get_time() == 0.0 and scene.ctrl.time == 0.0 and env.need_new_action(0)
    assert env.check_terminate(0) == Terminate.Null
    # DeepMimic's quirk: the flag meant to stop a second recovery episode is never set
    fail_while_lying(env)
    env.reset()
    assert scene.getup_timer.time == 0.0
    assert np.allclose(scene.sim_char.get_state()[0][[0, 2]], pose_before[[0, 2]], atol=0.05)
    env.shutdown()


def test_normal_reset_without_recovery():
    env = make_env("--recover_episode_prob", 0)
    scene = env
    seen = set()
    for _ in range(40):
        fail_while_lying(env)
        env.reset()
        root = scene.sim_char.get_root_pos()
        assert root[0] == pytest.approx(0.0, abs=1e-9) and root[2] == pytest.approx(0.0, abs=1e-9)
        motion_id = scene.curr_motion_id()
        seen.add(motion_id)
        if motion_id in (FACEDOWN, FACEUP):     # starts mid-getup, at the reference time
            assert scene.getup_timer.time == scene.kin_char.time < scene.motion.duration
            assert scene.check_getting_up()
        else:
            assert scene.getup_timer.time == scene.getup_time and not scene.check_getting_up()
    assert seen == {0, 1, 2, 3}
    env.shutdown()


def test_test_mode_fall_starts_a_getup():
    env = make_env("--recover_episode_prob", 1)
    scene = env
    env.set_mode(Mode.TEST)
    set_pose(scene, lying_pose(scene))
    scene.end_getup()
    one_update(env)
    assert scene.getup_timer.time == 0.0          # tau = 0 at the end of the update that fell
    assert not env.is_episode_end() and env.check_terminate(0) == Terminate.Null
    # no recovery episodes in test mode: a failed state at reset gives a normal reset
    scene.end_getup()
    scene._fallen_contact = True
    assert env.check_terminate(0) == Terminate.Fail
    env.reset()
    root = scene.sim_char.get_root_pos()
    assert root[0] == pytest.approx(0.0, abs=1e-9) and root[2] == pytest.approx(0.0, abs=1e-9)
    env.shutdown()
