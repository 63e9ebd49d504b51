"""DeepMimic's 2021 imitation reward (cSceneImitate::CalcRewardImitate), character units.

    r = 0.5 exp(-2 pose_err) + 0.05 exp(-0.1 vel_err) + 0.15 exp(-10 ee_err)
        + 0.2 exp(-5 root_err) + 0.1 exp(-10 com_err)
(for 15 joints; the pose and velocity scales are 2/15 and 0.1/15 per joint). With joint weights
w_j = DiffWeight_j / sum(DiffWeight):
  pose_err = w_root angle(root_sim, root_ref)^2 + sum_j w_j d_j^2, d_j the angle of the local
             quaternion difference (spherical) or the angle difference (revolute)
  vel_err  = w_root |d root angular velocity|^2 + sum_j w_j |d local joint velocity|^2
  ee_err   = sum over end effectors of |d p|^2, p = joint position minus root position with the
             height above the ground as y, in each character's own heading frame
  root_err = |d root pos|^2 (y as height above ground) + 0.1 angle(root)^2
             + 0.01 |d root vel|^2 + 0.001 |d root angular vel|^2
  com_err  = 0.1 |d centre-of-mass velocity|^2
The reference's ground height is its origin's height (DeepMimic's kin_char.GetOriginPos()[1]).
"""
import math
from dataclasses import dataclass

import numpy as np

from env.anim.character import JointType
from env.sim.ct_state import heading_of

WEIGHTS = {"pose": 0.5, "vel": 0.05, "end_eff": 0.15, "root": 0.2, "com": 0.1}
TERMS = tuple(WEIGHTS)


@dataclass
class CharSnapshot:
    """What the reward reads from one character (character units, world frame)."""
    pose: np.ndarray          # (pose_size,)
    vel: np.ndarray           # (dof_size,)
    joint_pos: np.ndarray     # (num_joints, 3) joint world positions
    com_vel: np.ndarray       # (3,)
    ground_height: float


def quat_angles(q0, q1):
    """Angles (n,) between rotations q0 and q1 (n, 4): 2 atan2(|vec(q0^-1 q1)|, |w|)."""
    dot = np.abs(np.sum(q0 * q1, axis=1))
    # |q0^-1 q1| = 1, so |vec| = sqrt(1 - w^2) with w = q0 . q1
    return 2.0 * np.arctan2(np.sqrt(np.maximum(1.0 - dot * dot, 0.0)), dot)


class ImitateReward:
    def __init__(self, char_desc):
        joints = char_desc.joints
        weights = np.array([j.diff_weight for j in joints])
        weights = weights / np.abs(weights).sum()
        sph = [j.id for j in joints if j.type is JointType.SPHERICAL]
        rev = [j.id for j in joints if j.type is JointType.REVOLUTE]
        # rotations compared by angle: the root first, then the spherical joints
        self.sph_cols = np.array([char_desc.param_offset[j] for j in sph])[:, None] + np.arange(4)
        self.rot_cols = np.concatenate([np.arange(3, 7)[None], self.sph_cols])
        self.rot_weights = np.concatenate([[weights[0]], weights[sph]])
        self.rev_cols = np.array([char_desc.param_offset[j] for j in rev])
        self.rev_weights = weights[rev]
        # velocity error weights per dof: root angular velocity and every joint's dofs
        self.vel_weights = np.zeros(char_desc.dof_size)
        self.vel_weights[3:6] = weights[0]
        for j in joints[1:]:
            self.vel_weights[char_desc.dof_offset[j.id]:char_desc.dof_offset[j.id] + char_desc.dof_size_of[j.id]] = \
                weights[j.id]
        self.end_effectors = [j.id for j in joints if j.is_end_effector]
        self._end_effector_rows = np.array(self.end_effectors, dtype=np.intp)
        # (weight, first pose column) per compared rotation / revolute angle, as plain Python numbers
        self._rot_terms = [(float(w), int(cols[0])) for w, cols in zip(self.rot_weights, self.rot_cols)]
        self._rev_terms = [(float(w), int(c)) for w, c in zip(self.rev_weights, self.rev_cols)]
        self.pose_scale = 2.0 / 15.0 * len(joints)
        self.vel_scale = 0.1 / 15.0 * len(joints)

    def joint_errors(self, pose0, pose1):
        """(spherical joint angle differences, revolute joint angle differences), in radians."""
        return (quat_angles(pose0[self.sph_cols], pose1[self.sph_cols]),
                np.abs(pose1[self.rev_cols] - pose0[self.rev_cols]))

    def calc(self, sim, ref):
        """(reward, {term: value in [0, 1]}) for the simulated vs the reference snapshot. Plain-float
        maths over the pose lists: the arrays are too small for numpy's per-call cost to pay off."""
        l0, l1 = sim.pose.tolist(), ref.pose.tolist()
        atan2, sqrt = math.atan2, math.sqrt
        pose_err = root_rot_err = 0.0
        for w, c in self._rot_terms:
            dot = abs(l0[c] * l1[c] + l0[c + 1] * l1[c + 1] + l0[c + 2] * l1[c + 2] + l0[c + 3] * l1[c + 3])
            angle = 2.0 * atan2(sqrt(max(1.0 - dot * dot, 0.0)), dot)
            if c == 3:
                root_rot_err = angle * angle
            pose_err += w * angle * angle
        for w, c in self._rev_terms:
            d = l1[c] - l0[c]
            pose_err += w * d * d
        dv = ref.vel - sim.vel
        dv2 = dv * dv
        vel_err = float(self.vel_weights @ dv2)
        r0 = dv2[:6].tolist()

        end_eff_err = 0.0
        for (x1, y1, z1), (x0, y0, z0) in zip(self._heading_local(ref, l1), self._heading_local(sim, l0)):
            end_eff_err += (x1 - x0) ** 2 + (y1 - y0) ** 2 + (z1 - z0) ** 2
        root_pos_err = ((l1[0] - l0[0]) ** 2 + (l1[2] - l0[2]) ** 2
                        + ((l1[1] - ref.ground_height) - (l0[1] - sim.ground_height)) ** 2)
        root_err = (root_pos_err + 0.1 * root_rot_err + 0.01 * (r0[0] + r0[1] + r0[2])
                    + 0.001 * (r0[3] + r0[4] + r0[5]))
        dcom = (ref.com_vel - sim.com_vel).tolist()
        com_err = 0.1 * (dcom[0] * dcom[0] + dcom[1] * dcom[1] + dcom[2] * dcom[2])

        terms = {"pose": math.exp(-self.pose_scale * pose_err), "vel": math.exp(-self.vel_scale * vel_err),
                 "end_eff": math.exp(-10.0 * end_eff_err), "root": math.exp(-5.0 * root_err),
                 "com": math.exp(-10.0 * com_err)}
        return sum(WEIGHTS[k] * terms[k] for k in TERMS), terms

    def _heading_local(self, snap, pose):
        """End-effector positions relative to the root (height above ground as y), heading frame:
        [(x, y, z)] per end effector. `pose` is snap.pose as a list."""
        rx, ry, rz = pose[0], pose[1], pose[2]
        heading = heading_of(pose[3], pose[4], pose[5], pose[6])
        c, s = math.cos(heading), math.sin(heading)
        height = ry - snap.ground_height
        out = []
        for px, py, pz in snap.joint_pos[self._end_effector_rows].tolist():
            dx, dz = px - rx, pz - rz
            out.append((c * dx - s * dz, py - ry + height, s * dx + c * dz))
        return out
