"""The AMP observation's layout and values against hand-computed ones, and the DTW cost."""
import numpy as np
import pytest

from env.amp_obs import AMPObsBuilder
from env.anim.character import CharacterDesc
from env.dtw import TimeWarper, alignment_cost, mean_point_distance
from util import math_util

Y = np.array([0.0, 1.0, 0.0])
Z = np.array([0.0, 0.0, 1.0])
IDENTITY_NT = [0, 1, 0, 1, 0, 0]           # normal (0, 1, 0), tangent (1, 0, 0)
# humanoid3d offsets (character file): hip, knee, ankle joints; ankle body centre; chest, shoulder,
# elbow, wrist joints (the wrist body centre is its joint)
HIP_Z, KNEE_Y, ANKLE_Y = 0.084887, -0.421546, -0.40987
ANKLE_BODY = np.array([0.045, -0.0225, 0.0])
CHEST_Y, SHOULDER, ELBOW_Y, WRIST_Y = 0.236151, np.array([-0.02405, 0.2435, 0.18311]), -0.274788, -0.258947


@pytest.fixture(scope="module")
def desc():
    return CharacterDesc.load("data/characters/humanoid3d.txt")


def yaw(angle):
    return math_util.quat_from_axis_angle(Y, angle)


def rot_y(angle):
    c, s = np.cos(angle), np.sin(angle)
    return np.array([[c, 0, s], [0, 1, 0], [-s, 0, c]])


def rot_z(angle):
    c, s = np.cos(angle), np.sin(angle)
    return np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]])


def make_pose(desc, root_pos, root_yaw, chest_z=0.0, right_knee=0.0, left_elbow=0.0):
    pose = np.zeros(desc.pose_size)
    pose[0:3] = root_pos
    pose[3:7] = yaw(root_yaw)
    for joint in desc.joints[1:]:
        if joint.type.value == "spherical":
            pose[desc.param_offset[joint.id]] = 1.0
    pose[desc.param_offset[1]:desc.param_offset[1] + 4] = math_util.quat_from_axis_angle(Z, chest_z)
    pose[desc.param_offset[4]] = right_knee
    pose[desc.param_offset[13]] = left_elbow
    return pose


def end_effectors_in_root_frame(chest_z, right_knee, left_elbow):
    """Right ankle, right wrist, left ankle, left wrist body centres minus the root, in the root's
    frame, by hand: the chest turns the arms, the right knee the right foot, the left elbow the
    left forearm."""
    mirror = np.array([1, 1, -1])
    right_arm = SHOULDER + [0, ELBOW_Y + WRIST_Y, 0]
    left_arm = SHOULDER * mirror + [0, ELBOW_Y, 0] + rot_z(left_elbow) @ [0, WRIST_Y, 0]
    right_wrist = [0, CHEST_Y, 0] + rot_z(chest_z) @ right_arm
    left_wrist = [0, CHEST_Y, 0] + rot_z(chest_z) @ left_arm
    right_ankle = [0, KNEE_Y, HIP_Z] + rot_z(right_knee) @ ([0, ANKLE_Y, 0] + ANKLE_BODY)
    left_ankle = [0, KNEE_Y + ANKLE_Y, -HIP_Z] + ANKLE_BODY
    return np.array([right_ankle, right_wrist, left_ankle, left_wrist])


def expected_pose_part(height, root_nt, joint_nt_chest, knee, elbow, ee):
    """71 numbers in DeepMimic's order: height, root, chest, neck, r hip, r knee, r ankle,
    r shoulder, r elbow, l hip, l knee, l ankle, l shoulder, l elbow, end effectors."""
    parts = [[height], root_nt, joint_nt_chest, IDENTITY_NT, IDENTITY_NT, [knee], IDENTITY_NT, IDENTITY_NT,
             [0.0], IDENTITY_NT, [0.0], IDENTITY_NT, IDENTITY_NT, [elbow], ee.ravel()]
    return np.concatenate([np.asarray(p, dtype=float) for p in parts])


def expected_vel_part(vel, root_turn):
    """Root linear and angular velocity turned by root_turn, then the joints' velocities with a 0
    after each spherical joint's three."""
    out = list(root_turn @ vel[0:3]) + list(root_turn @ vel[3:6])
    at = 6
    for size in (3, 3, 3, 1, 3, 3, 1, 3, 1, 3, 3, 1):   # chest .. left elbow
        out += list(vel[at:at + size]) + ([0.0] if size == 3 else [])
        at += size
    return np.array(out)


@pytest.mark.parametrize("local_root", [False, True])
def test_obs_of_a_known_pose_pair(desc, local_root):
    builder = AMPObsBuilder(desc, local_root=local_root)
    assert (builder.pose_size, builder.vel_size, builder.size) == (71, 42, 226)
    ground = 0.1
    chest_z, knee, elbow = np.pi / 2, -1.0, 0.5
    pose = make_pose(desc, [1.0, 0.9, 2.0], 0.7, chest_z=chest_z, right_knee=knee, left_elbow=elbow)
    prev_pose = make_pose(desc, [0.9, 0.85, 2.1], 0.6)
    vel, prev_vel = np.arange(1.0, 35.0), -np.arange(1.0, 35.0)
    obs = builder.build([(pose, vel), (prev_pose, prev_vel)], ground)

    # current pose: heading 0.7 removed, so the end effectors are in the root's frame
    root_nt = [0, 1, 0, 1, 0, 0] if local_root else [0, 1, 0, np.cos(0.7), 0, -np.sin(0.7)]
    chest_nt = [-1, 0, 0, 0, 1, 0]                               # 90 deg about z: y -> -x, x -> y
    ee = end_effectors_in_root_frame(chest_z, knee, elbow)
    np.testing.assert_allclose(obs[0:71], expected_pose_part(0.8, root_nt, chest_nt, knee, elbow, ee), atol=1e-12)

    # previous pose: yaw 0.6 seen from heading 0.7 is a turn of -0.1
    prev_root_nt = [0, 1, 0, np.cos(0.1), 0, np.sin(0.1)] if local_root else [0, 1, 0, np.cos(0.6), 0, -np.sin(0.6)]
    prev_ee = end_effectors_in_root_frame(0.0, 0.0, 0.0) @ rot_y(-0.1).T
    np.testing.assert_allclose(obs[71:142], expected_pose_part(0.75, prev_root_nt, IDENTITY_NT, 0.0, 0.0, prev_ee),
                               atol=1e-12)

    turn = rot_y(-0.7) if local_root else np.eye(3)
    np.testing.assert_allclose(obs[142:184], expected_vel_part(vel, turn), atol=1e-12)
    np.testing.assert_allclose(obs[184:226], expected_vel_part(prev_vel, turn), atol=1e-12)


def test_obs_is_invariant_to_heading_and_position_with_local_root(desc):
    """Turning and moving both poses together changes nothing but the world root rotation."""
    pose = make_pose(desc, [0.3, 0.9, -0.2], 0.4, chest_z=0.3, right_knee=-0.5)
    prev_pose = make_pose(desc, [0.25, 0.88, -0.2], 0.35, chest_z=0.2, right_knee=-0.4)
    vel = np.linspace(-1, 1, 34)
    turn, shift = yaw(1.3), np.array([5.0, 0.0, -3.0])

    def moved(p, v):
        p, v = p.copy(), v.copy()
        p[0:3] = math_util.quat_rotate(turn, p[0:3]) + shift
        p[3:7] = math_util.quat_mul(turn, p[3:7])
        v[0:6] = math_util.quat_rotate(turn, v[0:6].reshape(2, 3)).ravel()
        return p, v

    builder = AMPObsBuilder(desc, local_root=True)
    a = builder.build([(pose, vel), (prev_pose, vel)], 0.0)
    b = builder.build([moved(pose, vel), moved(prev_pose, vel)], 0.0)
    np.testing.assert_allclose(a, b, atol=1e-12)
    world = AMPObsBuilder(desc, local_root=False).build([moved(pose, vel), moved(prev_pose, vel)], 0.0)
    root_cols = np.r_[1:7, 72:78, 142:148, 184:190]
    assert np.abs(world[root_cols] - b[root_cols]).max() > 0.1
    np.testing.assert_allclose(np.delete(world, root_cols), np.delete(b, root_cols), atol=1e-12)


def test_window_of_four_frames_extends_the_pair(desc):
    """N frames: N pose parts then N velocity parts, every pose seen from the newest heading; the
    pair's observation (N = 2) is the window's first two pose and velocity parts."""
    frames = [(make_pose(desc, [0.1 * k, 0.9 - 0.01 * k, 0.0], 0.7 - 0.1 * k, right_knee=-0.2 * k),
               np.linspace(-1, 1, 34) * (k + 1)) for k in range(4)]
    window = AMPObsBuilder(desc, local_root=True, num_steps=4)
    pair = AMPObsBuilder(desc, local_root=True)
    assert window.size == 4 * (71 + 42) == 452
    obs = window.build(frames, 0.0)
    two = pair.build(frames[:2], 0.0)
    np.testing.assert_array_equal(obs[0:142], two[0:142])
    np.testing.assert_array_equal(obs[284:368], two[142:226])
    # the oldest frame: its own pose part equals a pair built with it as the older frame
    np.testing.assert_allclose(obs[213:284], pair.build([frames[0], frames[3]], 0.0)[71:142], atol=1e-12)
    with pytest.raises(ValueError, match="3 frames for a window of 4"):
        window.build(frames[:3], 0.0)
    with pytest.raises(ValueError, match="expected an integer >= 2"):
        AMPObsBuilder(desc, num_steps=1)


@pytest.mark.parametrize("local_root", [False, True])
def test_batch_of_windows_equals_each_window(desc, local_root):
    """build_batch of B windows (each with its own heading, position and ground height) gives,
    row by row, what build gives for each window on its own."""
    rng = np.random.default_rng(4)
    builder = AMPObsBuilder(desc, local_root=local_root, num_steps=3)
    windows = [[(make_pose(desc, rng.normal(size=3), rng.uniform(-3, 3), right_knee=rng.uniform(-1, 0)),
                 rng.normal(size=34)) for _ in range(3)] for _ in range(5)]
    heights = rng.normal(size=5)
    batch = builder.build_batch(np.array([[p for p, _ in w] for w in windows]),
                                np.array([[v for _, v in w] for w in windows]), heights)
    assert batch.shape == (5, builder.size)
    for row, window, height in zip(batch, windows, heights):
        np.testing.assert_allclose(row, builder.build(window, height), rtol=0, atol=1e-12)
    # each row's headings are its own newest frame's: the rows differ where the headings do
    assert np.abs(batch[0] - batch[1]).max() > 0.1


def test_given_body_centres_replace_forward_kinematics(desc):
    """Body centres given by the caller (the physics' own, for a simulated character) are used
    instead of forward kinematics: the same ones give the same observation; end effectors raised
    by 0.5 move exactly their entries, by 0.5 in y (the heading frame keeps y)."""
    frames = [(make_pose(desc, [0.3, 0.9, -0.2], 0.4 - 0.1 * k, chest_z=0.2, right_knee=-0.3 * k), np.full(34, 0.1 * k))
              for k in range(2)]
    builder = AMPObsBuilder(desc)
    fk = builder.kin.calc_body_world(np.stack([pose for pose, _ in frames]))[0]
    plain = builder.build(frames, 0.0)
    np.testing.assert_allclose(builder.build(frames, 0.0, fk), plain, rtol=0, atol=1e-12)
    raised = fk.copy()
    raised[:, builder.end_effectors, 1] += 0.5
    diff = builder.build(frames, 0.0, raised) - plain
    ee_y = [k * builder.pose_size + builder._ee_start + 3 * i + 1 for k in range(2)
            for i in range(len(builder.end_effectors))]
    np.testing.assert_allclose(diff[ee_y], 0.5, atol=1e-12)
    np.testing.assert_allclose(np.delete(diff, ee_y), 0.0, atol=1e-12)


def naive_alignment(cost):
    n, m = cost.shape
    d = np.full((n, m), np.inf)
    d[0, 0] = 0.0
    for i in range(1, n):
        for j in range(1, m):
            d[i, j] = cost[i, j] + min(d[i - 1, j - 1], d[i - 1, j], d[i, j - 1])
    return d[n - 1, m - 1]


def test_dtw_alignment_by_hand():
    """s0 = 0, 1, 3 against s1 = 0, 1, 2, 3 with cost |a - b|: the best path pairs 1-1, 3-2 (1),
    3-3 (0), the first pair never counting: 1."""
    s0, s1 = np.array([0.0, 1.0, 3.0]), np.array([0.0, 1.0, 2.0, 3.0])
    assert alignment_cost(s0, s1, lambda a, bs: np.abs(bs - a)) == pytest.approx(1.0)
    assert alignment_cost(s1, s1, lambda a, bs: np.abs(bs - a)) == 0.0


def test_dtw_matches_the_recurrence():
    rng = np.random.default_rng(0)
    for n, m in ((2, 2), (5, 9), (30, 30), (40, 25)):
        s0, s1 = rng.normal(size=(n, 15, 3)), rng.normal(size=(m, 15, 3))
        cost = np.array([[mean_point_distance(a, b) for b in s1] for a in s0])
        assert alignment_cost(s0, s1) == pytest.approx(naive_alignment(cost), rel=1e-12)


def test_mean_point_distance_and_time_warper():
    a = np.array([[0.0, 0, 0], [1, 1, 1]])
    b = np.array([[3.0, 4, 0], [1, 1, 2]])
    assert mean_point_distance(a, b) == pytest.approx((5 + 1) / 2)
    warper = TimeWarper(capacity=10)
    for k in range(4):
        warper.add(a + k, a + k)
    assert warper.sample_count == 4 and warper.calc_alignment() == 0.0
    warper.reset()
    assert warper.sample_count == 0
