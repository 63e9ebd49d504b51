"""Quaternion and rotation helpers.

Conventions: quaternions are numpy arrays [w, x, y, z] (pybullet's order is [x, y, z, w]: convert
with quat_from_pybullet / quat_to_pybullet); y is up. Rotation q maps a vector v to q v q^-1, and
q_a * q_b applies q_b first. Every function accepts a single quaternion (4,) / vector (3,) or
stacks of them (..., 4) / (..., 3) and broadcasts over the leading axes.
"""
import numpy as np

_SMALL = 1e-12
_X_AXIS = np.array([1.0, 0.0, 0.0])
_Y_AXIS = np.array([0.0, 1.0, 0.0])
_CONJ_SIGNS = np.array([1.0, -1.0, -1.0, -1.0])
# q_a * q_b = L(q_a) b = R(q_b) a, with L and R 4x4 matrices gathered from one quaternion's
# components (matrix products beat per-component arithmetic on small stacks).
_L_IDX = np.array([[0, 1, 2, 3], [1, 0, 3, 2], [2, 3, 0, 1], [3, 2, 1, 0]])
_L_SIGN = np.array([[1.0, -1, -1, -1], [1, 1, -1, 1], [1, 1, 1, -1], [1, -1, 1, 1]])
_R_SIGN = np.array([[1.0, -1, -1, -1], [1, 1, 1, -1], [1, -1, 1, 1], [1, 1, -1, 1]])
_CROSS_A = np.array([1, 2, 0])
_CROSS_B = np.array([2, 0, 1])
_FROM_XYZW = np.array([3, 0, 1, 2])
_TO_XYZW = np.array([1, 2, 3, 0])


def quat_identity():
    return np.array([1.0, 0.0, 0.0, 0.0])


def quat_mul(a, b):
    """Hamilton product a * b (b applied first)."""
    return (quat_left_matrix(a) @ np.asarray(b, dtype=float)[..., None])[..., 0]


def quat_left_matrix(q):
    """4x4 L(q) with L(q) b = q * b; L(a * b) = L(a) L(b), and L(q)[..., :, 0] = q."""
    return np.asarray(q, dtype=float)[..., _L_IDX] * _L_SIGN


def quat_right_matrix(q):
    """4x4 R(q) with R(q) a = a * q."""
    return np.asarray(q, dtype=float)[..., _L_IDX] * _R_SIGN


def quat_conj(q):
    """Conjugate, which is the inverse of a unit quaternion."""
    return np.asarray(q, dtype=float) * _CONJ_SIGNS


def quat_normalize(q):
    q = np.asarray(q, dtype=float)
    return q / np.linalg.norm(q, axis=-1, keepdims=True)


def cross(a, b):
    """Cross product over the last axis (faster than np.cross on small stacks)."""
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    return a[..., _CROSS_A] * b[..., _CROSS_B] - a[..., _CROSS_B] * b[..., _CROSS_A]


def quat_to_matrix(q):
    """3x3 rotation matrix of a unit quaternion: the lower block of L(q) R(q^-1)."""
    q = np.asarray(q, dtype=float)
    m = (q[..., _L_IDX] * _L_SIGN) @ ((q * _CONJ_SIGNS)[..., _L_IDX] * _R_SIGN)
    return m[..., 1:, 1:]


def quat_rotate(q, v):
    """q v q^-1 for unit q."""
    return (quat_to_matrix(q) @ np.asarray(v, dtype=float)[..., None])[..., 0]


def quat_from_axis_angle(axis, angle):
    """Rotation by `angle` (radians) about `axis` (need not be unit length)."""
    axis = np.asarray(axis, dtype=float)
    half = 0.5 * np.asarray(angle, dtype=float)[..., None]
    unit = axis / np.linalg.norm(axis, axis=-1, keepdims=True)
    return np.concatenate([np.cos(half), np.sin(half) * unit], axis=-1)


def _short(q):
    """The same rotation with w >= 0 (the short way round)."""
    q = np.asarray(q, dtype=float)
    return np.where(q[..., :1] < 0.0, -q, q)


def quat_to_axis_angle(q):
    """(axis (..., 3), angle (...,) in [0, pi]); the axis is x when the angle is 0."""
    q = _short(q)
    vec = q[..., 1:]
    sin_half = np.linalg.norm(vec, axis=-1)
    angle = 2.0 * np.arctan2(sin_half, q[..., 0])
    tiny = sin_half[..., None] < _SMALL
    axis = np.where(tiny, _X_AXIS, vec / np.where(tiny, 1.0, sin_half[..., None]))
    return axis, angle


def quat_from_exp_map(e):
    """Exponential map (axis * angle) to a quaternion; smooth through angle 0."""
    e = np.asarray(e, dtype=float)
    angle = np.linalg.norm(e, axis=-1, keepdims=True)
    # sin(angle/2) / angle = 0.5 sinc(angle / (2 pi)), with numpy's normalised sinc.
    return np.concatenate([np.cos(0.5 * angle), e * (0.5 * np.sinc(angle / (2.0 * np.pi)))], axis=-1)


def quat_to_exp_map(q):
    """axis * angle with the angle in [0, pi] (short path). Scale-free: q need not be unit length."""
    q = _short(q)
    vec = q[..., 1:]
    sin_half = np.linalg.norm(vec, axis=-1, keepdims=True)
    angle = 2.0 * np.arctan2(sin_half, q[..., :1])
    # angle / sin(angle/2) -> 2 / w as the angle -> 0
    scale = np.where(sin_half < _SMALL, 2.0 / q[..., :1], angle / np.where(sin_half < _SMALL, 1.0, sin_half))
    return vec * scale


def quat_slerp(q0, q1, t):
    """Spherical interpolation from q0 (t = 0) to q1 (t = 1) along the shorter arc."""
    q0 = np.asarray(q0, dtype=float)
    q1 = np.asarray(q1, dtype=float)
    t = np.asarray(t, dtype=float)[..., None]
    dot = np.sum(q0 * q1, axis=-1, keepdims=True)
    q1 = np.where(dot < 0.0, -q1, q1)
    dot = np.abs(dot)
    theta = np.arccos(np.minimum(dot, 1.0))
    sin_theta = np.sin(theta)
    small = sin_theta < 1e-6
    safe = np.where(small, 1.0, sin_theta)
    w0 = np.where(small, 1.0 - t, np.sin((1.0 - t) * theta) / safe)
    w1 = np.where(small, t, np.sin(t * theta) / safe)
    return quat_normalize(w0 * q0 + w1 * q1)


def quat_diff_angle(q0, q1):
    """Angle of q0^-1 q1 in [0, pi]: how far apart two rotations are."""
    d = quat_mul(quat_conj(q0), q1)
    return 2.0 * np.arctan2(np.linalg.norm(d[..., 1:], axis=-1), np.abs(d[..., 0]))


def quat_heading(q):
    """DeepMimic's heading: rotate (1, 0, 0) by q; heading = atan2(-z, x) (yaw about y)."""
    x = quat_to_matrix(q)[..., :, 0]
    return np.arctan2(-x[..., 2], x[..., 0])


def quat_heading_rot(q):
    """Yaw-only quaternion about y by quat_heading(q); its conjugate maps into the heading frame."""
    return quat_from_axis_angle(_Y_AXIS, quat_heading(q))


def quat_from_matrix(m):
    """Rotation matrix to a unit quaternion with w >= 0 (Shepperd's method, largest component)."""
    m = np.asarray(m, dtype=float)
    m00, m11, m22 = m[..., 0, 0], m[..., 1, 1], m[..., 2, 2]
    # 4 * (w^2, x^2, y^2, z^2) from the trace; pick the largest to divide by.
    sq = np.stack([1 + m00 + m11 + m22, 1 + m00 - m11 - m22,
                   1 - m00 + m11 - m22, 1 - m00 - m11 + m22], axis=-1)
    big = np.argmax(sq, axis=-1)
    s = np.sqrt(np.maximum(np.take_along_axis(sq, big[..., None], axis=-1)[..., 0], _SMALL))
    d21, d02, d10 = m[..., 2, 1] - m[..., 1, 2], m[..., 0, 2] - m[..., 2, 0], m[..., 1, 0] - m[..., 0, 1]
    s21, s02, s10 = m[..., 2, 1] + m[..., 1, 2], m[..., 0, 2] + m[..., 2, 0], m[..., 1, 0] + m[..., 0, 1]
    cands = np.stack([np.stack([s * s, d21, d02, d10], axis=-1),
                      np.stack([d21, s * s, s10, s02], axis=-1),
                      np.stack([d02, s10, s * s, s21], axis=-1),
                      np.stack([d10, s02, s21, s * s], axis=-1)], axis=-2)
    q = np.take_along_axis(cands, big[..., None, None], axis=-2)[..., 0, :] / (2.0 * s[..., None])
    return quat_normalize(_short(q))


def quat_to_norm_tangent(q):
    """DeepMimic's 6-number rotation code: [R(0, 1, 0) ("normal"), R(1, 0, 0) ("tangent")]."""
    m = quat_to_matrix(q)
    return np.concatenate([m[..., :, 1], m[..., :, 0]], axis=-1)


def quat_from_pybullet(xyzw):
    return np.asarray(xyzw, dtype=float)[..., _FROM_XYZW]


def quat_to_pybullet(wxyz):
    return np.asarray(wxyz, dtype=float)[..., _TO_XYZW]


def quat_ang_vel(q0, q1, dt):
    """World-frame angular velocity turning q0 into q1 in dt: exp map of q1 q0^-1, over dt."""
    return quat_to_exp_map(quat_mul(q1, quat_conj(q0))) / dt


def quat_ang_vel_local(q0, q1, dt):
    """Angular velocity in q0's own frame turning q0 into q1 in dt: exp map of q0^-1 q1, over dt."""
    return quat_to_exp_map(quat_mul(quat_conj(q0), q1)) / dt
