"""Mass matrix and bias forces of a pybullet multibody (floating base; spherical, revolute and fixed
joints), compiled with numba, in the compact generalized velocity layout of pybullet's flags=1
convention without its pads:
    base linear velocity (world, 3), base angular velocity (world, 3),
    per moving joint in link order: spherical angular velocity in the child's inertial frame (3),
    revolute angle rate (1).
Positions: base COM position (3), base quaternion xyzw (4), per joint spherical xyzw (4) / angle (1),
i.e. pybullet's q (no pads in q).

Frames (Bullet's multibody, whose link frames are the inertial (COM) frames): the base pose is its
inertial frame; a joint's parentFramePos is in the parent's inertial frame, and the child's
inertial frame is R_i = R_parent Z^T J, with Z getJointInfo's parentFrameOrn (Bullet's zero
rotation from parent to child) and J the joint's rotation (a spherical joint's quaternion, a
revolute joint's angle about its axis), both in the child's inertial frame; the link (URDF) frame
is R_i Ri^T, Ri the localInertialFrameOrientation, and the COM sits at localInertialFramePosition
in it. With unrotated inertial frames (humanoid3d) Z is the joint frame's rotation; dog3d's neck
and tails have rotated ones.

Per body b with COM x_b and world Jacobian J_b = [Jv; Jw] (a dof with world axis s at joint point
x_j contributes s x (x_b - x_j) to Jv and s to Jw; the base's linear dofs the identity, its angular
dofs e_k x (x_b - x_base) and e_k):
    M = sum_b Jv^T m_b Jv + Jw^T I_b Jw             (I_b = R_b diag(I) R_b^T)
    C = sum_b Jv^T m_b (a_b - g) + Jw^T (I_b al_b + w_b x I_b w_b)
with a_b, al_b the COM's linear and angular accelerations at zero generalized acceleration
(velocity-product terms only), as calculateInverseDynamics(q, qdot, 0, flags=1) returns them.
"""
import numpy as np
import pybullet as p

from util.compiled_cache import cached_njit

FIXED, REVOLUTE, SPHERICAL = 0, 1, 2
_PB_TYPES = {p.JOINT_FIXED: FIXED, p.JOINT_REVOLUTE: REVOLUTE, p.JOINT_SPHERICAL: SPHERICAL}


class TreeModel:
    """Model arrays read from pybullet (world_scale already in them), index 0 the base, i + 1 link i."""

    def __init__(self, body, client):
        n_links = p.getNumJoints(body, physicsClientId=client)
        n = n_links + 1
        self.parent = np.full(n, -1, dtype=np.int64)
        self.jtype = np.zeros(n, dtype=np.int64)
        self.frame_pos = np.zeros((n, 3))
        self.frame_rot = np.tile(np.eye(3), (n, 1, 1))
        self.axis = np.zeros((n, 3))
        self.inertial_pos = np.zeros((n, 3))
        self.inertial_rot = np.tile(np.eye(3), (n, 1, 1))
        self.mass = np.zeros(n)
        self.inertia = np.zeros((n, 3))
        self.q_start = np.zeros(n, dtype=np.int64)
        self.v_start = np.zeros(n, dtype=np.int64)
        info = p.getDynamicsInfo(body, -1, physicsClientId=client)
        self.mass[0], self.inertia[0] = info[0], info[2]
        q_off, v_off = 7, 6
        for link in range(n_links):
            ji = p.getJointInfo(body, link, physicsClientId=client)
            if ji[2] not in _PB_TYPES:
                raise ValueError(f"body {body} joint {link}: joint type {ji[2]} not supported (fixed, revolute, spherical)")
            i = link + 1
            self.parent[i] = ji[16] + 1
            self.jtype[i] = _PB_TYPES[ji[2]]
            self.axis[i] = ji[13]
            self.frame_pos[i] = ji[14]
            # getJointInfo's parentFrameOrn is Bullet's zero rotation from the parent's inertial
            # frame to the child's (m_zeroRotParentToThis); its transpose turns the child's frame
            self.frame_rot[i] = np.reshape(p.getMatrixFromQuaternion(ji[15]), (3, 3)).T
            info = p.getDynamicsInfo(body, link, physicsClientId=client)
            self.mass[i], self.inertia[i] = info[0], info[2]
            self.inertial_pos[i] = info[3]
            self.inertial_rot[i] = np.reshape(p.getMatrixFromQuaternion(info[4]), (3, 3))
            self.q_start[i], self.v_start[i] = q_off, v_off
            q_off += {FIXED: 0, REVOLUTE: 1, SPHERICAL: 4}[self.jtype[i]]
            v_off += {FIXED: 0, REVOLUTE: 1, SPHERICAL: 3}[self.jtype[i]]
        self.num_q, self.num_v = q_off, v_off
        # dofs of each body's chain (the base's 6 and every moving ancestor joint's), root first
        chains = []
        for i in range(n):
            dofs, j = [], i
            while j > 0:
                width = {FIXED: 0, REVOLUTE: 1, SPHERICAL: 3}[self.jtype[j]]
                dofs = list(range(self.v_start[j], self.v_start[j] + width)) + dofs
                j = self.parent[j]
            chains.append(list(range(6)) + dofs)
        self.chain_len = np.array([len(c) for c in chains], dtype=np.int64)
        self.chain = np.zeros((n, self.chain_len.max()), dtype=np.int64)
        for i, c in enumerate(chains):
            self.chain[i, :len(c)] = c
        gravity = p.getPhysicsEngineParameters(physicsClientId=client)
        self.gravity = np.array([gravity["gravityAccelerationX"], gravity["gravityAccelerationY"],
                                 gravity["gravityAccelerationZ"]])

    def arrays(self):
        return (self.parent, self.jtype, self.frame_pos, self.frame_rot, self.axis, self.inertial_pos,
                self.inertial_rot, self.mass, self.inertia, self.q_start, self.v_start, self.chain,
                self.chain_len, self.gravity)


@cached_njit
def _quat_xyzw_to_matrix(x, y, z, w, out):
    out[0, 0] = 1 - 2 * (y * y + z * z)
    out[0, 1] = 2 * (x * y - z * w)
    out[0, 2] = 2 * (x * z + y * w)
    out[1, 0] = 2 * (x * y + z * w)
    out[1, 1] = 1 - 2 * (x * x + z * z)
    out[1, 2] = 2 * (y * z - x * w)
    out[2, 0] = 2 * (x * z - y * w)
    out[2, 1] = 2 * (y * z + x * w)
    out[2, 2] = 1 - 2 * (x * x + y * y)


@cached_njit
def _axis_angle_matrix(a, angle, out):
    c, s = np.cos(angle), np.sin(angle)
    t = 1.0 - c
    x, y, z = a[0], a[1], a[2]
    out[0, 0] = t * x * x + c
    out[0, 1] = t * x * y - s * z
    out[0, 2] = t * x * z + s * y
    out[1, 0] = t * x * y + s * z
    out[1, 1] = t * y * y + c
    out[1, 2] = t * y * z - s * x
    out[2, 0] = t * x * z - s * y
    out[2, 1] = t * y * z + s * x
    out[2, 2] = t * z * z + c


@cached_njit
def _mv_into(a, v, out):
    """out = a v for a 3x3 matrix a (numba's @ needs scipy's BLAS). Like the other 3-vector helpers
    it writes into scratch arrays: an array allocated per body costs more than the body's algebra."""
    for r in range(3):
        out[r] = a[r, 0] * v[0] + a[r, 1] * v[1] + a[r, 2] * v[2]


@cached_njit
def _mm_into(a, b, out):
    for r in range(3):
        for c in range(3):
            out[r, c] = a[r, 0] * b[0, c] + a[r, 1] * b[1, c] + a[r, 2] * b[2, c]


@cached_njit
def _mm_transpose_into(a, b, out):
    """out = a b^T."""
    for r in range(3):
        for c in range(3):
            out[r, c] = a[r, 0] * b[c, 0] + a[r, 1] * b[c, 1] + a[r, 2] * b[c, 2]


@cached_njit
def _cross_add(a, b, base, out):
    """out = base + a x b (out may be base; a, b must not be out)."""
    x = a[1] * b[2] - a[2] * b[1]
    y = a[2] * b[0] - a[0] * b[2]
    z = a[0] * b[1] - a[1] * b[0]
    out[0], out[1], out[2] = base[0] + x, base[1] + y, base[2] + z


@cached_njit
def _dot(a, b):
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


@cached_njit
def _own_dofs(b, jtype):
    """How many velocity dofs body b adds to its chain: the base 6, a spherical joint 3, a revolute 1."""
    if b == 0:
        return 6
    return 3 if jtype[b] == SPHERICAL else (1 if jtype[b] == REVOLUTE else 0)


@cached_njit
def mass_matrix_and_bias(q, qd, parent, jtype, frame_pos, frame_rot, axis, inertial_pos, inertial_rot,
                         mass, inertia, q_start, v_start, chain, chain_len, gravity):
    """(M, C) in the compact layout (module docstring) at positions q and velocities qd."""
    n = parent.shape[0]
    nv = qd.shape[0]
    com = np.zeros((n, 3))
    rot = np.zeros((n, 3, 3))
    omega = np.zeros((n, 3))
    acc = np.zeros((n, 3))
    alpha = np.zeros((n, 3))
    # world axis and point of each velocity dof
    dof_axis = np.zeros((nv, 3))
    dof_point = np.zeros((nv, 3))
    com[0] = q[0:3]
    _quat_xyzw_to_matrix(q[3], q[4], q[5], q[6], rot[0])
    omega[0] = qd[3:6]
    for k in range(3):
        dof_axis[k, k] = 1.0
        dof_axis[3 + k, k] = 1.0
        dof_point[3 + k] = com[0]
    joint_rot = np.eye(3)
    frame = np.empty((3, 3))
    link = np.empty((3, 3))
    joint_point = np.empty(3)
    w_rel = np.empty(3)
    r1 = np.empty(3)
    r2 = np.empty(3)
    zero3 = np.zeros(3)
    for i in range(1, n):
        pa = parent[i]
        _mv_into(rot[pa], frame_pos[i], joint_point)
        for k in range(3):
            joint_point[k] += com[pa, k]
        _mm_into(rot[pa], frame_rot[i], frame)
        qs, vs = q_start[i], v_start[i]
        if jtype[i] == SPHERICAL:
            _quat_xyzw_to_matrix(q[qs], q[qs + 1], q[qs + 2], q[qs + 3], joint_rot)
            _mm_into(frame, joint_rot, rot[i])
            for k in range(3):
                for r in range(3):
                    dof_axis[vs + k, r] = rot[i, r, k]
                    dof_point[vs + k, r] = joint_point[r]
            _mv_into(rot[i], qd[vs:vs + 3], w_rel)
        elif jtype[i] == REVOLUTE:
            _axis_angle_matrix(axis[i], q[qs], joint_rot)
            _mm_into(frame, joint_rot, rot[i])
            _mv_into(rot[i], axis[i], dof_axis[vs])
            for r in range(3):
                dof_point[vs, r] = joint_point[r]
                w_rel[r] = dof_axis[vs, r] * qd[vs]
        else:
            rot[i] = frame
            w_rel[:] = 0.0
        _mm_transpose_into(rot[i], inertial_rot[i], link)     # the link frame: R_i Ri^T
        _mv_into(link, inertial_pos[i], com[i])
        for k in range(3):
            com[i, k] += joint_point[k]
            r1[k] = joint_point[k] - com[pa, k]
            r2[k] = com[i, k] - joint_point[k]
            omega[i, k] = omega[pa, k] + w_rel[k]
        wp, ap, wi = omega[pa], alpha[pa], omega[i]
        _cross_add(wp, w_rel, ap, alpha[i])
        ai = alpha[i]
        # a_i = a_p + al_p x r1 + w_p x (w_p x r1) + al_i x r2 + w_i x (w_i x r2)
        acc[i] = acc[pa]
        _cross_add(ap, r1, acc[i], acc[i])
        _cross_add(ai, r2, acc[i], acc[i])
        _cross_add(wp, r1, zero3, w_rel)  # w_rel reused as scratch: w_p x r1
        _cross_add(wp, w_rel, acc[i], acc[i])
        _cross_add(wi, r2, zero3, w_rel)
        _cross_add(wi, w_rel, acc[i], acc[i])
    # Composite rigid bodies (CRBA), spatial quantities about the base COM o in world axes. A dof's
    # motion is (a; v): angular axis a and the velocity v = (p - o) x a of the point at o (p: the
    # dof's joint point; a base linear dof is (0; e_k)). A body's inertia about o acts as
    # n = A w + h x v, f = m v + w x h with A = I_b + m (|c|^2 1 - c c^T), h = m c (c = x_b - o);
    # its bias wrench about o is f_b = m (a_b - g), n_b = I_b al_b + w_b x I_b w_b + c x f_b.
    # Summed over each subtree (children follow their parents in link order), then per dof j on
    # body b and every dof i of b's chain: M_ij = a_i . n_j + v_i . f_j with (n_j; f_j) the
    # subtree inertia of b applied to dof j's motion, and C_j = a_j . N_b + v_j . F_b.
    ox, oy, oz = com[0, 0], com[0, 1], com[0, 2]
    sub_a = np.zeros((n, 3, 3))
    sub_h = np.zeros((n, 3))
    sub_m = np.zeros(n)
    sub_n = np.zeros((n, 3))
    sub_f = np.zeros((n, 3))
    inertia_w = np.empty((3, 3))
    inertia_rt = np.empty((3, 3))  # diag(I) R_b^T
    iw = np.empty(3)
    force = np.empty(3)
    torque = np.empty(3)
    c = np.empty(3)
    for b in range(n):
        m = mass[b]
        rb = rot[b]
        for r in range(3):
            for k in range(3):
                inertia_rt[r, k] = inertia[b, r] * rb[k, r]
        _mm_into(rb, inertia_rt, inertia_w)
        c[0], c[1], c[2] = com[b, 0] - ox, com[b, 1] - oy, com[b, 2] - oz
        cc = _dot(c, c)
        for r in range(3):
            for k in range(3):
                sub_a[b, r, k] = inertia_w[r, k] - m * c[r] * c[k]
            sub_a[b, r, r] += m * cc
            sub_h[b, r] = m * c[r]
            force[r] = m * (acc[b, r] - gravity[r])
        sub_m[b] = m
        _mv_into(inertia_w, omega[b], iw)
        _mv_into(inertia_w, alpha[b], torque)
        _cross_add(omega[b], iw, torque, torque)  # I al + w x I w
        _cross_add(c, force, torque, sub_n[b])
        sub_f[b] = force
    for b in range(n - 1, 0, -1):
        pa = parent[b]
        sub_m[pa] += sub_m[b]
        for r in range(3):
            sub_h[pa, r] += sub_h[b, r]
            sub_n[pa, r] += sub_n[b, r]
            sub_f[pa, r] += sub_f[b, r]
            for k in range(3):
                sub_a[pa, r, k] += sub_a[b, r, k]
    # each dof's motion (a; v) about o
    mot_a = np.zeros((nv, 3))
    mot_v = np.zeros((nv, 3))
    for d in range(nv):
        if d < 3:
            mot_v[d, d] = 1.0
        else:
            mot_a[d] = dof_axis[d]
            c[0], c[1], c[2] = dof_point[d, 0] - ox, dof_point[d, 1] - oy, dof_point[d, 2] - oz
            _cross_add(c, dof_axis[d], zero3, mot_v[d])
    mm = np.zeros((nv, nv))
    bias = np.zeros(nv)
    for b in range(n):
        nc = chain_len[b]
        own = _own_dofs(b, jtype)
        sa, sh, sm = sub_a[b], sub_h[b], sub_m[b]
        for cj in range(nc - own, nc):
            j = chain[b, cj]
            aj, vj = mot_a[j], mot_v[j]
            _mv_into(sa, aj, torque)
            _cross_add(sh, vj, torque, torque)  # n_j = A a + h x v
            _cross_add(aj, sh, zero3, force)
            for r in range(3):
                force[r] += sm * vj[r]  # f_j = m v + a x h
            bias[j] = _dot(aj, sub_n[b]) + _dot(vj, sub_f[b])
            for ci in range(cj + 1):
                i = chain[b, ci]
                v = _dot(mot_a[i], torque) + _dot(mot_v[i], force)
                mm[i, j] = v
                mm[j, i] = v
    return mm, bias


@cached_njit
def _dof_parents(jtype, chain, chain_len, nv):
    """Each dof's parent in the dof tree (-1 for the first base dof): the dof before it in its
    body's chain. A body's dofs follow the base's 6 and its ancestors' in the chain."""
    n = jtype.shape[0]
    parents = np.empty(nv, dtype=np.int64)
    for b in range(n):
        nc = chain_len[b]
        own = _own_dofs(b, jtype)
        for c in range(nc - own, nc):
            parents[chain[b, c]] = chain[b, c - 1] if c > 0 else -1
    return parents


@cached_njit
def _tree_solve(a, b, parents):
    """x with a x = b for a symmetric positive definite a whose entry (i, j) is zero unless one of
    i, j is the other's ancestor in the dof tree `parents` (a mass matrix, plus any diagonal): the
    sparse L^T D L factorization (Featherstone, Rigid Body Dynamics Algorithms, section 6.5), which
    fills in nothing. Only a's lower triangle is read, and it is overwritten by the factor."""
    n = b.shape[0]
    for k in range(n - 1, -1, -1):
        i = parents[k]
        while i != -1:
            f = a[k, i] / a[k, k]
            j = i
            while j != -1:
                a[i, j] -= f * a[k, j]
                j = parents[j]
            a[k, i] = f
            i = parents[i]
    x = b.copy()
    for k in range(n - 1, -1, -1):
        i = parents[k]
        while i != -1:
            x[i] -= a[k, i] * x[k]
            i = parents[i]
    for k in range(n):
        x[k] /= a[k, k]
    for k in range(n):
        i = parents[k]
        while i != -1:
            x[k] -= a[k, i] * x[i]
            i = parents[i]
    return x


@cached_njit
def stable_pd_torques(q, qd, timestep, kp, kd, sph_targets, rev_targets, parent, jtype, frame_pos, frame_rot,
                      axis, inertial_pos, inertial_rot, mass, inertia, q_start, v_start, chain, chain_len, gravity):
    """Unclamped stable-PD generalized forces (compact layout) for per-dof gains kp, kd (0 on the base),
    targets per moving joint in link order (spherical wxyz, revolute angle); see pd_controller."""
    mm, bias = mass_matrix_and_bias(q, qd, parent, jtype, frame_pos, frame_rot, axis, inertial_pos,
                                    inertial_rot, mass, inertia, q_start, v_start, chain, chain_len, gravity)
    nv = qd.shape[0]
    err = np.zeros(nv)
    i_sph, i_rev = 0, 0
    h = 0.5 * timestep
    for i in range(1, parent.shape[0]):
        qs, vs = q_start[i], v_start[i]
        if jtype[i] == SPHERICAL:
            x, y, z, w = q[qs], q[qs + 1], q[qs + 2], q[qs + 3]
            ox, oy, oz = qd[vs], qd[vs + 1], qd[vs + 2]
            # predicted q' = q + dt/2 q (0, w_local), unnormalised (the exp map is scale-free)
            pw = w + h * (-x * ox - y * oy - z * oz)
            px = x + h * (w * ox + y * oz - z * oy)
            py = y + h * (w * oy + z * ox - x * oz)
            pz = z + h * (w * oz + x * oy - y * ox)
            tw, tx, ty, tz = (sph_targets[i_sph, 0], sph_targets[i_sph, 1], sph_targets[i_sph, 2],
                              sph_targets[i_sph, 3])
            # conj(q') * target
            ew = pw * tw + px * tx + py * ty + pz * tz
            ex = pw * tx - px * tw - py * tz + pz * ty
            ey = pw * ty - py * tw - pz * tx + px * tz
            ez = pw * tz - pz * tw - px * ty + py * tx
            sin_half = np.sqrt(ex * ex + ey * ey + ez * ez)
            if sin_half > 0.0:
                f = np.copysign(2.0 * np.arctan2(sin_half, np.abs(ew)) / sin_half, ew)
                err[vs], err[vs + 1], err[vs + 2] = f * ex, f * ey, f * ez
            i_sph += 1
        elif jtype[i] == REVOLUTE:
            err[vs] = rev_targets[i_rev] - (q[qs] + timestep * qd[vs])
            i_rev += 1
    rhs = np.empty(nv)
    for k in range(nv):
        mm[k, k] += timestep * kd[k]
        rhs[k] = kp[k] * err[k] - kd[k] * qd[k] - bias[k]
    acc = _tree_solve(mm, rhs, _dof_parents(jtype, chain, chain_len, nv))
    tau = np.empty(nv)
    for k in range(nv):
        tau[k] = kp[k] * err[k] - kd[k] * (qd[k] + timestep * acc[k])
    return tau


@cached_njit
def clamp_by_length(tau, jtype, v_start, limits, norms):
    """DeepMimic's cSimBodyJoint::ClampTotalTorque on compact generalized forces tau, in place: the
    torque of the k-th moving joint in link order scaled down to limits[k] by its length (norms[k]
    receives the length before the clamp); the base rows are left as they are."""
    k = 0
    for j in range(1, jtype.shape[0]):
        if jtype[j] == FIXED:
            continue
        s = v_start[j]
        e = s + (3 if jtype[j] == SPHERICAL else 1)
        length = 0.0
        for i in range(s, e):
            length += tau[i] * tau[i]
        length = np.sqrt(length)
        norms[k] = length
        if length > limits[k]:
            f = limits[k] / length
            for i in range(s, e):
                tau[i] = tau[i] * f
        k += 1


@cached_njit
def clamped_joint_torques(q, qd, timestep, kp, kd, sph_targets, rev_targets, limits, norms, parent, jtype,
                          frame_pos, frame_rot, axis, inertial_pos, inertial_rot, mass, inertia, q_start, v_start,
                          chain, chain_len, gravity):
    """What a stable-PD update commands: stable_pd_torques clamped by clamp_by_length, without the
    base rows (the moving joints' torques in link order, 3 per spherical and 1 per revolute joint)."""
    tau = stable_pd_torques(q, qd, timestep, kp, kd, sph_targets, rev_targets, parent, jtype, frame_pos,
                            frame_rot, axis, inertial_pos, inertial_rot, mass, inertia, q_start, v_start, chain,
                            chain_len, gravity)
    clamp_by_length(tau, jtype, v_start, limits, norms)
    return tau[6:]
