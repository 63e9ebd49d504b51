"""Style metrics (env/style_error.py) on hand cases in the AMP walk scene: the clip played back,
the same pose turned about the vertical or moved as a whole, one joint bent by a known angle,
the nearest frame chosen, the speed and heading terms; every clip of a dataset in
the reference; which scenes report style and which tracking."""
import math

import numpy as np
import pytest

from env.deepmimic_env import DeepMimicEnv
from env.anim.motion import Motion
from env.style_error import STYLE_METRICS, EpisodeStyle, clip_root_speed
from util import math_util
from util.arg_parser import load_args

AMP_WALK_ARGS = "args/train_amp_humanoid3d_walk_args.txt"
RIGHT_KNEE, RIGHT_ANKLE = 4, 5
Y_AXIS = np.array([0.0, 1.0, 0.0])


def build(arg_file, *extra):
    return DeepMimicEnv(load_args(["--arg_file", arg_file, "--rand_seed", "7", *extra]))


@pytest.fixture(scope="module")
def scene():
    env = build(AMP_WALK_ARGS)
    yield env
    env.shutdown()


def style_at(scene, pose, vel):
    """The style metrics with the simulated character teleported to (pose, vel)."""
    scene.sim_char.set_state(pose, vel)
    scene._touch()
    return scene.calc_style_error(0)


def turned(pose, angle):
    """The pose turned by `angle` about the vertical axis through the world origin."""
    out = pose.copy()
    yaw = math_util.quat_from_axis_angle(Y_AXIS, angle)
    out[0:3] = math_util.quat_rotate(yaw, pose[0:3])
    out[3:7] = math_util.quat_mul(yaw, pose[3:7])
    return out


def test_the_clip_played_back_is_zero(scene):
    """At every keyframe the character matches its frame (0 up to pybullet's float32); between
    keyframes, at the decision rate, the interpolated pose stays within millimetres of one."""
    m = scene.motion
    keyframes = [style_at(scene, m.frames[k], m.vel_frames[k]) for k in range(m.num_frames)]
    assert max(e["style_err"] for e in keyframes) < 1e-6
    played = [style_at(scene, m.calc_frame(t), m.calc_vel(t))["style_err"] for t in np.arange(0.0, m.duration, 1 / 30)]
    assert np.mean(played) < 0.005 and max(played) < 0.015


@pytest.mark.parametrize("angle", [0.7, -2.5, math.pi])
def test_a_turned_pose_is_zero_and_its_heading_turns(scene, angle):
    m, k = scene.motion, 17
    here = style_at(scene, m.frames[k], m.vel_frames[k])
    there = style_at(scene, turned(m.frames[k], angle), m.vel_frames[k])
    assert there["style_err"] < 1e-6
    turn = there["heading"] - here["heading"]
    assert abs((turn - angle + math.pi) % (2 * math.pi) - math.pi) < 1e-6


def test_a_pose_moved_as_a_whole_is_zero(scene):
    m, k = scene.motion, 9
    pose = m.frames[k].copy()
    pose[0:3] += (1.3, 0.4, -2.1)
    assert style_at(scene, pose, m.vel_frames[k])["style_err"] < 1e-6


@pytest.mark.parametrize("angle", [0.0, 1.9])
def test_a_bent_knee_gives_the_ankle_displacement(scene, angle):
    """Bending the right knee by 0.3 rad moves the ankle (the foot's frame origin) by 2 L sin(0.15),
    L the knee-ankle distance, and no other joint: 2 L sin(0.15) / 15 over the 15 bodies, facing
    the clip's way or turned."""
    m, desc, k = scene.motion, scene.char_desc, 20
    pose = m.frames[k].copy()
    pose[desc.param_offset[RIGHT_KNEE]] += 0.3
    shin = np.linalg.norm(desc.joints[RIGHT_ANKLE].attach_pt)
    errors = style_at(scene, turned(pose, angle), m.vel_frames[k])
    assert errors["style_err"] == pytest.approx(2 * shin * math.sin(0.15) / 15, abs=1e-6)


def test_the_nearest_frame_is_chosen(scene):
    """A frame from the middle of the clip matches itself, not a neighbour (its index in the
    reference), also turned and moved."""
    m, ref = scene.motion, scene._style_ref
    assert ref.num_frames == m.num_frames
    for k in (m.num_frames // 2, m.num_frames // 2 + 1):
        pose = turned(m.frames[k], 1.1)
        pose[0:3] += (0.5, 0.0, 3.0)
        style_at(scene, pose, m.vel_frames[k])
        index, dist = ref.nearest(scene.sim_body_states().joint_pos, pose[3:7])
        assert index == k and dist < 1e-6


def test_root_speed_and_heading(scene):
    """A root velocity (0.6, 5, -0.8) and joints 0.5 rad/s off the frame's: horizontal speed 1.0,
    style_err still 0 (a pose metric); the heading is the root's (math_util.quat_heading)."""
    m, k = scene.motion, 12
    vel = m.vel_frames[k].copy()
    vel[6:] += 0.5
    vel[0:3] = (0.6, 5.0, -0.8)
    errors = style_at(scene, m.frames[k], vel)
    assert set(errors) == set(STYLE_METRICS)
    assert errors["style_err"] < 1e-6
    assert errors["root_speed"] == pytest.approx(1.0, abs=1e-5)
    assert errors["heading"] == pytest.approx(float(math_util.quat_heading(m.frames[k, 3:7])), abs=1e-6)


def test_episode_means():
    episode = EpisodeStyle()
    for err, heading in ((0.1, math.pi - 0.2), (0.3, -math.pi + 0.2), (0.2, math.pi)):
        episode.add({"style_err": err, "root_speed": 2 * err, "heading": heading})
    means = episode.means()
    assert means["style_err"] == pytest.approx(0.2) and means["root_speed"] == pytest.approx(0.4)
    assert abs(abs(means["heading"]) - math.pi) < 1e-9      # circular: the arithmetic mean is 1.05


def test_every_clip_of_a_dataset_is_in_the_reference():
    """The heading task on the locomotion dataset (run and walk): the reference holds both clips'
    frames, and a walk frame matches itself at its place after the run's."""
    env = build("args/train_amp_heading_humanoid3d_locomotion_args.txt")
    try:
        run, walk = env.motion_set.motions
        assert env.calc_style_error(0) is not None and env.calc_tracking_error(0) is None
        assert env._style_ref.num_frames == run.num_frames + walk.num_frames
        k = walk.num_frames // 2
        style_at(env, walk.frames[k], walk.vel_frames[k])
        index, dist = env._style_ref.nearest(env.sim_body_states().joint_pos, walk.frames[k, 3:7])
        assert index == run.num_frames + k and dist < 1e-6
    finally:
        env.shutdown()


def test_amp_scenes_judge_style_and_imitate_tracks(scene):
    assert scene.calc_tracking_error(0) is None
    imitate = build("args/train_humanoid3d_walk_args.txt")
    imitate_style = build("args/train_humanoid3d_walk_args.txt", "--enable_style_error", "true")
    try:
        assert imitate.calc_style_error(0) is None and imitate.calc_tracking_error(0) is not None
        assert imitate_style.calc_style_error(0)["style_err"] < 0.02     # at a reference state
    finally:
        imitate.shutdown()
        imitate_style.shutdown()


def test_clip_root_speed_is_the_horizontal_speed_weighted_by_duration(scene):
    """A root moving 2 m/s along z for 1 s, then 0.5 m/s along x for 3 s, bobbing in y all along:
    (2 * 1 + 0.5 * 3) / 4 = 0.875 m/s; two clips average."""
    base = scene.motion.frames[0].copy()
    frames, pos = [], np.zeros(3)
    for k, (dur, vel) in enumerate([(1.0, [0.0, 0.0, 2.0]), (3.0, [0.5, 0.0, 0.0]), (0.0, None)]):
        frame = base.copy()
        frame[:3] = pos + [0.0, 0.3 * (k % 2), 0.0]
        frames.append(frame)
        if vel is not None:
            pos = pos + dur * np.array(vel)
    motion = Motion(frames, [1.0, 3.0, 0.0], "none", scene.char_desc)
    assert clip_root_speed([motion]) == pytest.approx(0.875, rel=1e-9)
    still = Motion([base, base], [1.0, 0.0], "none", scene.char_desc)
    assert clip_root_speed([motion, still]) == pytest.approx(0.4375, rel=1e-9)
