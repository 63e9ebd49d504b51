"""The 2018 state (197) and action (36) layouts against the older DeepMimic port in the pybullet
wheel (issue #14): its HumanoidStablePD.getState() and convertActionToPose() are the oracle.

The oracle's humanoid is its own pybullet body, built by its constructor from the wheel's
humanoid.urdf at globalScaling 0.25 (character units, y up) in a client of its own. Each
comparison copies our simulated character's base and joint states, velocities included, into that
body, and the controller time into the oracle's time (its phase comes from its own reference time,
setSimTime), then compares the state vectors entry by entry.

What the oracle's getState reads, and why it is DeepMimic's definition here (deepmimic.md 3.2,
pybullet-port.md): the root is pybullet's base, the URDF's massless 'base' link whose frame is
the root joint; each link's position and orientation are getLinkStates' centre-of-mass frame,
which for this URDF (every inertial origin has rpy 0 and sits at DeepMimic's body attach point) is
DeepMimic's body frame; velocities are those of the centres of mass. So no entry needs a
separate comparison against DeepMimic's definition. Its only departures are the zero-axis action
below and that its root height is not taken relative to the ground (the plane is at 0 here).

The env part of the port needs no TensorFlow: it is imported in this process, with the gym stub
of tests/oracle/wheel_port.py (removed from sys.modules again once the import is done).
"""
import sys

import numpy as np
import pybullet as p
import pybullet_data
import pytest

from env.anim.character import CharacterDesc
from env.deepmimic_env import DeepMimicEnv
from env.sim.ct_action import build_action_layout
from env.sim.ctrl_params import CtrlParams
from util import math_util
from util.arg_parser import load_args

CTRL_2018 = "data/controllers/humanoid3d_ctrl_2018.txt"
CLIPS = ["walk", "run", "backflip", "cartwheel", "spinkick"]
# The oracle's arithmetic is float32: pybullet's multiplyTransforms, rotateVector and
# getQuaternionFromAxisAngle round their inputs and results to float32 (about 6e-8 relative per
# operation), so an entry of size m can only be checked to about m * 1e-6. The tolerance is 1e-5,
# relative for entries larger than 1 (angular velocities reach 20 rad/s in the backflip).
STATE_TOL = 1e-5
NUM_RESETS = 4          # RSI states per clip
NUM_ROLLOUTS = 2        # ... and rollouts from RSI states, compared at every decision
ROLLOUT_DECISIONS = 8
# the oracle's joint order in its pose list (GetPose: base pos 3, base quat xyzw 4, then these)
REF_JOINTS = [1, 2, 3, 4, 5, 6, 7, 9, 10, 11, 12, 13]


def _import_oracle_env():
    from tests.oracle import wheel_port
    stubbed = {"gym", "gym.envs", "gym.envs.registration"}
    had = {name: sys.modules[name] for name in stubbed if name in sys.modules}
    wheel_port.install_gym_stub()
    try:
        from pybullet_envs.deep_mimic.env import humanoid_stable_pd, motion_capture_data, pybullet_deep_mimic_env
        from pybullet_utils import bullet_client
    finally:
        for name in stubbed:
            sys.modules.pop(name, None)
        sys.modules.update(had)
    return humanoid_stable_pd, motion_capture_data, pybullet_deep_mimic_env, bullet_client


@pytest.fixture(scope="module")
def oracle():
    humanoid_stable_pd, motion_capture_data, deep_mimic_env, bullet_client = _import_oracle_env()
    client = bullet_client.BulletClient(connection_mode=p.DIRECT)
    client.setAdditionalSearchPath(pybullet_data.getDataPath())

    def humanoid(clip):
        mocap = motion_capture_data.MotionCaptureData()
        mocap.Load(f"{pybullet_data.getDataPath()}/data/motions/humanoid3d_{clip}.txt")
        return humanoid_stable_pd.HumanoidStablePD(client, mocap, 1.0 / 240, useFixedBase=False)

    # an env object without its constructor (which builds a world): only the layout methods are used
    env = object.__new__(deep_mimic_env.PyBulletDeepMimicEnv)
    yield {"humanoid": humanoid, "env": env, "client": client}
    client.disconnect()


def make_env(clip):
    args = ["--arg_file", f"args/train_humanoid3d_{clip}_args.txt", "--char_ctrl_files", CTRL_2018]
    return DeepMimicEnv(load_args(args), seed=1)


def copy_into_oracle(scene, ref):
    """Our simulated character's base and joints, velocities included, into the oracle's body;
    our controller time into its time."""
    client, body, sim = ref._pybullet_client, ref._sim_model, scene.sim_char
    pose, vel = sim.get_state()      # character units = the oracle's (globalScaling 0.25)
    client.resetBasePositionAndOrientation(body, pose[0:3].tolist(), math_util.quat_to_pybullet(pose[3:7]).tolist())
    client.resetBaseVelocity(body, vel[0:3].tolist(), vel[3:6].tolist())
    desc = scene.char_desc
    positions = [math_util.quat_to_pybullet(pose[desc.param_offset[j]:desc.param_offset[j] + 4]).tolist()
                 if desc.param_size[j] == 4 else [pose[desc.param_offset[j]]] for j in sim.actuated_ids]
    velocities = [vel[a:b].tolist() for a, b in sim._joint_vel_slices]
    client.resetJointStatesMultiDof(body, sim.actuated_ids, positions, velocities)
    ref.setSimTime(scene.ctrl.time)


def turn_heading(scene, rng):
    """Turns the whole character about the vertical through its root by a random angle (RSI alone
    keeps each clip's own headings)."""
    pose, vel = scene.sim_char.get_state()
    yaw = math_util.quat_from_axis_angle([0.0, 1.0, 0.0], rng.uniform(-np.pi, np.pi))
    pose[3:7] = math_util.quat_mul(yaw, pose[3:7])
    vel[0:3] = math_util.quat_rotate(yaw, vel[0:3])
    vel[3:6] = math_util.quat_rotate(yaw, vel[3:6])
    scene.sim_char.set_state(pose, vel)
    scene._touch()


def compare(env, ref, diffs):
    ours = env.record_state(0)
    copy_into_oracle(env, ref)
    theirs = np.array(ref.getState())
    assert ours.shape == theirs.shape == (197,)
    diff = np.abs(ours - theirs)
    diffs.append((diff.max(), (diff / np.maximum(1.0, np.abs(theirs))).max()))
    worst = int(np.argmax(diff / np.maximum(1.0, np.abs(theirs))))
    assert diff[worst] < STATE_TOL * max(1.0, abs(theirs[worst])), \
        f"state entry {worst}: ours {ours[worst]}, the oracle's {theirs[worst]}"


@pytest.mark.parametrize("clip", CLIPS)
def test_state_2018_equals_reference_getState(oracle, clip):
    env = make_env(clip)
    scene = env
    ref = oracle["humanoid"](clip)
    rng = np.random.default_rng(CLIPS.index(clip))
    assert ref.getCycleTime() == pytest.approx(scene.motion.duration, abs=1e-9)   # same phase clock
    rsi, rollout = [], []
    for i in range(NUM_RESETS):
        env.reset()
        if i % 2:
            turn_heading(scene, rng)
        compare(env, ref, rsi)
    # states the physics produced: PD towards the reference pose plus exploration-sized noise
    noise = 0.1 / scene.ctrl.action_layout.scale
    for _ in range(NUM_ROLLOUTS):
        env.reset()
        turn_heading(scene, rng)
        for _ in range(ROLLOUT_DECISIONS):
            env.set_action(0, scene.calc_ref_action() + noise * rng.normal(size=noise.size))
            while True:
                env.update(1.0 / 600.0)
                if env.need_new_action(0) or env.is_episode_end():
                    break
            if env.is_episode_end():
                break
            compare(env, ref, rollout)
    assert len(rollout) >= ROLLOUT_DECISIONS
    rsi, rollout = np.max(rsi, axis=0), np.max(rollout, axis=0)
    print(f"\n{clip}: max |ours - oracle| (and relative to max(1, |entry|)) over the state: RSI "
          f"{rsi[0]:.1e} ({rsi[1]:.1e}), after simulated steps {rollout[0]:.1e} ({rollout[1]:.1e})")
    env.shutdown()


def test_state_normalisation_equals_reference(oracle):
    env = make_env("walk")
    ref_env = oracle["env"]
    np.testing.assert_array_equal(env.build_state_offset(0), ref_env.build_state_offset(0))
    np.testing.assert_array_equal(env.build_state_scale(0), ref_env.build_state_scale(0))
    np.testing.assert_array_equal(env.build_state_norm_groups(0), ref_env.build_state_norm_groups(0))
    assert env.get_goal_size(0) == ref_env.get_goal_size(0) == 0
    env.shutdown()


@pytest.fixture(scope="module")
def action_layout():
    desc = CharacterDesc.load("data/characters/humanoid3d.txt")
    return build_action_layout(CtrlParams.load(CTRL_2018, desc), desc)


def reference_targets(ref, action):
    """The oracle's PD targets of an action: (quaternions [w,x,y,z] (8, 4), angles (4,)) in joint
    id order, from its pose list."""
    pose = ref.convertActionToPose(list(action))
    sph, rev, i = [], [], 7
    for j in REF_JOINTS:
        if j in (4, 7, 10, 13):
            rev.append(pose[i])
            i += 1
        else:
            sph.append(math_util.quat_from_pybullet(pose[i:i + 4]))
            i += 4
    assert i == 43
    return np.array(sph), np.array(rev)


def test_action_2018_targets_equal_reference_convertActionToPose(oracle, action_layout):
    layout, ref = action_layout, oracle["humanoid"]("walk")
    rng = np.random.default_rng(7)
    # policy-like actions (a_norm-unnormalised N(0, 1)), actions anywhere in the bounds, and beyond
    mean, std = -layout.offset, 1.0 / layout.scale
    actions = [mean + std * rng.normal(size=layout.size) for _ in range(200)]
    actions += [rng.uniform(layout.bound_min, layout.bound_max) for _ in range(200)]
    actions += [mean + 3.0 * std * rng.normal(size=layout.size) for _ in range(50)]
    worst = 0.0
    for action in actions:
        ours_sph, ours_rev = layout.to_targets(action)
        ref_sph, ref_rev = reference_targets(ref, action)
        # the same quaternions, sign included, to the oracle's float32 precision (its angle alone
        # is rounded to float32: up to 1e-6 rad for the largest angles here)
        worst = max(worst, np.abs(ours_sph - ref_sph).max(), np.abs(ours_rev - ref_rev).max())
        np.testing.assert_allclose(ours_sph, ref_sph, atol=1e-5)
        np.testing.assert_array_equal(ours_rev, ref_rev)
    print(f"\nmax |ours - oracle| over {len(actions)} actions' PD targets: {worst:.2e}")


def test_action_2018_zero_axis_follows_deepmimic(oracle, action_layout):
    """A spherical joint's zero axis: DeepMimic's cCtPDController (ENABLE_PD_SPHERE_AXIS) turns
    about z. The oracle differs (a bug of theirs, harmless in practice since the normalised axis z
    has offset 0.2): pybullet's getQuaternionFromAxisAngle turns a zero axis into x. Ours follows
    DeepMimic."""
    layout, ref = action_layout, oracle["humanoid"]("walk")
    action = -layout.offset.copy()
    action[layout.sph_cols[:, 1:]] = 0.0
    action[layout.sph_cols[:, 0]] = 0.8
    ours_sph, _ = layout.to_targets(action)
    about_z = [np.cos(0.4), 0.0, 0.0, np.sin(0.4)]
    np.testing.assert_allclose(ours_sph, np.tile(about_z, (8, 1)), atol=1e-12)
    ref_sph, _ = reference_targets(ref, action)
    np.testing.assert_allclose(ref_sph, np.tile([np.cos(0.4), np.sin(0.4), 0.0, 0.0], (8, 1)), atol=1e-6)


def test_action_normalisation_and_bounds_equal_reference(oracle, action_layout):
    layout, ref_env = action_layout, oracle["env"]
    assert layout.size == ref_env.get_action_size(0) == 36
    np.testing.assert_allclose(layout.offset, ref_env.build_action_offset(0), atol=1e-9)
    np.testing.assert_allclose(layout.scale, ref_env.build_action_scale(0), rtol=1e-9)
    np.testing.assert_allclose(layout.bound_min, ref_env.build_action_bound_min(0), atol=1e-8)
    np.testing.assert_allclose(layout.bound_max, ref_env.build_action_bound_max(0), atol=1e-8)
