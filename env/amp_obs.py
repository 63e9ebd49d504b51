"""The AMP observation (DeepMimic's cSceneImitateAMP::BuildAMPObs, deepmimic.md 4.2), over a window
of N character states one decision apart (the AMP agent's DiscObsSteps; DeepMimic's pair is N = 2):

    obs = [pose(t), pose(t - 1), ..., pose(t - N + 1), vel(t), vel(t - 1), ..., vel(t - N + 1)]

(the agent's current state and those it had at its previous decisions, or a clip at t, t - 1/30 s,
...). Every pose is expressed relative to the heading of the newest one: H = rotation by
-heading(t) about y (heading = atan2(-z, x) of the root's local x axis). With N = 2 this is
DeepMimic's layout exactly; with N > 2 it is the windowed observation of DeepMimic's successor
(amp-variants.md), in DeepMimic's per-frame features.

pose(.) (71 for humanoid3d):
  root height: root y minus the ground height (1)
  root rotation: normal R(0, 1, 0) then tangent R(1, 0, 0) of the world root rotation R, or of
      H R with local_root (6)
  each non-root joint in id order: spherical -> normal and tangent of its local rotation (6),
      revolute -> its angle (1), fixed -> nothing
  each end-effector body (joints flagged IsEndEffector), in id order: H (body centre - root position) (3)
vel(.) (42): root linear then angular velocity (world, or H applied with local_root) (6), then each
  non-root joint's raw velocity: spherical -> its 3 local angular velocity components and a 0
  (DeepMimic stores them in 4 slots), revolute -> its angle rate (1), fixed -> nothing.
humanoid3d: N * (1 + 6 + 8 * 6 + 4 + 4 * 3) + N * (6 + 8 * 4 + 4) = N * (71 + 42): 226 for N = 2.
Normalisation: offset 0, scale 1, every entry in group 0 (per-dimension statistics).
"""
import numpy as np

from env.anim.character import JointType
from env.anim.kin_character import KinCharacter
from env.env import NormGroup
from util import math_util

ROT_SIZE = 6           # normal + tangent
SPH_VEL_SLOTS = 4      # DeepMimic pads spherical joint velocities to quaternion size


def heading_inverse_matrix(root_rot):
    """3x3 rotation(s) by -heading about y: take world vectors into the heading frame ((..., 3, 3)
    for root rotations (..., 4) [w, x, y, z]). The heading is math_util.quat_heading's, atan2(-z, x)
    of the root's x axis (x, y, z) = (1 - 2 (y^2 + z^2), 2 (xy + wz), 2 (xz - wy)), written out."""
    q = np.asarray(root_rot, dtype=float)
    w, x, y, z = q[..., 0], q[..., 1], q[..., 2], q[..., 3]
    heading = np.arctan2(-2.0 * (x * z - w * y), 1.0 - 2.0 * (y * y + z * z))
    c, s = np.cos(heading), np.sin(heading)
    out = np.zeros(heading.shape + (3, 3))
    out[..., 0, 0] = out[..., 2, 2] = c
    out[..., 0, 2] = -s
    out[..., 2, 0] = s
    out[..., 1, 1] = 1.0
    return out


class AMPObsBuilder:
    def __init__(self, char_desc, local_root=False, num_steps=2):
        if isinstance(num_steps, bool) or not isinstance(num_steps, int) or num_steps < 2:
            raise ValueError(f"AMP observation window: {num_steps!r} frames, expected an integer >= 2")
        self.local_root = local_root
        self.num_steps = num_steps
        self.kin = KinCharacter(char_desc)
        self.end_effectors = np.array([j.id for j in char_desc.joints if j.is_end_effector], dtype=int)

        # where each joint's entries go in the joint part of pose(.) and vel(.)
        sph_pose_cols, sph_obs, rev_pose_cols, rev_obs = [], [], [], []
        sph_dofs, sph_vel_obs, rev_dofs, rev_vel_obs = [], [], [], []
        pose_at, vel_at = 0, 0
        for joint in char_desc.joints[1:]:
            p, d = char_desc.param_offset[joint.id], char_desc.dof_offset[joint.id]
            if joint.type is JointType.SPHERICAL:
                sph_pose_cols.append(p)
                sph_obs.append(pose_at)
                sph_dofs.append(d)
                sph_vel_obs.append(vel_at)
                pose_at += ROT_SIZE
                vel_at += SPH_VEL_SLOTS
            elif joint.type is JointType.REVOLUTE:
                rev_pose_cols.append(p)
                rev_obs.append(pose_at)
                rev_dofs.append(d)
                rev_vel_obs.append(vel_at)
                pose_at += 1
                vel_at += 1
        self._sph_pose_cols = np.array(sph_pose_cols, dtype=int)[:, None] + np.arange(4)
        self._sph_obs = 1 + ROT_SIZE + np.array(sph_obs, dtype=int)[:, None] + np.arange(ROT_SIZE)
        self._rev_pose_cols = np.array(rev_pose_cols, dtype=int)
        self._rev_obs = 1 + ROT_SIZE + np.array(rev_obs, dtype=int)
        self._sph_dofs = np.array(sph_dofs, dtype=int)[:, None] + np.arange(3)
        self._sph_vel_obs = 6 + np.array(sph_vel_obs, dtype=int)[:, None] + np.arange(3)
        self._rev_dofs = np.array(rev_dofs, dtype=int)
        self._rev_vel_obs = 6 + np.array(rev_vel_obs, dtype=int)
        self._ee_start = 1 + ROT_SIZE + pose_at

        self.pose_size = self._ee_start + 3 * len(self.end_effectors)
        self.vel_size = 6 + vel_at
        self.size = num_steps * (self.pose_size + self.vel_size)

    @property
    def offset(self):
        return np.zeros(self.size)

    @property
    def scale(self):
        return np.ones(self.size)

    @property
    def norm_groups(self):
        return np.full(self.size, int(NormGroup.Zero), dtype=np.int32)

    def build(self, frames, ground_height, body_pos=None):
        """The observation of `frames`, num_steps (pose, vel) pairs newest first, above the ground;
        body_pos (num_steps, num_joints, 3): the frames' body centres in world where the caller
        has them (a simulated character's, read from the physics), else forward kinematics."""
        if len(frames) != self.num_steps:
            raise ValueError(f"AMP observation: {len(frames)} frames for a window of {self.num_steps}")
        poses = np.stack([pose for pose, _ in frames])[None]
        vels = np.stack([vel for _, vel in frames])[None]
        return self.build_batch(poses, vels, np.array([ground_height], dtype=float),
                                None if body_pos is None else np.asarray(body_pos)[None])[0]

    def build_batch(self, poses, vels, ground_heights, body_pos=None):
        """Observations (B, size) of B windows at once: poses (B, num_steps, pose_size) and vels
        (B, num_steps, dof_size) newest first, each window above its ground height (B,); body_pos
        (B, num_steps, num_joints, 3) as in build."""
        poses, vels = np.asarray(poses, dtype=float), np.asarray(vels, dtype=float)
        batch = poses.shape[0]
        to_heading = heading_inverse_matrix(poses[:, 0, 3:7])[:, None]      # (B, 1, 3, 3)
        if body_pos is None:
            body_pos, _ = self.kin.calc_body_world(poses)
        pose_obs = self._pose_obs(poses, body_pos, np.asarray(ground_heights, dtype=float), to_heading)
        vel_obs = self._vel_obs(vels, to_heading)
        return np.concatenate([pose_obs.reshape(batch, -1), vel_obs.reshape(batch, -1)], axis=1)

    def _pose_obs(self, poses, body_pos, ground_heights, to_heading):
        out = np.zeros(poses.shape[:2] + (self.pose_size,))
        root_pos = poses[..., 0:3]
        out[..., 0] = root_pos[..., 1] - ground_heights[:, None]
        root_mat = math_util.quat_to_matrix(poses[..., 3:7])
        if self.local_root:
            root_mat = to_heading @ root_mat
        out[..., 1:1 + ROT_SIZE] = np.concatenate([root_mat[..., :, 1], root_mat[..., :, 0]], axis=-1)
        out[..., self._sph_obs] = math_util.quat_to_norm_tangent(poses[..., self._sph_pose_cols])
        out[..., self._rev_obs] = poses[..., self._rev_pose_cols]
        ee = (body_pos[..., self.end_effectors, :] - root_pos[..., None, :]) @ np.swapaxes(to_heading, -1, -2)
        out[..., self._ee_start:] = ee.reshape(ee.shape[:2] + (-1,))
        return out

    def _vel_obs(self, vels, to_heading):
        out = np.zeros(vels.shape[:2] + (self.vel_size,))
        root_vel = vels[..., 0:6].reshape(vels.shape[:2] + (2, 3))
        if self.local_root:
            root_vel = root_vel @ np.swapaxes(to_heading, -1, -2)
        out[..., 0:6] = root_vel.reshape(vels.shape[:2] + (6,))
        out[..., self._sph_vel_obs] = vels[..., self._sph_dofs]
        out[..., self._rev_vel_obs] = vels[..., self._rev_dofs]
        return out
