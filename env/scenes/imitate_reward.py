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
from env.sim.ct_state import heading_frame

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
        self.pose_scale = 2.0 / 15.0 * len(joints)
        self.vel_scale = 0.1 / 15.0 * len(joints)

    def joint_errors(self, pose0, pose1):
        """(spherical joint angle differences, revolute joint angle differences), in radians."""
        return (quat_angles(pose0[self.sph_cols], pose1[self.sph_cols]),
                np.abs(pose1[self.rev_cols] - pose0[self.rev_cols]))

    def calc(self, sim, ref):
        """(reward, {term: value in [0, 1]}) for the simulated vs the reference snapshot."""
        p0, p1 = sim.pose, ref.pose
        angles = quat_angles(p0[self.rot_cols], p1[self.rot_cols])
        root_rot_err = angles[0] ** 2
        pose_err = self.rot_weights @ angles ** 2 + self.rev_weights @ (p1[self.rev_cols] - p0[self.rev_cols]) ** 2
        dv = ref.vel - sim.vel
        dv2 = dv * dv
        vel_err = self.vel_weights @ dv2

        end_eff_err = float(np.sum((self._heading_local(ref) - self._heading_local(sim)) ** 2))
        root0, root1 = p0[0:3], p1[0:3]
        root_pos_err = ((root1[0] - root0[0]) ** 2 + (root1[2] - root0[2]) ** 2
                        + ((root1[1] - ref.ground_height) - (root0[1] - sim.ground_height)) ** 2)
        root_err = (root_pos_err + 0.1 * root_rot_err + 0.01 * (dv2[0] + dv2[1] + dv2[2])
                    + 0.001 * (dv2[3] + dv2[4] + dv2[5]))
        dcom = ref.com_vel - sim.com_vel
        com_err = 0.1 * float(dcom @ dcom)

        terms = {"pose": math.exp(-self.pose_scale * pose_err), "vel": math.exp(-self.vel_scale * vel_err),
                 "end_eff": math.exp(-10.0 * end_eff_err), "root": math.exp(-5.0 * root_err),
                 "com": math.exp(-10.0 * com_err)}
        return sum(WEIGHTS[k] * terms[k] for k in TERMS), terms

    def _heading_local(self, snap):
        """End-effector positions relative to the root (height above ground as y), heading frame."""
        rel = snap.joint_pos[self.end_effectors] - snap.pose[0:3]
        rel[:, 1] += snap.pose[1] - snap.ground_height
        return rel @ heading_frame(snap.pose[3:7])[1].T
