"""imitate's state from a known pose, checked against hand-computed values, in both layouts."""
import json

import numpy as np
import pytest

from env.deepmimic_env import DeepMimicEnv
from util import math_util
from util.arg_parser import load_args

WALK_ARGS = "args/train_humanoid3d_walk_args.txt"
THETA = 0.7     # heading of the root
ALPHA = 0.4     # tilt of the root about its own x axis (does not change the heading)
ROOT = np.array([1.0, 0.9, 2.0])
ROOT_VEL = np.array([1.0, 0.5, 0.0])
YAW_RATE = 2.0
# body centres relative to the root joint in the identity pose (character file offsets)
BODY_OFFSETS = {0: [0.0, 0.07, 0.0],                                   # root sphere
                1: [0.0, 0.236151 + 0.12, 0.0],                        # chest
                5: [0.045, -0.421546 - 0.40987 - 0.0225, 0.084887],    # right ankle box
                6: [-0.02405, 0.236151 + 0.2435 - 0.14, 0.18311]}      # right shoulder capsule


def make_env(tmp_path, ctrl_file, **ctrl_overrides):
    ctrl = json.loads(open(ctrl_file).read())
    ctrl.update(ctrl_overrides)
    path = tmp_path / "ctrl.txt"
    path.write_text(json.dumps(ctrl))
    return DeepMimicEnv(load_args(["--arg_file", WALK_ARGS, "--char_ctrl_files", str(path)]), seed=0)


def rot_x(angle):
    c, s = np.cos(angle), np.sin(angle)
    return np.array([[1, 0, 0], [0, c, -s], [0, s, c]])


def rot_y(angle):
    c, s = np.cos(angle), np.sin(angle)
    return np.array([[c, 0, s], [0, 1, 0], [-s, 0, c]])


def known_state(env, tilt):
    """Identity joints; root at ROOT turned by THETA about y then tilted by `tilt` about its x axis,
    moving at ROOT_VEL and turning at YAW_RATE about world y; phase 0.25."""
    scene = env
    pose = scene.kin_char.default_pose()
    vel = np.zeros(scene.char_desc.dof_size)
    pose[0:3] = ROOT
    pose[3:7] = math_util.quat_mul(math_util.quat_from_axis_angle([0, 1, 0], THETA),
                                   math_util.quat_from_axis_angle([1, 0, 0], tilt))
    vel[0:3] = ROOT_VEL
    vel[3:6] = [0.0, YAW_RATE, 0.0]
    scene.sim_char.set_state(pose, vel)
    scene.ctrl.reset(0.25 * scene.motion.duration)
    scene._touch()
    return env.record_state(0)


def body_block(state, start, width, body):
    return state[start + body * width:start + (body + 1) * width]


@pytest.mark.parametrize("tilt", [0.0, ALPHA])
def test_state_2021_layout(tmp_path, tilt):
    env = make_env(tmp_path, "data/controllers/humanoid3d_ctrl.txt")
    assert env.get_state_size(0) == 227
    state = known_state(env, tilt)
    assert state[0] == pytest.approx(0.25)                 # phase
    assert state[1] == pytest.approx(ROOT[1])              # root height
    to_heading = rot_y(-THETA)
    for body, offset in BODY_OFFSETS.items():
        block = body_block(state, 2, 9, body)
        world_offset = rot_y(THETA) @ rot_x(tilt) @ offset
        assert np.allclose(block[0:3], rot_x(tilt) @ offset, atol=1e-6)   # heading frame
        local = rot_x(tilt)
        if body == 0:   # RecordWorldRootRot: the root body keeps its world rotation
            local = rot_y(THETA) @ rot_x(tilt)
        assert np.allclose(block[3:6], local @ [0, 1, 0], atol=1e-9)       # normal
        assert np.allclose(block[6:9], local @ [1, 0, 0], atol=1e-9)       # tangent
        vblock = body_block(state, 2 + 135, 6, body)
        world_vel = ROOT_VEL + np.cross([0.0, YAW_RATE, 0.0], world_offset)
        expect = world_vel if body == 0 else to_heading @ world_vel
        assert np.allclose(vblock[0:3], expect, atol=1e-9)
        expect_ang = [0.0, YAW_RATE, 0.0]   # a yaw rate is the same in the heading frame
        assert np.allclose(vblock[3:6], expect_ang, atol=1e-9)
    # the root's tangent in world axes: its x axis, (cos theta, 0, -sin theta) whatever the tilt
    assert np.allclose(body_block(state, 2, 9, 0)[6:9], [np.cos(THETA), 0.0, -np.sin(THETA)], atol=1e-9)
    env.shutdown()


def test_state_without_phase(tmp_path):
    env = make_env(tmp_path, "data/controllers/humanoid3d_ctrl.txt", EnablePhaseInput=False)
    assert env.get_state_size(0) == 226
    state = known_state(env, 0.0)
    assert state[0] == pytest.approx(ROOT[1])
    assert np.all(env.build_state_norm_groups(0) == 0)
    env.shutdown()


@pytest.mark.parametrize("tilt", [0.0, ALPHA])
def test_state_2018_layout(tmp_path, tilt):
    env = make_env(tmp_path, "data/controllers/humanoid3d_ctrl_2018.txt")
    assert env.get_state_size(0) == 197
    state = known_state(env, tilt)
    assert state[0] == pytest.approx(0.25)
    assert state[1] == pytest.approx(ROOT[1])
    tilt_quat = [np.cos(tilt / 2), np.sin(tilt / 2), 0.0, 0.0]
    for body, offset in BODY_OFFSETS.items():
        block = body_block(state, 2, 7, body)
        assert np.allclose(block[0:3], rot_x(tilt) @ offset, atol=1e-6)
        # heading removed from every body, the root included (RecordWorldRootRot false)
        assert np.allclose(block[3:7], tilt_quat, atol=1e-9)
        vblock = body_block(state, 2 + 105, 6, body)
        world_vel = ROOT_VEL + np.cross([0.0, YAW_RATE, 0.0], rot_y(THETA) @ rot_x(tilt) @ offset)
        assert np.allclose(vblock[0:3], rot_y(-THETA) @ world_vel, atol=1e-9)
    env.shutdown()


def test_state_normalisation(tmp_path):
    env = make_env(tmp_path, "data/controllers/humanoid3d_ctrl.txt")
    offset, scale, groups = env.build_state_offset(0), env.build_state_scale(0), env.build_state_norm_groups(0)
    assert offset[0] == -0.5 and scale[0] == 2.0 and groups[0] == -1
    assert np.all(offset[1:] == 0.0) and np.all(scale[1:] == 1.0) and np.all(groups[1:] == 0)
    assert env.get_goal_size(0) == 0 and env.record_goal(0).shape == (0,)
    env.shutdown()
