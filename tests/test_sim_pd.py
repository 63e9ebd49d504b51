"""Stable PD: pybullet's built-in command vs our numpy formula, gain scaling, torque clamps."""
import numpy as np
import pybullet as p
import pytest

from env.anim.character import CharacterDesc
from env.anim.kin_character import KinCharacter
from env.sim.ctrl_params import CtrlParams
from env.sim.pd_controller import BuiltinStablePD, ExactStablePD, build_pd_controller
from env.sim.sim_character import SimCharacter
from env.sim.world import World
from util import math_util


@pytest.fixture(scope="module")
def desc():
    return CharacterDesc.load("data/characters/humanoid3d.txt")


@pytest.fixture(scope="module")
def gains(desc):
    params = CtrlParams.load("data/controllers/humanoid3d_ctrl.txt", desc)
    return params.kp, params.kd, np.array([j.torque_lim for j in desc.joints])


def start_state(desc, rng, height):
    pose = KinCharacter(desc).default_pose()
    vel = np.zeros(desc.dof_size)
    pose[1] = height
    pose[3:7] = math_util.quat_from_exp_map([0.05, 0.3, -0.05])
    vel[0:6] = [0.2, 0.1, -0.1, 0.3, -0.2, 0.1]
    for j in desc.joints[1:]:
        o, v = desc.param_offset[j.id], desc.dof_offset[j.id]
        if desc.param_size[j.id] == 4:
            pose[o:o + 4] = math_util.quat_from_exp_map(0.3 * rng.normal(size=3))
            vel[v:v + 3] = rng.normal(size=3)
        elif desc.param_size[j.id] == 1:
            pose[o] = 0.5 * (j.limit_low + j.limit_high)
            vel[v] = rng.normal()
    return pose, vel


def random_targets(sim, rng):
    sph = math_util.quat_from_exp_map(0.5 * rng.normal(size=(len(sim.sph_ids), 3)))
    rev = np.array([-0.6 if sim.desc.joints[j].limit_high == 0 else 0.6 for j in sim.rev_ids])
    return sph, rev


def run(desc, mode, scale, kp, kd, lim, steps, height=1.5, num_sim_substeps=2, seed=1, collide=True):
    world = World(world_scale=scale, num_sim_substeps=num_sim_substeps, timestep=1.0 / 600.0)
    sim = SimCharacter(world, desc)
    if not collide:
        for link in range(desc.num_joints):
            p.setCollisionFilterGroupMask(sim.body, link, 0, 0, physicsClientId=world.client)
    rng = np.random.default_rng(seed)
    sim.set_state(*start_state(desc, rng, height))
    pd = build_pd_controller(mode, sim, kp, kd, lim)
    pd.set_targets(*random_targets(sim, rng))
    for _ in range(steps):
        pd.apply(1.0 / 600.0)
        world.step()
    state = sim.get_state()
    world.shutdown()
    return state


@pytest.mark.parametrize("height", [1.5, 0.88])  # in the air; standing on the ground
def test_builtin_equals_exact_formula_when_unclamped(desc, gains, height):
    """pybullet's STABLE_PD_CONTROL at a 1/600 s step with 2 internal sub-steps is DeepMimic's stable
    PD computed once per 1/600 s: the numpy formula gives the same motion."""
    kp, kd, _ = gains
    big = np.full(desc.num_joints, 1e9)
    builtin = run(desc, "builtin", 4.0, kp, kd, big, 20, height)
    exact = run(desc, "exact", 4.0, kp, kd, big, 20, height)
    assert np.allclose(builtin[0], exact[0], atol=1e-8)
    assert np.allclose(builtin[1], exact[1], atol=1e-6)


@pytest.mark.parametrize("mode", ["builtin", "exact", "tree"])
def test_gains_scale_with_world_scale(desc, gains, mode):
    """Lengths x s, gravity x s, gains and torque limits x s^2: the same motion in character units.
    (Collisions off: Bullet's contact margins are absolute lengths, so contacts are not scale-free.)"""
    kp, kd, lim = gains
    small = run(desc, mode, 1.0, kp, kd, lim, 60, collide=False)
    large = run(desc, mode, 4.0, kp, kd, lim, 60, collide=False)
    assert np.allclose(small[0], large[0], atol=1e-7)
    assert np.allclose(small[1], large[1], atol=1e-5)


def test_exact_clamps_torque_vector_length(desc, gains):
    """With a low limit every joint saturates; DeepMimic scales the torque vector down to the limit
    (direction kept), unlike pybullet's per-component clamp."""
    kp, kd, _ = gains
    lim = np.full(desc.num_joints, 5.0)
    world = World(world_scale=4.0, num_sim_substeps=1, timestep=1.0 / 600.0)
    sim = SimCharacter(world, desc)
    rng = np.random.default_rng(2)
    start = start_state(desc, rng, 1.5)
    targets = random_targets(sim, rng)
    results = {}
    for mode in ("exact", "manual", "builtin"):
        sim.set_state(*start)
        sim.disable_default_motors()
        pd = (ExactStablePD if mode != "builtin" else BuiltinStablePD)(sim, kp, kd, lim)
        pd.set_targets(*targets)
        if mode == "manual":
            torques = pd.joint_torques(pd.calc_torques(1.0 / 600.0))
            norms = np.array([np.linalg.norm(t) for t in torques])
            assert np.all(norms > pd.torque_lim)
            forces = [(t * (l / np.linalg.norm(t))).tolist() for t, l in zip(torques, pd.torque_lim)]
            p.setJointMotorControlMultiDofArray(sim.body, pd.joint_ids, p.TORQUE_CONTROL, forces=forces,
                                                physicsClientId=world.client)
        else:
            pd.apply(1.0 / 600.0)
        world.step()
        results[mode] = sim.get_state()[1]
    assert np.allclose(results["exact"], results["manual"], atol=1e-10)
    assert not np.allclose(results["exact"], results["builtin"], atol=1e-3)
    world.shutdown()


def test_unknown_pd_mode(desc, gains):
    world = World()
    sim = SimCharacter(world, desc)
    with pytest.raises(ValueError, match="PDMode 'fast'"):
        build_pd_controller("fast", sim, *gains)
    world.shutdown()
