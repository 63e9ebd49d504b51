"""Imitation metrics (env/tracking_error.py) on hand cases in the imitate scene: the reference
against itself, a rigid shift of the simulated root, a known knee or chest rotation, a root linear
or angular velocity (against pybullet's own base velocities, in character units); and episode
means and success."""
import math

import numpy as np
import pybullet as p
import pytest

from env.deepmimic_env import DeepMimicEnv
from env.tracking_error import TRACKING_ERRORS, EpisodeTracking, is_success
from util import math_util
from util.arg_parser import load_args

WALK_ARGS = "args/train_humanoid3d_walk_args.txt"
CHEST, RIGHT_KNEE, RIGHT_ANKLE = 1, 4, 5
CHEST_SUBTREE = 8       # chest, neck, both shoulders, elbows and wrists


@pytest.fixture()
def env():
    env = DeepMimicEnv(load_args(["--arg_file", WALK_ARGS, "--rand_seed", "7"]))
    yield env
    env.shutdown()


def ref_state(scene):
    """Copies of the reference's pose and velocity now."""
    scene._pose_kin()
    return scene.kin_char.pose.copy(), scene.kin_char.vel.copy()


def pose_sim(scene, pose, vel):
    scene.sim_char.set_state(pose, vel)
    scene._touch()


def test_reference_against_itself_is_zero(env):
    for _ in range(3):
        env.reset()     # reference state initialisation: the simulated character takes the reference's state
        errors = env.calc_tracking_error(0)
        assert set(errors) == set(TRACKING_ERRORS)
        assert max(errors.values()) < 1e-6, errors


def test_rigid_root_shift_is_root_error_only(env):
    scene = env
    d = np.array([0.3, 0.1, -0.4])
    pose, vel = ref_state(scene)
    pose[0:3] += d
    pose_sim(scene, pose, vel)
    errors = env.calc_tracking_error(0)
    assert errors["root_pos_err"] == pytest.approx(np.linalg.norm(d), abs=1e-6)   # pybullet: float32
    for name in TRACKING_ERRORS:
        if name != "root_pos_err":
            assert errors[name] < 1e-6, (name, errors[name])


def test_knee_rotation_gives_its_angle_and_the_ankle_displacement(env):
    """Bending the right knee by 0.3 rad turns its two bodies (shin, foot) by 0.3 rad and moves the
    ankle (the foot's frame origin) by 2 L sin(0.15), L the knee-ankle distance; the other 13
    bodies stay, so the means over the 15 bodies are 2 x 0.3 / 15 and 2 L sin(0.15) / 15."""
    scene, desc = env, env.char_desc
    pose, vel = ref_state(scene)
    pose[desc.param_offset[RIGHT_KNEE]] += 0.3
    pose_sim(scene, pose, vel)
    errors = env.calc_tracking_error(0)
    shin = np.linalg.norm(desc.joints[RIGHT_ANKLE].attach_pt)
    assert errors["body_rot_err"] == pytest.approx(2 * 0.3 / 15, abs=1e-6)
    assert errors["body_pos_err"] == pytest.approx(2 * shin * math.sin(0.15) / 15, abs=1e-6)
    assert errors["root_pos_err"] < 1e-9 and errors["root_rot_err"] < 1e-6
    assert errors["joint_vel_err"] < 1e-9


def test_chest_rotation_is_no_root_rotation(env):
    """Turning the chest joint (body 1) by 0.5 rad turns its 8 bodies by 0.5 rad and not the root:
    root_rot_err is the root's alone."""
    scene, desc = env, env.char_desc
    pose, vel = ref_state(scene)
    o = desc.param_offset[CHEST]
    pose[o:o + 4] = math_util.quat_mul(pose[o:o + 4], math_util.quat_from_axis_angle([1.0, 0.0, 0.0], 0.5))
    pose_sim(scene, pose, vel)
    errors = env.calc_tracking_error(0)
    assert errors["root_rot_err"] < 1e-6
    assert errors["body_rot_err"] == pytest.approx(CHEST_SUBTREE * 0.5 / 15, abs=1e-6)


def with_root_velocity_added(scene, cols, delta):
    """The simulated character at the reference's state with `delta` added to vel[cols]: (its
    tracking errors, pybullet's base linear and angular velocity differences sim - reference, the
    linear one in character units: each divided by its world's scale, 4 simulated, 1 reference)."""
    pose, vel = ref_state(scene)
    vel[cols] += delta
    pose_sim(scene, pose, vel)
    errors = scene.calc_tracking_error(0)       # poses the reference's twin
    lin, ang = [], []
    for char in (scene.sim_char, scene.ref_twin):
        v, w = p.getBaseVelocity(char.body, physicsClientId=char.client)
        lin.append(np.array(v) / char.scale)
        ang.append(np.array(w))
    return errors, lin[0] - lin[1], ang[0] - ang[1]


def test_root_velocity_error_is_the_linear_velocity_in_character_units(env):
    """A root linear velocity d added to the reference's state: root_vel_err is the mean over x, y, z
    of |d|, pybullet's base velocity difference in character units (the walk's physics runs at
    world_scale 4: 4 d there); the angular velocity error stays 0."""
    assert (env.sim_char.scale, env.ref_twin.scale) == (4.0, 1.0)
    d = np.array([0.3, -0.2, 0.7])
    errors, lin, _ = with_root_velocity_added(env, slice(0, 3), d)
    np.testing.assert_allclose(lin, d, atol=1e-9)
    assert errors["root_vel_err"] == pytest.approx(np.mean(np.abs(d)), abs=1e-9)
    assert errors["root_ang_vel_err"] < 1e-9


def test_root_angular_velocity_error_and_the_root_centres_velocity(env):
    """A root angular velocity w added: root_ang_vel_err is the mean of |w|, and the root body's
    centre, r from the root joint (pybullet's forward kinematics), moves w x r faster, so
    root_vel_err is the mean of |w x r|."""
    w = np.array([0.5, -1.1, 0.8])
    errors, _, ang = with_root_velocity_added(env, slice(3, 6), w)
    np.testing.assert_allclose(ang, w, atol=1e-9)
    bodies = env.sim_body_states()
    r = bodies.pos[0] - bodies.joint_pos[0]
    assert np.linalg.norm(r) > 0.05
    assert errors["root_ang_vel_err"] == pytest.approx(np.mean(np.abs(w)), abs=1e-9)
    assert errors["root_vel_err"] == pytest.approx(np.mean(np.abs(np.cross(w, r))), abs=1e-6)


def test_joint_velocity_error_is_the_mean_over_the_28_dofs(env):
    scene, desc = env, env.char_desc
    pose, vel = ref_state(scene)
    vel[desc.dof_offset[RIGHT_KNEE]] += 1.4
    pose_sim(scene, pose, vel)
    assert env.calc_tracking_error(0)["joint_vel_err"] == pytest.approx(1.4 / 28, abs=1e-9)


def test_episode_means_and_success():
    track = EpisodeTracking()
    for value in (0.02, 0.04, 0.09):
        track.add(dict.fromkeys(TRACKING_ERRORS, value))
    assert track.means()["body_pos_err"] == pytest.approx(0.05)
    assert is_success(False, 0.05) and not is_success(True, 0.05) and not is_success(False, 0.081)
    assert is_success(False, 0.2, threshold=0.25)
