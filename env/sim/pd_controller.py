"""Stable PD (Tan et al. 2011) as DeepMimic's cImpPDController computes it, in three implementations.

Per env update of dt (both schemes compute once and hold the result over the update's physics
sub-steps, as DeepMimic does):
    predicted pose  q' = q + dt * qdot        (quaternions: q + dt * 0.5 q (0, w_local), normalised)
    error           e  = q_target (-) q'      (spherical: exp map of q'^-1 q_target, in the joint frame)
    (M + dt Kd) a = Kp e - Kd qdot - C        (full mass matrix M and bias forces C, root included,
                                               root gains 0)
    torque          t  = Kp e - Kd (qdot + dt a), then clamped to the joint's torque limit.

Scaling: DeepMimic computes this on the unscaled character and multiplies the torque by
world_scale^2. In the scaled physics (lengths x s, masses unchanged) M and C of the rotational
dofs are s^2 the unscaled ones, so the same torques come out of the scaled model with gains and
limits x s^2; that is what both classes use.

- ExactStablePD ("exact"): the formula above in numpy with pybullet's mass matrix and
  bias forces (calculateMassMatrix / calculateInverseDynamics, flags=1 padded layout), DeepMimic's
  length clamp (cSimBodyJoint::ClampTotalTorque), applied as joint torques. pybullet builds the
  model behind those two calls when the body is created and keeps it (later changeDynamics
  inertias are not seen), and its M and C are off pybullet's own simulation (see "tree").
- BuiltinStablePD ("builtin"): pybullet's STABLE_PD_CONTROL, one setJointMotorControlMultiDofArray
  per update; it takes the physics time step (the env update, the sub-steps being internal) as dt.
  It clamps each torque component to the limit, where DeepMimic clamps a spherical joint's torque
  vector by its length: the two agree to 1e-8 until a joint saturates, and then builtin applies up
  to sqrt(3) times the limit. About 5x cheaper per update. The wheel's pretrained policies were
  trained under it (humanoid3d_ctrl_2018.txt keeps it).
- TreeStablePD ("tree", the default): ExactStablePD with the mass matrix and bias forces of our own
  compiled model (env/sim/tree_dynamics.py, numba) and the whole formula, clamp included, in the same
  compiled call. Its M and C reproduce pybullet's forward dynamics (one free stepSimulation) to 1e-14
  relative; pybullet's calculateMassMatrix / calculateInverseDynamics do not (0.2% of C off, kinetic
  energy 0.4% off on a random humanoid state), so "tree" torques differ from "exact" (and builtin)
  ones by ~0.6% of the largest torque. With the wheel's C API (env/sim/bullet_c_api.py) the whole
  update, state read and torque command included, is one compiled call: ~8.3 us per update against
  ~18 us for the Python path it keeps for other builds (state read 8 us, 6 of them in pybullet;
  compiled M, C, error, tree-sparse solve and clamp 7 us; torque lists 1 us; command 1.5 us),
  bitwise the same trajectories; where the C API cannot be used, one warning line says why. First use
  compiles for 20-80 s (on this loaded host), cached in __pycache__ afterwards (0.3-1.5 s to load);
  an edit of the compiled functions' files or of any project module they import recompiles
  (util/compiled_cache.py: numba's own cache looks at the function's file only).

Why no hybrid (builtin where no joint saturates, exact elsewhere): the built-in torques cannot be
read back, so deciding needs the exact torques anyway; and under training's exploration noise
35% of updates have a saturated joint and a joint's torque/limit ratio jumps by up to 2-4 within
one 1/600 s update (contacts), so no cheap predictor decides safely (measured on walk and
backflip, ExpParams noise 0.05).
"""
from itertools import chain

import numpy as np
import pybullet as p

from env.sim import bullet_c_api, tree_dynamics
from util import math_util
from util.warn_once import warn_once

PD_MODES = ("builtin", "exact", "tree")


class StablePD:
    """Gains per joint id (kp, kd, torque_lim: arrays over all joints, unscaled) and the targets."""

    def __init__(self, sim_char, kp, kd, torque_lim):
        self.sim_char = sim_char
        self.client = sim_char.client
        s2 = sim_char.scale ** 2
        ids = sim_char.actuated_ids
        self.joint_ids = ids
        self.is_sph = [j in sim_char.sph_ids for j in ids]
        self.kp = np.asarray(kp, dtype=float)[ids] * s2
        self.kd = np.asarray(kd, dtype=float)[ids] * s2
        self.torque_lim = np.asarray(torque_lim, dtype=float)[ids] * s2
        # position of each actuated joint among the spherical / revolute ones
        self._type_index = [sum(self.is_sph[:i]) if sph else i - sum(self.is_sph[:i])
                            for i, sph in enumerate(self.is_sph)]
        self.sph_targets = None
        self.rev_targets = None

    def set_targets(self, sph_quats, rev_angles):
        """Targets: quaternions [w,x,y,z] of the spherical joints relative to their parents and angles
        of the revolute joints, each in joint id order. Spherical targets are kept in pybullet's joint
        coordinates (SimCharacter.joint_quats_to_bullet), those of the state they are compared with."""
        self.sph_targets = self.sim_char.joint_quats_to_bullet(np.asarray(sph_quats, dtype=float))
        self.rev_targets = np.asarray(rev_angles, dtype=float)


class BuiltinStablePD(StablePD):
    def __init__(self, sim_char, kp, kd, torque_lim):
        super().__init__(sim_char, kp, kd, torque_lim)
        self._kps = list(self.kp)
        self._kds = list(self.kd)
        self._forces = [[lim] * 3 if sph else [lim] for lim, sph in zip(self.torque_lim, self.is_sph)]
        self._zero_vels = [[0.0] * 3 if sph else [0.0] for sph in self.is_sph]
        self._target_positions = None

    def set_targets(self, sph_quats, rev_angles):
        super().set_targets(sph_quats, rev_angles)
        xyzw = self.sph_targets[:, [1, 2, 3, 0]].tolist()
        angles = [[a] for a in self.rev_targets.tolist()]
        self._target_positions = [xyzw[i] if sph else angles[i] for i, sph in zip(self._type_index, self.is_sph)]

    def apply(self, timestep):
        p.setJointMotorControlMultiDofArray(self.sim_char.body, self.joint_ids, p.STABLE_PD_CONTROL,
                                            targetPositions=self._target_positions,
                                            targetVelocities=self._zero_vels, positionGains=self._kps,
                                            velocityGains=self._kds, forces=self._forces,
                                            physicsClientId=self.client)


class ExactStablePD(StablePD):
    """The stable-PD formula solved in numpy every update, DeepMimic's length clamp, joint torques.

    Per update: the state (18 us), pybullet's mass matrix (~125 us with its conversion), bias forces
    (~50 us), the error and the 43x43 solve in a few batched numpy calls (~50 us), one torque
    command (3 us): ~250 us against ~60 us for the built-in command, whose cost is the marshalling
    of its nested argument lists."""

    def __init__(self, sim_char, kp, kd, torque_lim):
        super().__init__(sim_char, kp, kd, torque_lim)
        # offsets of each actuated joint in pybullet's padded 43-dim layout (root 7 = 3 + 3 + pad)
        starts, offset = [], 7
        for sph in self.is_sph:
            starts.append(offset)
            offset += 4 if sph else 1
        self.size = offset
        self._starts = starts
        is_sph = np.array(self.is_sph)
        sph_starts = np.array([o for o, sph in zip(starts, self.is_sph) if sph])
        self._rev_starts = np.array([o for o, sph in zip(starts, self.is_sph) if not sph])
        self._sph_cols = sph_starts[:, None] + np.arange(3)
        self._sph_wxyz_cols = sph_starts[:, None] + np.array([3, 0, 1, 2])  # pybullet stores xyzw
        self._sph_pos = np.flatnonzero(is_sph)
        self._rev_pos = np.flatnonzero(~is_sph)
        self._sph_lim = self.torque_lim[is_sph]
        self._rev_lim = self.torque_lim[~is_sph]
        self.kp_vec = np.zeros(self.size)
        self.kd_vec = np.zeros(self.size)
        for o, sph, kp, kd in zip(starts, self.is_sph, self.kp, self.kd):
            n = 3 if sph else 1
            self.kp_vec[o:o + n] = kp
            self.kd_vec[o:o + n] = kd
        self._diag = np.arange(self.size)
        self._zero_acc = [0.0] * self.size
        self._omega = np.zeros((len(sph_starts), 4))
        self._err_from_pred = None
        self.last_torque_norms = np.zeros(len(self.joint_ids))

    def set_targets(self, sph_quats, rev_angles):
        super().set_targets(sph_quats, rev_angles)
        # err = conj(pred) * target = R(target) C pred, one 4x4 matrix per joint for the whole decision
        self._err_from_pred = math_util.quat_right_matrix(self.sph_targets) * math_util.quat_conj(np.ones(4))

    def calc_torques(self, timestep):
        """Unclamped stable-PD generalized forces (padded 43 layout, physics units) at the current state."""
        body, client, n = self.sim_char.body, self.client, self.size
        q, qd = self.sim_char.get_generalized_state()
        mass = np.fromiter(chain.from_iterable(p.calculateMassMatrix(body, q, flags=1, physicsClientId=client)),
                           float, n * n).reshape(n, n)
        bias = np.array(p.calculateInverseDynamics(body, q, qd.tolist(), self._zero_acc, flags=1,
                                                   physicsClientId=client))
        q_arr = np.asarray(q)
        # spherical: predicted q' = q + dt/2 q (0, w_local), left unnormalised (the exp map is scale-free)
        quats = q_arr[self._sph_wxyz_cols]
        self._omega[:, 1:] = qd[self._sph_cols]
        pred = quats + (0.5 * timestep) * (math_util.quat_left_matrix(quats) @ self._omega[..., None])[..., 0]
        err_quat = (self._err_from_pred @ pred[..., None])[..., 0]
        err = np.zeros(n)
        # exp map of err_quat the short way round (math_util.quat_to_exp_map, inlined: half the cost)
        w, v = err_quat[:, 0], err_quat[:, 1:]
        sin_half = np.sqrt((v * v).sum(axis=1))
        angle = 2.0 * np.arctan2(sin_half, np.abs(w))
        err[self._sph_cols] = v * np.copysign(angle / np.where(sin_half > 0.0, sin_half, 1.0), w)[:, None]
        rs = self._rev_starts
        err[rs] = self.rev_targets - (q_arr[rs] + timestep * qd[rs])
        mass[self._diag, self._diag] += timestep * self.kd_vec
        acc = np.linalg.solve(mass, self.kp_vec * err - self.kd_vec * qd - bias)
        return self.kp_vec * err - self.kd_vec * (qd + timestep * acc)

    def joint_torques(self, tau):
        """Per actuated joint: its torque vector (3) or scalar (1) out of the padded layout."""
        return [tau[o:o + 3] if sph else tau[o:o + 1] for o, sph in zip(self._starts, self.is_sph)]

    def clamped_joint_forces(self, tau):
        """DeepMimic's clamp (cSimBodyJoint::ClampTotalTorque): each joint's torque vector scaled down
        to its limit by length; as per-joint lists for setJointMotorControlMultiDofArray."""
        sph, rev = tau[self._sph_cols], tau[self._rev_starts]
        sph_norm = np.sqrt(np.einsum("ij,ij->i", sph, sph))
        rev_norm = np.abs(rev)
        self.last_torque_norms[self._sph_pos] = sph_norm
        self.last_torque_norms[self._rev_pos] = rev_norm
        sph = sph * np.minimum(1.0, self._sph_lim / np.maximum(sph_norm, 1e-300))[:, None]
        rev = rev * np.minimum(1.0, self._rev_lim / np.maximum(rev_norm, 1e-300))
        forces = [None] * len(self.joint_ids)
        for i, force in zip(self._sph_pos.tolist(), sph.tolist()):
            forces[i] = force
        for i, force in zip(self._rev_pos.tolist(), rev.tolist()):
            forces[i] = [force]
        return forces

    def apply(self, timestep):
        p.setJointMotorControlMultiDofArray(self.sim_char.body, self.joint_ids, p.TORQUE_CONTROL,
                                            forces=self.clamped_joint_forces(self.calc_torques(timestep)),
                                            physicsClientId=self.client)


class TreeStablePD(ExactStablePD):
    """ExactStablePD with its own compiled mass matrix and bias forces (env/sim/tree_dynamics.py): the
    whole update is one numba call between the state read and the torque command.

    Not the same torques as ExactStablePD: pybullet's calculateMassMatrix / calculateInverseDynamics
    (which ExactStablePD and pybullet's STABLE_PD_CONTROL use) disagree with pybullet's own forward
    dynamics by ~0.2% of the bias forces (0.4% kinetic energy on a random humanoid state), where
    tree_dynamics reproduces one stepSimulation to 1e-14 relative (tests/test_sim_pd_dynamics.py)."""

    def __init__(self, sim_char, kp, kd, torque_lim):
        super().__init__(sim_char, kp, kd, torque_lim)
        model = tree_dynamics.TreeModel(sim_char.body, self.client)
        moving = [i - 1 for i in range(1, len(model.parent)) if model.jtype[i] != tree_dynamics.FIXED]
        if moving != list(self.joint_ids):
            raise ValueError(f"{sim_char.desc.path}: the moving pybullet joints {moving} are not the actuated "
                             f"joints {list(self.joint_ids)}")
        self._model_arrays = model.arrays()
        self._num_q, self._num_v = model.num_q, model.num_v
        # compact dof k (no pads) sits at padded index _compact_to_padded[k]
        self._compact_to_padded = np.concatenate(
            [np.arange(6)] + [np.arange(o, o + (3 if sph else 1)) for o, sph in zip(self._starts, self.is_sph)])
        self._kp_compact = self.kp_vec[self._compact_to_padded]
        self._kd_compact = self.kd_vec[self._compact_to_padded]
        # each joint's slice of the joint torques (compact layout without the base)
        ends = np.cumsum([3 if sph else 1 for sph in self.is_sph]).tolist()
        self._joint_slices = [(e - (3 if sph else 1), e) for e, sph in zip(ends, self.is_sph)]
        # the compiled update through pybullet's C API (env/sim/bullet_c_api.py), where the wheel has it
        self.c_api = bullet_c_api.available() is True
        if not self.c_api:
            warn_once("stable PD", "the Python path, about 2x slower than the compiled update: pybullet's C API "
                                   f"cannot be used ({bullet_c_api.available()})")
        else:
            # each joint's velocity offset and width: the model's compact layout is pybullet's u-vector
            self._slot = bullet_c_api.client_slot(self.client)
            self._u_index = model.v_start[np.array(moving) + 1].astype(np.int32)
            self._u_size = np.array([3 if sph else 1 for sph in self.is_sph], dtype=np.int32)
            self._q, self._qd = np.zeros(self._num_q), np.zeros(self._num_v)

    def set_targets(self, sph_quats, rev_angles):
        StablePD.set_targets(self, sph_quats, rev_angles)  # ExactStablePD's per-decision matrices are not used
        self._sph_targets = np.ascontiguousarray(self.sph_targets, dtype=float).reshape(-1, 4)
        self._rev_targets = np.ascontiguousarray(self.rev_targets, dtype=float).reshape(-1)

    def generalized_state(self):
        """(q, qdot) without pads: base pos, quat xyzw, joint positions; base lin, ang (world), joint rates."""
        body, client = self.sim_char.body, self.client
        pos, rot = p.getBasePositionAndOrientation(body, physicsClientId=client)
        lin, ang = p.getBaseVelocity(body, physicsClientId=client)
        q, qd = [*pos, *rot], [*lin, *ang]
        for jq, jqd, _, _ in p.getJointStatesMultiDof(body, self.joint_ids, physicsClientId=client):
            q += jq
            qd += jqd
        return np.fromiter(q, float, self._num_q), np.fromiter(qd, float, self._num_v)

    def calc_torques(self, timestep):
        """Unclamped stable-PD generalized forces (padded 43 layout, physics units) at the current state."""
        q, qd = self.generalized_state()
        tau = np.zeros(self.size)
        tau[self._compact_to_padded] = tree_dynamics.stable_pd_torques(
            q, qd, timestep, self._kp_compact, self._kd_compact, self._sph_targets, self._rev_targets,
            *self._model_arrays)
        return tau

    def joint_forces(self, timestep):
        """The clamped torques per actuated joint at the current state, as the torque command takes
        them: one compiled call (tree_dynamics.clamped_joint_torques) after the state read."""
        q, qd = self.generalized_state()
        tau = tree_dynamics.clamped_joint_torques(q, qd, timestep, self._kp_compact, self._kd_compact, self._sph_targets,
                                                  self._rev_targets, self.torque_lim, self.last_torque_norms,
                                                  *self._model_arrays).tolist()
        return [tau[s:e] for s, e in self._joint_slices]

    def apply(self, timestep):
        if not self.c_api:
            p.setJointMotorControlMultiDofArray(self.sim_char.body, self.joint_ids, p.TORQUE_CONTROL,
                                                forces=self.joint_forces(timestep), physicsClientId=self.client)
            return
        code = bullet_c_api.stable_pd_update(
            self._slot, self.sim_char.body, p.TORQUE_CONTROL, self._u_index, self._u_size, self._q, self._qd,
            timestep, self._kp_compact, self._kd_compact, self._sph_targets, self._rev_targets, self.torque_lim,
            self.last_torque_norms, *self._model_arrays)
        if code != bullet_c_api.OK:
            raise RuntimeError(f"stable PD of body {self.sim_char.body}: pybullet client {self.client} is "
                               + ("not connected" if code == bullet_c_api.NOT_CONNECTED else "not answering its state"))


PD_CONTROLLERS = {"builtin": BuiltinStablePD, "exact": ExactStablePD, "tree": TreeStablePD}


def build_pd_controller(mode, sim_char, kp, kd, torque_lim):
    if mode not in PD_CONTROLLERS:
        raise ValueError(f"PDMode {mode!r} is not one of {', '.join(PD_MODES)}")
    return PD_CONTROLLERS[mode](sim_char, kp, kd, torque_lim)
