"""The multibody built from the character file equals the wheel's humanoid URDF (SimCharacter from_urdf=True)."""
import numpy as np
import pybullet as p
import pytest

from env.anim.character import CharacterDesc
from env.anim.kin_character import KinCharacter
from env.sim.character_builder import build_multibody, shape_inertias
from env.sim.sim_character import SimCharacter
from env.sim.world import World
from util import math_util
from tests.test_sim_character import CHAR_FILE, random_state

SCALE = 4.0


@pytest.fixture(scope="module")
def desc():
    return CharacterDesc.load(CHAR_FILE)


@pytest.fixture()
def urdf_and_built(desc):
    """(world, URDF body id, built body id) in one world, the URDF one through SimCharacter."""
    world = World(world_scale=SCALE)
    urdf = SimCharacter(world, desc, from_urdf=True).body
    built = build_multibody(desc, SCALE, world.client)
    return world, urdf, built


def test_links_joints_masses_and_inertias_match_the_urdf(desc, urdf_and_built):
    world, urdf, built = urdf_and_built
    c = world.client
    assert p.getDynamicsInfo(built, -1, physicsClientId=c)[:3] == p.getDynamicsInfo(urdf, -1, physicsClientId=c)[:3]
    assert p.getNumJoints(built, physicsClientId=c) == p.getNumJoints(urdf, physicsClientId=c) == desc.num_joints
    for j in range(desc.num_joints):
        iu, ib = p.getJointInfo(urdf, j, physicsClientId=c), p.getJointInfo(built, j, physicsClientId=c)
        du, db = p.getDynamicsInfo(urdf, j, physicsClientId=c), p.getDynamicsInfo(built, j, physicsClientId=c)
        assert ib[2] == iu[2], f"joint {j} type"
        assert ib[16] == iu[16] == desc.joints[j].parent, f"joint {j} parent"
        assert np.allclose(ib[14], iu[14], atol=1e-9), f"joint {j} parent frame position"
        assert np.allclose(ib[15], iu[15], atol=1e-9), f"joint {j} parent frame rotation"
        assert db[0] == du[0] == desc.bodies[j].mass
        assert np.allclose(db[2], du[2], rtol=1e-9), f"body {j} inertia"
        assert np.allclose(db[3], du[3], atol=1e-9), f"body {j} inertial frame"
        assert db[1] == du[1] == 0.9  # lateral friction
        assert p.getCollisionShapeData(built, j, physicsClientId=c)[0][2] == \
            p.getCollisionShapeData(urdf, j, physicsClientId=c)[0][2], f"body {j} shape type"
    # inertia by hand: the root sphere (d 0.18 m at scale 1), 2/5 m r^2
    assert np.allclose(shape_inertias(desc, SCALE)[0], 0.4 * 6.0 * (0.5 * 0.18 * SCALE) ** 2)
    assert np.allclose(p.getDynamicsInfo(built, 0, physicsClientId=c)[2], 0.4 * 6.0 * (0.5 * 0.18 * SCALE) ** 2)


def test_forward_kinematics_and_shapes_match_the_urdf_in_random_poses(desc, urdf_and_built):
    world, urdf, built = urdf_and_built
    c = world.client
    sim = SimCharacter(world, desc)  # reuse its pose writer on both bodies
    rng = np.random.default_rng(5)
    links = list(range(desc.num_joints))
    for _ in range(3):
        pose, vel = random_state(desc, rng)
        states = []
        for body in (urdf, built):
            sim.body = body
            sim.set_state(pose, vel)
            states.append(p.getLinkStates(body, links, computeLinkVelocity=1, computeForwardKinematics=1,
                                          physicsClientId=c))
        for su, sb in zip(*states):
            for field in (0, 1, 4, 5, 6, 7):  # centre, rotation, link frame, velocities
                assert np.allclose(sb[field], su[field], atol=1e-9)
        for j in links:  # same collider placement: AABBs equal up to the URDF capsule's 1 mm margin
            au, ab = p.getAABB(urdf, j, physicsClientId=c), p.getAABB(built, j, physicsClientId=c)
            assert np.allclose(ab, au, atol=2e-3 * SCALE), f"body {j} AABB"


def test_revolute_limit_stops_a_knee_as_the_urdf_limit_does(desc):
    """In free fall a knee (limits [-3.14, 0]) started at -0.3 rad opening at +2 rad/s would pass 0 after
    ~0.14 s; the limit constraint stops it at 0 (unlimited it would be at about +0.15 rad at 0.2 s),
    with the URDF's limit the same trajectory."""
    knee = 4
    assert desc.joints[knee].limit_high == 0.0
    finals = []
    for from_urdf in (True, False):
        world = World(world_scale=SCALE, timestep=1.0 / 1200.0)
        c = world.client
        body = SimCharacter(world, desc, from_urdf=from_urdf).body
        p.resetBasePositionAndOrientation(body, [0, 20, 0], [0, 0, 0, 1], physicsClientId=c)
        p.resetJointState(body, knee, -0.3, 2.0, physicsClientId=c)
        for _ in range(240):
            world.step()
        finals.append(p.getJointState(body, knee, physicsClientId=c)[:2])
        world.shutdown()
    angle, speed = finals[1]
    assert -0.02 < angle <= 0.0 and speed <= 0.0
    assert np.allclose(finals[1], finals[0], atol=1e-9)


DOG_FILE = "data/characters/dog3d.txt"


def test_dog3d_builds_with_its_masses_rotated_bodies_and_layout():
    """dog3d (DeepMimic's file): 23 joints, 29.25 kg, pose 83 = 7 + 18 x 4 + 4 x 1, the root's AttachZ 50
    ignored, and the neck capsule (d 0.07, h 0.08, AttachThetaZ -pi/2) lying along x, not y."""
    dog = CharacterDesc.load(DOG_FILE)
    assert dog.num_joints == 23 and dog.pose_size == 83 and dog.dof_size == 64
    assert sum(b.mass for b in dog.bodies) == pytest.approx(29.25)
    assert np.all(dog.joints[0].attach_pt == 0.0)
    world = World(world_scale=SCALE)
    c = world.client
    body = build_multibody(dog, SCALE, c)
    assert [p.getDynamicsInfo(body, j, physicsClientId=c)[0] for j in range(23)] == [b.mass for b in dog.bodies]
    neck = 3
    lo, hi = np.array(p.getAABB(body, neck, physicsClientId=c))
    r, h = 0.5 * 0.07 * SCALE, 0.08 * SCALE
    assert np.allclose(hi - lo, [h + 2 * r, 2 * r, 2 * r], atol=1e-5)
    neck_x = (0.2375 + 0.28135 + 0.075) * SCALE  # spine1 + neck joint attach + neck body attach
    assert np.allclose(p.getLinkState(body, neck, physicsClientId=c)[0], [neck_x, 0, 0], atol=1e-9)
    # the inertia diagonal stays the body-frame one, by hand: Bullet's capsule inertia is its bounding
    # box's (2r, h + 2r, 2r), long axis y, 1 kg: m/12 (b^2 + c^2) per axis
    bx, by = 0.07 * SCALE, (0.08 + 0.07) * SCALE
    by_hand = np.array([by ** 2 + bx ** 2, 2 * bx ** 2, bx ** 2 + by ** 2]) / 12.0
    assert np.allclose(p.getDynamicsInfo(body, neck, physicsClientId=c)[2], by_hand, rtol=1e-9)
    world.shutdown()


def test_dog3d_state_round_trip_and_joint_positions_match_our_kinematics():
    """Rotated bodies on spherical joints (neck, tails: Rb != I): pybullet keeps those joints in the child
    inertial frame, SimCharacter converts. Joint origins and body centres (which do not depend on Rb)
    from pybullet's forward kinematics equal KinCharacter's for random poses, including the head and
    tail1 joints downstream of the rotated neck and tail0; body rotations (joint rotation * Rb) too."""
    dog = CharacterDesc.load(DOG_FILE)
    world = World(world_scale=SCALE)
    sim = SimCharacter(world, dog)
    assert sorted(sim._sph_body_rots) == [3, 21, 22]
    kin = KinCharacter(dog)
    rng = np.random.default_rng(11)
    for _ in range(3):
        pose, vel = random_state(dog, rng)
        sim.set_state(pose, vel)
        pose2, vel2 = sim.get_state()
        assert np.allclose(vel2, vel, atol=1e-9)
        quat_cols = [dog.param_offset[j] + np.arange(4) for j in sim.sph_ids]
        for cols in quat_cols:
            assert min(np.abs(pose2[cols] - pose[cols]).max(), np.abs(pose2[cols] + pose[cols]).max()) < 1e-9
        bodies = sim.get_body_states()
        joint_pos, _ = kin.calc_joint_world(pose)
        body_pos, body_rot = kin.calc_body_world(pose)
        assert np.allclose(bodies.joint_pos, joint_pos, atol=1e-9)
        assert np.allclose(bodies.pos, body_pos, atol=1e-9)
        assert np.all(math_util.quat_diff_angle(bodies.rot, body_rot) < 1e-7)  # Rb included on both sides
    world.shutdown()


def test_attach_theta_is_pybullets_euler_convention():
    """Body rotation R = Rz Ry Rx: our quaternions equal pybullet's getQuaternionFromEuler, which the builder uses."""
    from env.anim.kin_character import _euler_xyz_quats
    thetas = np.random.default_rng(2).normal(size=(6, 3))
    ours = _euler_xyz_quats(thetas)
    theirs = np.array([math_util.quat_from_pybullet(p.getQuaternionFromEuler(t.tolist())) for t in thetas])
    assert np.allclose(ours, theirs, atol=1e-12)
