import math

import numpy as np
import pybullet
import pytest

from util import math_util as mu

RNG = np.random.default_rng(7)
S = math.sqrt(0.5)


def about(axis, angle):
    return mu.quat_from_axis_angle(np.array(axis, dtype=float), angle)


def random_quats(n):
    return mu.quat_normalize(RNG.normal(size=(n, 4)))


def same_rotation(q0, q1, tol=1e-9):
    return np.all(np.abs(np.abs(np.sum(q0 * q1, axis=-1)) - 1.0) < tol)


def test_quat_mul_hamilton_units():
    i, j, k = np.eye(4)[1], np.eye(4)[2], np.eye(4)[3]
    np.testing.assert_allclose(mu.quat_mul(i, j), k)
    np.testing.assert_allclose(mu.quat_mul(j, i), -k)
    np.testing.assert_allclose(mu.quat_mul(k, k), [-1, 0, 0, 0])


def test_quat_mul_applies_right_factor_first():
    qz, qx = about([0, 0, 1], math.pi / 2), about([1, 0, 0], math.pi / 2)
    # x -> (z 90) -> y -> (x 90) -> z
    np.testing.assert_allclose(mu.quat_rotate(mu.quat_mul(qx, qz), [1, 0, 0]), [0, 0, 1], atol=1e-15)


def test_quat_rotate_and_matrix_by_hand():
    qz = about([0, 0, 1], math.pi / 2)
    np.testing.assert_allclose(qz, [S, 0, 0, S])
    np.testing.assert_allclose(mu.quat_rotate(qz, [1, 2, 3]), [-2, 1, 3], atol=1e-15)
    np.testing.assert_allclose(mu.quat_to_matrix(qz), [[0, -1, 0], [1, 0, 0], [0, 0, 1]], atol=1e-15)


def test_conj_inverts_and_normalize():
    q = random_quats(20)
    np.testing.assert_allclose(mu.quat_mul(q, mu.quat_conj(q)), np.tile(mu.quat_identity(), (20, 1)),
                               atol=1e-15)
    np.testing.assert_allclose(mu.quat_normalize([0, 3, 0, 4]), [0, 0.6, 0, 0.8])


def test_axis_angle_round_trip():
    axes = mu.quat_normalize(RNG.normal(size=(200, 3)))
    angles = RNG.uniform(0, math.pi, 200)
    axis, angle = mu.quat_to_axis_angle(mu.quat_from_axis_angle(axes, angles))
    np.testing.assert_allclose(angle, angles, atol=1e-9)
    np.testing.assert_allclose(axis, axes, atol=1e-9)


def test_axis_angle_takes_the_short_way_and_handles_zero():
    axis, angle = mu.quat_to_axis_angle(about([0, 1, 0], 1.5 * math.pi))
    assert angle == pytest.approx(0.5 * math.pi)
    np.testing.assert_allclose(axis, [0, -1, 0], atol=1e-12)
    axis, angle = mu.quat_to_axis_angle(mu.quat_identity())
    assert angle == 0.0
    np.testing.assert_allclose(axis, [1, 0, 0])


def test_exp_map_by_hand_and_round_trip():
    np.testing.assert_allclose(mu.quat_from_exp_map([0, 0, math.pi / 2]), [S, 0, 0, S])
    np.testing.assert_allclose(mu.quat_to_exp_map([S, S, 0, 0]), [math.pi / 2, 0, 0])
    np.testing.assert_allclose(mu.quat_to_exp_map(-np.array([S, S, 0, 0])), [math.pi / 2, 0, 0])
    e = mu.quat_normalize(RNG.normal(size=(200, 3))) * RNG.uniform(0, math.pi, (200, 1))
    np.testing.assert_allclose(mu.quat_to_exp_map(mu.quat_from_exp_map(e)), e, atol=1e-9)
    tiny = np.array([1e-11, -2e-11, 3e-12])
    np.testing.assert_allclose(mu.quat_to_exp_map(mu.quat_from_exp_map(tiny)), tiny, rtol=1e-9, atol=0)
    np.testing.assert_allclose(mu.quat_from_exp_map(np.zeros(3)), mu.quat_identity())
    np.testing.assert_allclose(mu.quat_to_exp_map(mu.quat_identity()), np.zeros(3))


def test_slerp_midpoint_ends_and_short_path():
    q0, q1 = mu.quat_identity(), about([0, 1, 0], math.pi / 2)
    np.testing.assert_allclose(mu.quat_slerp(q0, q1, 0.5), about([0, 1, 0], math.pi / 4), atol=1e-15)
    np.testing.assert_allclose(mu.quat_slerp(q0, q1, 0.25), about([0, 1, 0], math.pi / 8), atol=1e-15)
    np.testing.assert_allclose(mu.quat_slerp(q0, q1, 0.0), q0, atol=1e-15)
    np.testing.assert_allclose(mu.quat_slerp(q0, q1, 1.0), q1, atol=1e-15)
    # -q1 is the same rotation: the result must not take the 270 degree way round
    np.testing.assert_allclose(mu.quat_slerp(q0, -q1, 0.5), about([0, 1, 0], math.pi / 4), atol=1e-15)
    np.testing.assert_allclose(mu.quat_slerp(q1, q1, 0.3), q1, atol=1e-15)  # zero angle


def test_slerp_vectorised_matches_single():
    q0, q1, t = random_quats(10), random_quats(10), RNG.uniform(0, 1, 10)
    batch = mu.quat_slerp(q0, q1, t)
    for n in range(10):
        np.testing.assert_allclose(batch[n], mu.quat_slerp(q0[n], q1[n], t[n]), atol=1e-15)
        # constant angular speed: the angle from q0 is t times the whole angle
        assert mu.quat_diff_angle(q0[n], batch[n]) == pytest.approx(t[n] * mu.quat_diff_angle(q0[n], q1[n]))


def test_diff_angle():
    assert mu.quat_diff_angle(mu.quat_identity(), about([1, 0, 0], math.pi / 6)) == pytest.approx(math.pi / 6)
    q = random_quats(5)
    turned = mu.quat_mul(q, about([0.3, -1, 2], 0.4))
    np.testing.assert_allclose(mu.quat_diff_angle(q, turned), 0.4)
    np.testing.assert_allclose(mu.quat_diff_angle(q, -turned), 0.4)
    assert mu.quat_diff_angle(q[0], q[0]) == 0.0


def test_heading_of_known_rotations():
    assert mu.quat_heading(about([0, 1, 0], 0.7)) == pytest.approx(0.7)
    assert mu.quat_heading(about([0, 1, 0], -2.0)) == pytest.approx(-2.0)
    assert abs(mu.quat_heading(about([0, 1, 0], math.pi))) == pytest.approx(math.pi)
    # pitch about the local z, roll about x: heading unchanged
    tilted = mu.quat_mul(about([0, 1, 0], 0.7), mu.quat_mul(about([0, 0, 1], 0.3), about([1, 0, 0], 1.1)))
    assert mu.quat_heading(tilted) == pytest.approx(0.7)
    assert mu.quat_heading(about([1, 0, 0], 1.0)) == pytest.approx(0.0)


def test_heading_rot_removes_heading():
    q = random_quats(50)
    heading_rot = mu.quat_heading_rot(q)
    np.testing.assert_allclose(heading_rot, mu.quat_from_axis_angle([0, 1, 0], mu.quat_heading(q)))
    local = mu.quat_mul(mu.quat_conj(heading_rot), q)
    np.testing.assert_allclose(mu.quat_heading(local), 0.0, atol=1e-12)


def test_norm_tangent_of_known_rotations():
    np.testing.assert_allclose(mu.quat_to_norm_tangent(mu.quat_identity()), [0, 1, 0, 1, 0, 0])
    np.testing.assert_allclose(mu.quat_to_norm_tangent(about([0, 0, 1], math.pi / 2)), [-1, 0, 0, 0, 1, 0],
                               atol=1e-15)
    np.testing.assert_allclose(mu.quat_to_norm_tangent(about([1, 0, 0], math.pi / 2)), [0, 0, 1, 1, 0, 0],
                               atol=1e-15)
    assert mu.quat_to_norm_tangent(random_quats(4).reshape(2, 2, 4)).shape == (2, 2, 6)


def test_matrix_round_trip_including_half_turns():
    q = np.concatenate([random_quats(200), [about([1, 0, 0], math.pi), about([0, 1, 0], math.pi),
                                            about([0, 0, 1], math.pi), about([1, 1, 0], math.pi - 1e-9)]])
    back = mu.quat_from_matrix(mu.quat_to_matrix(q))
    assert np.all(back[:, 0] >= 0)
    assert same_rotation(back, q, 1e-12)
    m = mu.quat_to_matrix(q)
    np.testing.assert_allclose(m @ np.swapaxes(m, -1, -2), np.broadcast_to(np.eye(3), m.shape), atol=1e-14)


def test_pybullet_conversion():
    np.testing.assert_allclose(mu.quat_from_pybullet([1, 2, 3, 4]), [4, 1, 2, 3])
    np.testing.assert_allclose(mu.quat_to_pybullet([4, 1, 2, 3]), [1, 2, 3, 4])
    xyzw = pybullet.getQuaternionFromEuler([0, 0, math.pi / 2])
    np.testing.assert_allclose(mu.quat_from_pybullet(xyzw), about([0, 0, 1], math.pi / 2), atol=1e-15)
    q = random_quats(3)
    for n in range(3):
        rows = np.array(pybullet.getMatrixFromQuaternion(mu.quat_to_pybullet(q[n]))).reshape(3, 3)
        np.testing.assert_allclose(mu.quat_to_matrix(q[n]), rows, atol=1e-7)


def test_angular_velocity_world_and_local():
    np.testing.assert_allclose(mu.quat_ang_vel(mu.quat_identity(), about([0, 1, 0], 0.3), 0.1), [0, 3, 0])
    q0 = about([0, 0, 1], math.pi / 2)
    # turned about the world x: world rate (2, 0, 0); in q0's frame x_world is -y_local
    q1 = mu.quat_mul(about([1, 0, 0], 0.2), q0)
    np.testing.assert_allclose(mu.quat_ang_vel(q0, q1, 0.1), [2, 0, 0], atol=1e-12)
    np.testing.assert_allclose(mu.quat_ang_vel_local(q0, q1, 0.1), [0, -2, 0], atol=1e-12)
    # turned about its own x: local rate (2, 0, 0), world rate along q0's x = world y
    q2 = mu.quat_mul(q0, about([1, 0, 0], 0.2))
    np.testing.assert_allclose(mu.quat_ang_vel_local(q0, q2, 0.1), [2, 0, 0], atol=1e-12)
    np.testing.assert_allclose(mu.quat_ang_vel(q0, q2, 0.1), [0, 2, 0], atol=1e-12)
    np.testing.assert_allclose(mu.quat_ang_vel(q0, -q2, 0.1), [0, 2, 0], atol=1e-12)


def test_vectorised_over_leading_axes():
    a, b = random_quats(12).reshape(3, 4, 4), random_quats(12).reshape(3, 4, 4)
    v = RNG.normal(size=(3, 4, 3))
    prod, rotated = mu.quat_mul(a, b), mu.quat_rotate(a, v)
    assert prod.shape == (3, 4, 4) and rotated.shape == (3, 4, 3)
    for i in range(3):
        for j in range(4):
            np.testing.assert_allclose(prod[i, j], mu.quat_mul(a[i, j], b[i, j]))
            np.testing.assert_allclose(rotated[i, j], mu.quat_rotate(a[i, j], v[i, j]))
    np.testing.assert_allclose(mu.quat_rotate(a[0, 0], v),
                               mu.quat_rotate(np.broadcast_to(a[0, 0], (3, 4, 4)), v))
    np.testing.assert_allclose(mu.cross(v, v[::-1]), np.cross(v, v[::-1]))
    assert mu.quat_heading(a).shape == (3, 4)
    assert mu.quat_diff_angle(a, b).shape == (3, 4)


def test_left_matrix_is_a_homomorphism():
    a, b = random_quats(6), random_quats(6)
    np.testing.assert_allclose(mu.quat_left_matrix(mu.quat_mul(a, b)),
                               mu.quat_left_matrix(a) @ mu.quat_left_matrix(b), atol=1e-15)
    np.testing.assert_array_equal(mu.quat_left_matrix(a)[..., :, 0], a)
