"""The simulated humanoid: URDF vs character file, layout conversions, scaling, contacts."""
import dataclasses

import numpy as np
import pybullet as p
import pytest

from env.anim.character import CharacterDesc
from env.anim.kin_character import KinCharacter
from env.sim.sim_character import SimCharacter
from env.sim.world import World
from util import math_util

CHAR_FILE = "data/characters/humanoid3d.txt"


@pytest.fixture(scope="module")
def desc():
    return CharacterDesc.load(CHAR_FILE)


def random_state(desc, rng, height=1.5):
    pose = KinCharacter(desc).default_pose()
    pose[0:3] = [0.3, height, -0.2]
    pose[3:7] = math_util.quat_from_exp_map(rng.normal(size=3))
    for j in desc.joints[1:]:
        o = desc.param_offset[j.id]
        if desc.param_size[j.id] == 4:
            pose[o:o + 4] = math_util.quat_from_exp_map(rng.normal(size=3))
        elif desc.param_size[j.id] == 1:
            pose[o] = rng.uniform(j.limit_low, j.limit_high)
    return pose, rng.normal(size=desc.dof_size)


@pytest.mark.parametrize("scale", [1.0, 4.0])
def test_state_round_trip_and_forward_kinematics_match_the_character_file(desc, scale):
    """pybullet's link states equal our own forward kinematics: same skeleton, same pose and
    velocity conventions (root angular velocity world, joint angular velocity joint-local)."""
    world = World(world_scale=scale)
    sim = SimCharacter(world, desc)
    kin = KinCharacter(desc)
    rng = np.random.default_rng(3)
    for _ in range(3):
        pose, vel = random_state(desc, rng)
        sim.set_state(pose, vel)
        pose2, vel2 = sim.get_state()
        assert np.allclose(vel2, vel, atol=1e-12)
        assert np.allclose(pose2[0:3], pose[0:3], atol=1e-12)
        quats = np.array([pose[desc.param_offset[j]:desc.param_offset[j] + 4] for j in sim.sph_ids] + [pose[3:7]])
        quats2 = np.array([pose2[desc.param_offset[j]:desc.param_offset[j] + 4] for j in sim.sph_ids] + [pose2[3:7]])
        assert np.all(math_util.quat_diff_angle(quats, quats2) < 1e-7)
        assert np.all(quats2[:-1, 0] >= 0.0)
        assert np.allclose(pose2[[desc.param_offset[j] for j in sim.rev_ids]],
                           pose[[desc.param_offset[j] for j in sim.rev_ids]], atol=1e-12)

        bodies = sim.get_body_states()
        pos, rot = kin.calc_body_world(pose)
        joint_pos, _ = kin.calc_joint_world(pose)
        lin, ang = kin.calc_body_vel_world(pose, vel)
        assert np.allclose(bodies.pos, pos, atol=1e-9)
        assert np.all(math_util.quat_diff_angle(bodies.rot, rot) < 1e-7)
        assert np.allclose(bodies.joint_pos, joint_pos, atol=1e-6)  # URDF offsets have 6 decimals
        assert np.allclose(bodies.vel, lin, atol=1e-9)
        assert np.allclose(bodies.ang_vel, ang, atol=1e-9)
        assert np.allclose(sim.calc_com_vel(bodies), kin.calc_com(pose, vel)[1], atol=1e-9)
        lean_joint_pos, lean_com_vel = sim.get_joint_pos_com_vel()
        assert np.allclose(lean_joint_pos, joint_pos, atol=1e-6)
        assert np.allclose(lean_com_vel, kin.calc_com(pose, vel)[1], atol=1e-9)
    world.shutdown()


def test_physics_settings(desc):
    world = World(world_scale=4.0)
    sim = SimCharacter(world, desc)
    for j, body in enumerate(desc.bodies):
        info = p.getDynamicsInfo(sim.body, j, physicsClientId=world.client)
        assert info[0] == body.mass
        assert info[1] == pytest.approx(0.9)
    assert sum(b.mass for b in desc.bodies) == pytest.approx(45.0)
    # sphere inertia from the collision shape (URDF inertia tags ignored): 2/5 m r^2 at 4x scale
    root = p.getDynamicsInfo(sim.body, 0, physicsClientId=world.client)
    assert root[2][0] == pytest.approx(0.4 * 6.0 * (4 * 0.09) ** 2)
    world.shutdown()  # revolute limits: tests/test_character_builder.py (they act, getJointInfo does not list them)


def test_urdf_mismatch_is_a_one_line_error(desc):
    bodies = list(desc.bodies)
    bodies[3] = dataclasses.replace(bodies[3], mass=5.0)
    wrong = CharacterDesc(desc.path, desc.joints, bodies)
    world = World()
    with pytest.raises(ValueError, match=r"link 3 \(right_hip\) mass is 4.5.*says 5.0"):
        SimCharacter(world, wrong, from_urdf=True)
    world.shutdown()


@pytest.mark.parametrize("scale", [1.0, 4.0])
def test_free_fall_is_scale_invariant(desc, scale):
    """Gravity x world_scale: in character units a body falls 0.5 g t^2 whatever the scale."""
    world = World(world_scale=scale, num_sim_substeps=2, timestep=1.0 / 600.0)
    sim = SimCharacter(world, desc)
    pose = KinCharacter(desc).default_pose()
    pose[1] = 5.0
    sim.set_state(pose, np.zeros(desc.dof_size))
    for _ in range(120):
        world.step()
    # semi-implicit Euler over 240 sub-steps of 1/1200 s: drop = g dt^2 n (n + 1) / 2
    n, dt = 240, 1.0 / 1200.0
    assert sim.get_root_pos()[1] == pytest.approx(5.0 - 9.8 * dt * dt * n * (n + 1) / 2, abs=1e-9)
    world.shutdown()


def test_fall_contact_bodies(desc):
    world = World(world_scale=4.0, num_sim_substeps=2)
    sim = SimCharacter(world, desc)
    assert sim.fall_contact_bodies == [b.id for b in desc.bodies if b.enable_fall_contact]
    sim.set_fall_contact_bodies([0, 1, 2, 3, 4, 6, 7, 8, 9, 10, 12, 13, 14])
    assert 5 not in sim.fall_contact_bodies and 11 not in sim.fall_contact_bodies
    with pytest.raises(ValueError, match="fall_contact_bodies"):
        sim.set_fall_contact_bodies([15])

    pose = KinCharacter(desc).default_pose()
    pose[1] = 0.88  # standing, feet (non-fall bodies) 1 mm into the ground
    sim.set_state(pose, np.zeros(desc.dof_size))
    world.step()
    contacts = {c[3] for c in p.getContactPoints(sim.body, world.ground, physicsClientId=world.client)}
    assert contacts and contacts <= {5, 11}
    assert not sim.has_fall_contact(world.ground)
    pose[1] = 0.05  # root sphere (radius 0.09) in the ground
    pose[3:7] = math_util.quat_from_axis_angle([0, 0, 1], np.pi / 2)  # lying on its back
    sim.set_state(pose, np.zeros(desc.dof_size))
    world.step()
    assert sim.has_fall_contact(world.ground)
    world.shutdown()


def test_body_aabbs_from_shapes(desc):
    kin = KinCharacter(desc)
    pose = kin.default_pose()
    pos, rot = kin.calc_body_world(pose)
    mins, maxs = desc.body_aabbs(pos, rot)
    assert np.allclose(maxs[0] - mins[0], 0.18)                       # root sphere, diameter 0.18
    assert np.allclose(maxs[3] - mins[3], [0.11, 0.11 + 0.3, 0.11])   # hip capsule along y
    assert np.allclose(maxs[5] - mins[5], [0.177, 0.055, 0.09])       # ankle box
    # turn the hip capsule a quarter about z: its length now lies along x
    rot[3] = math_util.quat_from_axis_angle([0, 0, 1], np.pi / 2)
    mins, maxs = desc.body_aabbs(pos, rot)
    assert np.allclose(maxs[3] - mins[3], [0.41, 0.11, 0.11])
