"""Forward kinematics against pybullet's own on the wheel's humanoid URDF (the humanoid3d at 4x
scale), the character file against that URDF, and the kinematic reference character."""
import json
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pybullet
import pybullet_data
import pytest

from env.anim.character import CharacterDesc, CharacterError, JointType
from env.anim.kin_character import KinCharacter
from env.anim.motion import Motion
from util import math_util as mu
from util.paths import project_root

URDF = Path(pybullet_data.getDataPath()) / "humanoid/humanoid.urdf"
URDF_SCALE = 4.0
FK_CLIPS = ["walk", "run", "backflip", "cartwheel", "spinkick"]


@pytest.fixture(scope="module")
def desc():
    return CharacterDesc.load("data/characters/humanoid3d.txt")


@pytest.fixture(scope="module")
def kin(desc):
    return KinCharacter(desc)


@pytest.fixture(scope="module")
def bullet(desc):
    """(client id, humanoid id): the URDF in DIRECT mode, links in file order (= our joint ids)."""
    client = pybullet.connect(pybullet.DIRECT)
    humanoid = pybullet.loadURDF(str(URDF), flags=pybullet.URDF_MAINTAIN_LINK_ORDER, physicsClientId=client)
    names = [pybullet.getJointInfo(humanoid, i, physicsClientId=client)[1].decode()
             for i in range(pybullet.getNumJoints(humanoid, physicsClientId=client))]
    assert names == [j.name for j in desc.joints]
    yield client, humanoid
    pybullet.disconnect(client)


def apply_pose(bullet, desc, pose, vel):
    """Our pose (DeepMimic units) on the URDF humanoid: lengths x 4, quaternions to x y z w."""
    client, humanoid = bullet
    pybullet.resetBasePositionAndOrientation(humanoid, URDF_SCALE * pose[0:3], mu.quat_to_pybullet(pose[3:7]),
                                             physicsClientId=client)
    pybullet.resetBaseVelocity(humanoid, URDF_SCALE * vel[0:3], vel[3:6], physicsClientId=client)
    for joint in desc.joints[1:]:
        p, d = desc.param_offset[joint.id], desc.dof_offset[joint.id]
        if joint.type is JointType.SPHERICAL:
            pybullet.resetJointStateMultiDof(humanoid, joint.id, mu.quat_to_pybullet(pose[p:p + 4]),
                                             vel[d:d + 3], physicsClientId=client)
        elif joint.type is JointType.REVOLUTE:
            pybullet.resetJointState(humanoid, joint.id, pose[p], vel[d], physicsClientId=client)
    states = pybullet.getLinkStates(humanoid, list(range(desc.num_joints)), computeLinkVelocity=1,
                                    computeForwardKinematics=1, physicsClientId=client)
    # link frame (= joint frame), link centre of mass (= body centre), rotation, velocities
    return {key: np.array([s[i] for s in states]) for key, i in
            (("joint_pos", 4), ("body_pos", 0), ("rot_xyzw", 5), ("lin_vel", 6), ("ang_vel", 7))}


def random_frames(motion, count, seed):
    times = np.random.default_rng(seed).uniform(-motion.duration, 2.0 * motion.duration, count)
    return np.array([motion.calc_frame(t) for t in times]), np.array([motion.calc_vel(t) for t in times])


@pytest.mark.parametrize("clip", FK_CLIPS)
def test_forward_kinematics_matches_pybullet(desc, kin, bullet, clip):
    motion = Motion.load(f"data/motions/humanoid3d_{clip}.txt", desc)
    poses, vels = random_frames(motion, 200, seed=len(clip))
    joint_pos, joint_rot = kin.calc_joint_world(poses)  # all 200 at once
    body_pos, body_rot = kin.calc_body_world(poses)
    body_lin, body_ang = kin.calc_body_vel_world(poses, vels)
    for n in range(len(poses)):
        link = apply_pose(bullet, desc, poses[n], vels[n])
        np.testing.assert_allclose(URDF_SCALE * joint_pos[n], link["joint_pos"], atol=1e-4, rtol=0)
        np.testing.assert_allclose(URDF_SCALE * body_pos[n], link["body_pos"], atol=1e-4, rtol=0)
        link_rot = mu.quat_from_pybullet(link["rot_xyzw"])
        assert np.all(mu.quat_diff_angle(joint_rot[n], link_rot) < 1e-4)
        np.testing.assert_array_equal(body_rot[n], joint_rot[n])
        np.testing.assert_allclose(URDF_SCALE * body_lin[n], link["lin_vel"], atol=1e-6, rtol=0)
        np.testing.assert_allclose(body_ang[n], link["ang_vel"], atol=1e-6, rtol=0)


def test_centre_of_mass_matches_pybullet_links(desc, kin, bullet):
    motion = Motion.load("data/motions/humanoid3d_run.txt", desc)
    masses = np.array([b.mass for b in desc.bodies])
    for pose, vel in zip(*random_frames(motion, 5, seed=3)):
        link = apply_pose(bullet, desc, pose, vel)
        com, com_vel = kin.calc_com(pose, vel)
        np.testing.assert_allclose(URDF_SCALE * com, masses @ link["body_pos"] / masses.sum(), atol=1e-9)
        np.testing.assert_allclose(URDF_SCALE * com_vel, masses @ link["lin_vel"] / masses.sum(), atol=1e-9)


def test_forward_kinematics_by_hand(desc, kin):
    pose = kin.default_pose()
    pose[0:3] = [1.0, 2.0, 3.0]
    pos, rot = kin.calc_joint_world(pose)
    np.testing.assert_allclose(rot, np.tile(mu.quat_identity(), (15, 1)))
    # right wrist = root + chest + shoulder + elbow + wrist attach points
    np.testing.assert_allclose(pos[8], [1 - 0.02405, 2 + 0.236151 + 0.2435 - 0.274788 - 0.258947,
                                        3 + 0.18311])
    # knee bent by -pi/2 about its z: the shank points backwards (-x)
    pose[19] = -np.pi / 2
    pos, rot = kin.calc_joint_world(pose)
    np.testing.assert_allclose(pos[5] - pos[4], [-0.40987, 0, 0], atol=1e-15)
    body_pos, _ = kin.calc_body_world(pose)
    np.testing.assert_allclose(body_pos[5] - pos[5], [-0.0225, -0.045, 0], atol=1e-15)  # box turned too
    # root turned 90 degrees about y: the right hip (+z) moves to +x
    pose[3:7] = mu.quat_from_axis_angle([0, 1, 0], np.pi / 2)
    pos, _ = kin.calc_joint_world(pose)
    np.testing.assert_allclose(pos[3], [1 + 0.084887, 2, 3], atol=1e-15)


def test_velocities_by_hand(kin):
    pose = kin.default_pose()
    vel = np.zeros(34)
    vel[0:3] = [0.5, 0, -1]
    com, com_vel = kin.calc_com(pose, vel)
    np.testing.assert_allclose(com_vel, [0.5, 0, -1])
    vel[0:3] = 0
    vel[3:6] = [0, 2, 0]  # spin about y through the root
    _, com_vel = kin.calc_com(pose, vel)
    np.testing.assert_allclose(com_vel, np.cross([0, 2, 0], com - pose[0:3]), atol=1e-15)
    vel[3:6] = 0
    vel[15] = 3.0  # right knee rate: the ankle swings about z at the knee
    lin, ang = kin.calc_joint_vel_world(pose, vel)
    np.testing.assert_allclose(ang[5], [0, 0, 3])
    np.testing.assert_allclose(lin[5], np.cross([0, 0, 3], [0, -0.40987, 0]), atol=1e-15)
    np.testing.assert_allclose(lin[4], 0)


def test_reference_character_follows_motion_and_origin(desc):
    walk = Motion.load("data/motions/humanoid3d_walk.txt", desc)
    ref = KinCharacter(desc, walk)
    t = walk.frame_times[5]
    ref.set_time(t)
    np.testing.assert_allclose(ref.pose, walk.calc_frame(t))
    np.testing.assert_allclose(ref.vel, walk.calc_vel(t))
    assert ref.phase == pytest.approx(t / walk.duration)

    ref.set_root_pos([5.0, ref.root_pos[1], -2.0])
    np.testing.assert_allclose(ref.root_pos[[0, 2]], [5.0, -2.0])
    ref.set_heading(1.0)
    assert ref.calc_heading() == pytest.approx(1.0)
    np.testing.assert_allclose(ref.root_pos[[0, 2]], [5.0, -2.0], atol=1e-12)
    np.testing.assert_allclose(ref.calc_pose(t), ref.pose, atol=1e-12)
    np.testing.assert_allclose(ref.calc_vel(t), ref.vel, atol=1e-12)
    # joint-local parts untouched
    np.testing.assert_allclose(ref.pose[7:], walk.calc_frame(t)[7:])

    # the placed velocities are the rate of change of the placed pose
    h = 1e-7
    pose0, pose1 = ref.calc_pose(t), ref.calc_pose(t + h)
    np.testing.assert_allclose((pose1[0:3] - pose0[0:3]) / h, ref.vel[0:3], atol=1e-5)
    np.testing.assert_allclose(mu.quat_ang_vel(pose0[3:7], pose1[3:7], h), ref.vel[3:6], atol=1e-5)

    before = ref.root_pos.copy()
    ref.update(walk.duration)  # one cycle later: moved by the turned cycle offset
    turn = mu.quat_from_axis_angle([0, 1, 0], 1.0 - mu.quat_heading(walk.calc_frame(t)[3:7]))
    np.testing.assert_allclose(ref.root_pos - before, mu.quat_rotate(turn, walk.cycle_root_offset),
                               atol=1e-12)
    assert ref.time == pytest.approx(t + walk.duration)


def test_set_pose(desc, kin):
    ref = KinCharacter(desc)
    pose = kin.default_pose()
    pose[1] = 0.9
    ref.set_pose(pose)
    np.testing.assert_array_equal(ref.vel, np.zeros(34))
    np.testing.assert_array_equal(ref.root_pos, [0, 0.9, 0])
    np.testing.assert_array_equal(ref.root_rot, [1, 0, 0, 0])


# ---- the character file --------------------------------------------------------------------

def test_character_layout(desc):
    assert (desc.num_joints, desc.pose_size, desc.dof_size) == (15, 43, 34)
    assert desc.param_offset == [0, 7, 11, 15, 19, 20, 24, 28, 29, 29, 33, 34, 38, 42, 43]
    assert desc.param_size == [7, 4, 4, 4, 1, 4, 4, 1, 0, 4, 1, 4, 4, 1, 0]
    assert desc.dof_offset == [0, 6, 9, 12, 15, 16, 19, 22, 23, 23, 26, 27, 30, 33, 34]
    assert desc.dof_size_of == [6, 3, 3, 3, 1, 3, 3, 1, 0, 3, 1, 3, 3, 1, 0]


def test_character_table_values(desc):
    """deepmimic.md section 7."""
    assert [j.torque_lim for j in desc.joints[:9]] == [0, 200, 50, 200, 150, 90, 100, 60, 0]
    assert [j.diff_weight for j in desc.joints[:9]] == [1, 0.5, 0.3, 0.5, 0.3, 0.2, 0.3, 0.2, 0]
    assert sum(j.diff_weight for j in desc.joints) == pytest.approx(4.8)
    assert [j.id for j in desc.joints if j.is_end_effector] == [5, 8, 11, 14]
    assert [b.id for b in desc.bodies if not b.enable_fall_contact] == [5, 11]
    assert sum(b.mass for b in desc.bodies) == pytest.approx(45.0)
    assert [(j.limit_low, j.limit_high) for j in desc.joints if j.type is JointType.REVOLUTE] == \
        [(-3.14, 0.0), (0.0, 3.14)] * 2
    for right in range(3, 9):
        left = desc.joints[right + 6]
        assert left.name == desc.joints[right].name.replace("right", "left")
        np.testing.assert_array_equal(left.attach_pt * [1, 1, -1], desc.joints[right].attach_pt)


def test_character_geometry_is_the_urdf_over_4(desc):
    root = ET.fromstring(URDF.read_text().rstrip("\0\r\n"))  # the file ends in a NUL byte
    links = {link.get("name"): link for link in root.iter("link")}
    urdf_joints = {joint.get("name"): joint for joint in root.iter("joint")}
    kinds = {"fixed": JointType.ROOT, "spherical": JointType.SPHERICAL, "revolute": JointType.REVOLUTE}

    def xyz(element):
        return np.array([float(v) for v in element.get("xyz").split()]) / URDF_SCALE

    for joint, body in zip(desc.joints, desc.bodies):
        uj, link = urdf_joints[joint.name], links[joint.name]
        expected_type = JointType.FIXED if joint.name.endswith("wrist") else kinds[uj.get("type")]
        assert joint.type is expected_type
        if joint.id > 0:
            assert uj.find("parent").get("link") == desc.joints[joint.parent].name
        np.testing.assert_allclose(joint.attach_pt, xyz(uj.find("origin")), atol=1e-12)
        if joint.type is JointType.REVOLUTE:
            limit = uj.find("limit")
            limits = (float(limit.get("lower")), float(limit.get("upper")))
            assert (joint.limit_low, joint.limit_high) == limits
        assert body.mass == float(link.find("inertial/mass").get("value"))
        np.testing.assert_allclose(body.attach_pt, xyz(link.find("inertial/origin")), atol=1e-12)
        np.testing.assert_allclose(body.attach_pt, xyz(link.find("collision/origin")), atol=1e-12)
        geometry = link.find("collision/geometry")[0]
        assert body.shape == geometry.tag
        if geometry.tag == "sphere":
            np.testing.assert_allclose(body.size, [2 * float(geometry.get("radius")) / URDF_SCALE] * 3)
        elif geometry.tag == "capsule":
            diameter = 2 * float(geometry.get("radius")) / URDF_SCALE
            np.testing.assert_allclose(body.size[:2], [diameter, float(geometry.get("length")) / URDF_SCALE])
        else:
            extents = [float(v) / URDF_SCALE for v in geometry.get("size").split()]
            np.testing.assert_allclose(body.size, extents)


def broken_character(tmp_path, edit):
    data = json.loads((project_root() / "data/characters/humanoid3d.txt").read_text())
    edit(data)
    path = tmp_path / "character.txt"
    path.write_text(json.dumps(data))
    return path


@pytest.mark.parametrize("edit, message", [
    (lambda d: d["Skeleton"]["Joints"][2].update(Type="ball"),
     "joint 2 key 'Type' has unknown joint type 'ball'"),
    (lambda d: d["Skeleton"]["Joints"][5].update(Parent=7), "joint 5 key 'Parent' is 7"),
    (lambda d: d["Skeleton"]["Joints"][0].update(Parent=0), "joint 0 key 'Parent' is 0"),
    (lambda d: d["Skeleton"]["Joints"][3].pop("TorqueLim"), "joint 3 key 'TorqueLim' is missing"),
    (lambda d: d["Skeleton"]["Joints"][4].pop("LimLow0"), "joint 4 key 'LimLow0' is missing"),
    (lambda d: d["Skeleton"]["Joints"][6].update(AttachX="a"), "joint 6 key 'AttachX' has value 'a'"),
    (lambda d: d["BodyDefs"][1].update(Shape="cone"), "body 1 key 'Shape' has unknown shape 'cone'"),
    (lambda d: d["BodyDefs"][1].update(Mass=0), "body 1 key 'Mass' is 0.0"),
    (lambda d: d["BodyDefs"][4].update(EnableFallContact=2), "body 4 key 'EnableFallContact' has value 2"),
    (lambda d: d["BodyDefs"].pop(), "'BodyDefs' has 14 bodies for 15 joints"),
    (lambda d: d.pop("Skeleton"), "key 'Skeleton' is missing"),
])
def test_character_validation_errors(tmp_path, edit, message):
    path = broken_character(tmp_path, edit)
    with pytest.raises(CharacterError) as err:
        CharacterDesc.load(path)
    text = str(err.value)
    assert message in text and str(path) in text and "\n" not in text
