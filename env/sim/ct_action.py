"""Actions of DeepMimic's ct_pd controller: PD targets for every actuated joint, in joint id order.

Layout 2021 (28 for humanoid3d): spherical joint -> 3 numbers, an exponential map (axis * angle)
rescaled to length 2 pi when longer, as a quaternion target; bounds +-2 pi, offset 0, scale 1/pi.
Revolute joint -> 1 number, the target angle; with the joint limits [lo, hi], mid = (lo + hi)/2 and
range = hi - lo: bounds mid +- 2 range, offset -mid, scale 0.5 / range.

Layout 2018 (36): spherical joint -> 4 numbers (angle, axis x, y, z), the axis normalised (z when
zero); with the joint's angle range [lo, hi] (controller file AxisAngleLim): angle bounds
mid +- 2 (hi - lo), angle offset 0 and scale 0.5 / (hi - lo); axis bounds +-1, scale 1, offset 0
except -0.2 on the axis z. Revolute joints as in 2021.

Targets: (quaternions [w, x, y, z] (num spherical, 4), angles (num revolute,)), each in joint id
order, rotations relative to the parent joint. A policy's normalised action is (a + offset) * scale.
"""
import math

import numpy as np

from env.anim.character import JointType
from util import math_util

MAX_EXP_MAP_LEN = 2.0 * np.pi
_Z_AXIS = np.array([0.0, 0.0, 1.0])


class ActionLayout:
    sph_entries = ()        # names of a spherical joint's entries (their number: its size)

    def __init__(self, char_desc, axis_angle_lim=None):
        joints = [j for j in char_desc.joints if j.type in (JointType.SPHERICAL, JointType.REVOLUTE)]
        sph_size = len(self.sph_entries)
        sizes = [sph_size if j.type is JointType.SPHERICAL else 1 for j in joints]
        starts = np.cumsum([0] + sizes[:-1]).astype(int)
        self.size = int(sum(sizes))
        self.sph_joints = [j for j in joints if j.type is JointType.SPHERICAL]
        self.rev_joints = [j for j in joints if j.type is JointType.REVOLUTE]
        self.sph_cols = np.array([s for s, j in zip(starts, joints) if j.type is JointType.SPHERICAL])[:, None] \
            + np.arange(sph_size)
        self.rev_cols = np.array([s for s, j in zip(starts, joints) if j.type is JointType.REVOLUTE])
        self.offset = np.zeros(self.size)
        self.scale = np.ones(self.size)
        self.bound_min = np.zeros(self.size)
        self.bound_max = np.zeros(self.size)
        for joint, col in zip(self.rev_joints, self.rev_cols):
            mid, rng = 0.5 * (joint.limit_low + joint.limit_high), joint.limit_high - joint.limit_low
            self.offset[col], self.scale[col] = -mid, 0.5 / rng
            self.bound_min[col], self.bound_max[col] = mid - 2.0 * rng, mid + 2.0 * rng
        for joint, cols in zip(self.sph_joints, self.sph_cols):
            self._spherical_bounds(joint, cols, axis_angle_lim)

    def entry_names(self):
        """A name per action entry: <joint>/<entry> (sph_entries of spherical joints, angle of
        revolute ones), in joint id order."""
        names = [""] * self.size
        for joint, cols in zip(self.sph_joints, self.sph_cols):
            for col, entry in zip(cols, self.sph_entries):
                names[col] = f"{joint.name}/{entry}"
        for joint, col in zip(self.rev_joints, self.rev_cols):
            names[col] = f"{joint.name}/angle"
        return names

    def to_targets(self, action):
        action = np.asarray(action, dtype=float)
        if action.shape != (self.size,):
            raise ValueError(f"action has shape {action.shape}, expected ({self.size},)")
        return self._sph_targets(action[self.sph_cols]), action[self.rev_cols]

    def from_targets(self, sph_quats, rev_angles):
        """The action whose targets are these (inverse of to_targets)."""
        action = np.empty(self.size)
        action[self.sph_cols] = self._sph_actions(np.asarray(sph_quats, dtype=float))
        action[self.rev_cols] = rev_angles
        return action


class ExpMapAction(ActionLayout):
    sph_entries = ("exp_map_x", "exp_map_y", "exp_map_z")

    def _spherical_bounds(self, joint, cols, axis_angle_lim):
        self.scale[cols] = 2.0 / MAX_EXP_MAP_LEN
        self.bound_min[cols], self.bound_max[cols] = -MAX_EXP_MAP_LEN, MAX_EXP_MAP_LEN

    @staticmethod
    def _sph_targets(exp_maps):
        """q = (cos(a/2), sin(a/2)/a * e) with a = |e|, e first shortened to length 2 pi if longer.
        Plain floats per joint: this runs at every decision on a handful of rows."""
        quats = []
        for x, y, z in exp_maps.tolist():
            angle = math.sqrt(x * x + y * y + z * z)
            if angle > MAX_EXP_MAP_LEN:
                shrink = MAX_EXP_MAP_LEN / angle
                x, y, z, angle = x * shrink, y * shrink, z * shrink, MAX_EXP_MAP_LEN
            # sin(a/2)/a, by its series 1/2 - a^2/48 where the division would lose precision
            k = math.sin(0.5 * angle) / angle if angle > 1e-4 else 0.5 - angle * angle / 48.0
            quats.append((math.cos(0.5 * angle), k * x, k * y, k * z))
        return np.array(quats).reshape(-1, 4)

    @staticmethod
    def _sph_actions(quats):
        return math_util.quat_to_exp_map(quats)


class AxisAngleAction(ActionLayout):
    sph_entries = ("angle", "axis_x", "axis_y", "axis_z")

    def _spherical_bounds(self, joint, cols, axis_angle_lim):
        low, high = axis_angle_lim[joint.id]
        mid, rng = 0.5 * (low + high), high - low
        self.scale[cols[0]] = 0.5 / rng
        self.offset[cols[3]] = -0.2
        self.bound_min[cols[0]], self.bound_max[cols[0]] = mid - 2.0 * rng, mid + 2.0 * rng
        self.bound_min[cols[1:]], self.bound_max[cols[1:]] = -1.0, 1.0

    @staticmethod
    def _sph_targets(angle_axes):
        axes = angle_axes[:, 1:]
        zero = np.linalg.norm(axes, axis=1, keepdims=True) == 0.0
        return math_util.quat_from_axis_angle(np.where(zero, _Z_AXIS, axes), angle_axes[:, 0])

    @staticmethod
    def _sph_actions(quats):
        axes, angles = math_util.quat_to_axis_angle(quats)
        return np.concatenate([angles[:, None], axes], axis=1)


ACTION_LAYOUTS = {"2021": ExpMapAction, "2018": AxisAngleAction}


def build_action_layout(params, char_desc):
    return ACTION_LAYOUTS[params.layout](char_desc, params.axis_angle_lim)
