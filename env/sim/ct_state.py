"""States of DeepMimic's ct controller (cCtController::RecordState), in character units.

Heading frame: a yaw-only rotation about y that undoes the root's heading (heading = atan2(-z, x)
of the root's local x axis), origin on the ground under the root. In order:
  phase (1, when EnablePhaseInput): offset -0.5, scale 2, normaliser group None
  root height above the ground (1)
  per body in id order: centre minus the root joint position in the heading frame (3), then its
      rotation with the heading removed: layout 2021 -> normal R(0,1,0) and tangent R(1,0,0) (6),
      layout 2018 -> quaternion [w, x, y, z] with w >= 0 (4)
  per body: linear then angular velocity in the heading frame (6)
humanoid3d: 1 + 1 + 15 * 9 + 15 * 6 = 227 (226 without phase); 2018: 1 + 1 + 15 * 7 + 90 = 197.
RecordWorldRootPos keeps the root body's position in world axes (height above ground for y);
RecordWorldRootRot keeps the root body's rotation and both its velocities in world axes.
"""
import math

import numpy as np

from env.env import NormGroup

ROT_SIZES = {"2021": 6, "2018": 4}


def heading_of(w, x, y, z):
    """DeepMimic's heading of the rotation (w, x, y, z), plain floats: atan2(-z, x) of R (1, 0, 0)."""
    return math.atan2(-2.0 * (x * z - w * y), 1.0 - 2.0 * (y * y + z * z))


def heading_frame(quat):
    """(heading, 3x3 rotation by -heading about y) of a rotation [w, x, y, z]: maps world vectors
    into the heading frame. Scalar maths: this runs at every decision."""
    heading = heading_of(*np.asarray(quat, dtype=float).tolist())
    c, s = math.cos(heading), math.sin(heading)
    return heading, np.array([[c, 0.0, -s], [0.0, 1.0, 0.0], [s, 0.0, c]])


def _quadratic_form(terms):
    """(16,) weights on the products q_i q_j (i, j in w, x, y, z) of a unit quaternion."""
    weights = np.zeros(16)
    for coef, (i, j) in terms:
        weights["wxyz".index(i) * 4 + "wxyz".index(j)] += coef
    return weights


# R(q)(0,1,0) and R(q)(1,0,0) as quadratic forms of q (1 written as ww + xx + yy + zz)
_NORMAL_TANGENT = np.stack([_quadratic_form(t) for t in (
    [(2, "xy"), (-2, "wz")], [(1, "ww"), (-1, "xx"), (1, "yy"), (-1, "zz")], [(2, "yz"), (2, "wx")],
    [(1, "ww"), (1, "xx"), (-1, "yy"), (-1, "zz")], [(2, "xy"), (2, "wz")], [(2, "xz"), (-2, "wy")])], axis=1)


def normal_tangent(quats):
    """(n, 6): each rotation [w,x,y,z] applied to (0, 1, 0) then to (1, 0, 0) (DeepMimic's
    CalcNormalTangent), as one product of the quaternions' outer products with fixed weights."""
    n = len(quats)
    return (quats[:, :, None] * quats[:, None, :]).reshape(n, 16) @ _NORMAL_TANGENT


class StateLayout:
    def __init__(self, params, num_bodies):
        self.params = params
        self.num_bodies = num_bodies
        self.rot_size = ROT_SIZES[params.layout]
        self.phase_size = 1 if params.enable_phase_input else 0
        self.pose_size = 1 + num_bodies * (3 + self.rot_size)
        self.size = self.phase_size + self.pose_size + num_bodies * 6

    @property
    def offset(self):
        offset = np.zeros(self.size)
        offset[:self.phase_size] = -0.5
        return offset

    @property
    def scale(self):
        scale = np.ones(self.size)
        scale[:self.phase_size] = 2.0
        return scale

    @property
    def norm_groups(self):
        groups = np.full(self.size, int(NormGroup.Zero), dtype=np.int32)
        groups[:self.phase_size] = int(NormGroup.None_)
        return groups

    def entry_names(self, body_names):
        """A name per state entry, in order: phase, root_height, then per body <body>/pos_{x,y,z}
        and <body>/normal_{x,y,z}, <body>/tangent_{x,y,z} (2021) or <body>/rot_{w,x,y,z} (2018),
        then per body <body>/vel_{x,y,z}, <body>/ang_vel_{x,y,z} (frames: the module docstring)."""
        if len(body_names) != self.num_bodies:
            raise ValueError(f"{len(body_names)} body names for {self.num_bodies} bodies")
        rot = [f"{v}_{c}" for v in ("normal", "tangent") for c in "xyz"] if self.rot_size == 6 \
            else [f"rot_{c}" for c in "wxyz"]
        pose = [f"{b}/{e}" for b in body_names for e in [f"pos_{c}" for c in "xyz"] + rot]
        vel = [f"{b}/{v}_{c}" for b in body_names for v in ("vel", "ang_vel") for c in "xyz"]
        return ["phase"][:self.phase_size] + ["root_height"] + pose + vel

    def build(self, bodies, phase, ground_height=0.0):
        """The state vector from SimCharacter.get_body_states() (or the same fields of any character).
        One matrix product turns every vector (positions, normals and tangents, velocities) into the
        heading frame; the blocks are then written into the state in place."""
        params, n = self.params, self.num_bodies
        root_pos = bodies.joint_pos[0]
        heading, to_heading = heading_frame(bodies.rot[0])
        state = np.empty(self.size)
        i = self.phase_size
        state[:i] = phase
        state[i] = root_pos[1] - ground_height
        pose_part = state[i + 1:i + self.pose_size].reshape(n, 3 + self.rot_size)
        vel_part = state[i + self.pose_size:].reshape(n, 6)
        if self.rot_size == 6:
            nt = normal_tangent(bodies.rot)
            vecs = np.concatenate([bodies.pos - root_pos, nt.reshape(-1, 3), bodies.vel, bodies.ang_vel]) @ to_heading.T
            pose_part[:, 3:] = vecs[n:3 * n].reshape(n, 6)
            if params.record_world_root_rot:
                pose_part[0, 3:] = nt[0]
        else:
            vecs = np.concatenate([bodies.pos - root_pos, bodies.vel, bodies.ang_vel]) @ to_heading.T
            c, s = math.cos(0.5 * heading), -math.sin(0.5 * heading)  # heading^-1 = (c, 0, s, 0)
            # heading^-1 * q as a matrix on q = (w, x, y, z)
            left = np.array([[c, 0.0, -s, 0.0], [0.0, c, 0.0, s], [s, 0.0, c, 0.0], [0.0, -s, 0.0, c]])
            rots = bodies.rot @ left.T
            if params.record_world_root_rot:
                rots[0] = bodies.rot[0]
            rots[rots[:, 0] < 0.0] *= -1.0
            pose_part[:, 3:] = rots
        pose_part[:, :3] = vecs[:n]
        vel_part[:, :3] = vecs[-2 * n:-n]
        vel_part[:, 3:] = vecs[-n:]
        if params.record_world_root_pos:
            pose_part[0, :3] = bodies.pos[0]
            pose_part[0, 1] -= ground_height
        if params.record_world_root_rot:
            vel_part[0, :3], vel_part[0, 3:] = bodies.vel[0], bodies.ang_vel[0]
        return state


class TaskStateLayout:
    """The controller's state layout followed by scene features named `extra_names` (offset 0,
    scale 1, running normalisation): DeepMimic's RecordCtrlState + RecordTaskState (dribble_amp's
    ball), or imitate's reference frames ahead (--tar_obs_steps)."""

    def __init__(self, base, extra_names):
        self.base = base
        self.extra_names = list(extra_names)
        self.extra_size = len(self.extra_names)
        self.size = base.size + self.extra_size

    def entry_names(self, body_names):
        return self.base.entry_names(body_names) + self.extra_names

    @property
    def offset(self):
        return np.concatenate([self.base.offset, np.zeros(self.extra_size)])

    @property
    def scale(self):
        return np.concatenate([self.base.scale, np.ones(self.extra_size)])

    @property
    def norm_groups(self):
        return np.concatenate([self.base.norm_groups, np.full(self.extra_size, int(NormGroup.Zero), dtype=np.int32)])
