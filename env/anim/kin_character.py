"""Forward kinematics of a character file, and the kinematic (reference) character.

Frames: the root joint's world frame is the pose's root position and rotation. Any other joint's
world frame is parent frame * translate(attach_pt) * local rotation, the local rotation being the
pose's quaternion (spherical), a rotation by the pose's angle about the joint's local z
(revolute) or the identity (fixed). A body's centre is its joint frame applied to the body's
attach_pt; its rotation is its joint's times the body's own rotation in the joint frame
(AttachTheta, R = Rz Ry Rx; the identity in humanoid3d, not for dog3d's neck and tails).

Velocities (layout in env/anim/character.py): a joint's world angular velocity is its parent's
plus its world rotation applied to its local angular velocity; linear velocities follow from
v_child = v_parent + w_parent x (p_child - p_parent). Sums along the chain to the root are one
product with the ancestor matrix (A[j, k] = 1 when k is j or one of its ancestors).

Every calc_* method takes a single pose (pose_size,) or a stack (..., pose_size).
"""
import numpy as np

from env.anim.character import JointType
from util import math_util

_Y_AXIS = np.array([0.0, 1.0, 0.0])


class KinCharacter:
    """Forward kinematics for `char_desc`, plus a pose/velocity driven by an optional Motion.

    The motion is placed in the world by an origin: the root position is origin_rot * clip root
    + origin_pos and the root rotation origin_rot * clip root rotation (DeepMimic's kinematic
    character); joint-local values are the clip's.
    """

    def __init__(self, char_desc, motion=None):
        self.desc = char_desc
        self.motion = motion
        joints = char_desc.joints
        self._parents = np.array([j.parent for j in joints])
        self._attach = np.array([j.attach_pt for j in joints])
        self._body_attach = np.array([b.attach_pt for b in char_desc.bodies])
        thetas = np.array([b.attach_theta for b in char_desc.bodies])
        self._body_rots = _euler_xyz_quats(thetas) if np.any(thetas) else None
        masses = np.array([b.mass for b in char_desc.bodies])
        self._mass_weights = masses / masses.sum()
        self._levels = _depth_levels(self._parents)
        self._ancestors = _ancestor_matrix(self._parents)

        spherical = [j.id for j in joints if j.type is JointType.SPHERICAL]
        revolute = [j.id for j in joints if j.type is JointType.REVOLUTE]
        self._sph_ids = np.array(spherical, dtype=int)
        sph_param = np.array([char_desc.param_offset[i] for i in spherical], dtype=int)
        sph_dof = np.array([char_desc.dof_offset[i] for i in spherical], dtype=int)
        self._sph_cols = sph_param[:, None] + np.arange(4)
        self._sph_dofs = sph_dof[:, None] + np.arange(3)
        self._rev_ids = np.array(revolute, dtype=int)
        self._rev_cols = np.array([char_desc.param_offset[i] for i in revolute], dtype=int)
        self._rev_dofs = np.array([char_desc.dof_offset[i] for i in revolute], dtype=int)

        self.pose = self.default_pose()
        self.vel = np.zeros(char_desc.dof_size)
        self.time = 0.0
        self.origin_pos = np.zeros(3)
        self.origin_rot = math_util.quat_identity()

    @property
    def origin_rot(self):
        return self._origin_rot

    @origin_rot.setter
    def origin_rot(self, q):
        """The origin's rotation, with its rotation and left-multiplication matrices kept beside
        it: calc_pose / calc_vel run at every decision and apply it as two small products."""
        self._origin_rot = np.array(q, dtype=float)
        self._origin_mat = math_util.quat_to_matrix(self._origin_rot)
        self._origin_left = math_util.quat_left_matrix(self._origin_rot)

    # ---- forward kinematics -------------------------------------------------------------

    def default_pose(self):
        """Root at the origin, every rotation the identity, every angle 0."""
        pose = np.zeros(self.desc.pose_size)
        pose[3] = 1.0
        pose[self._sph_cols[:, 0]] = 1.0
        return pose

    def calc_local_rots(self, pose):
        """(..., num_joints, 4): each joint's rotation relative to its parent (the root's is world)."""
        pose = np.asarray(pose, dtype=float)
        local = np.zeros(pose.shape[:-1] + (self.desc.num_joints, 4))
        local[..., 0] = 1.0
        local[..., 0, :] = pose[..., 3:7]
        local[..., self._sph_ids, :] = pose[..., self._sph_cols]
        half = 0.5 * pose[..., self._rev_cols]
        local[..., self._rev_ids, 0] = np.cos(half)
        local[..., self._rev_ids, 3] = np.sin(half)
        return local

    def calc_joint_world(self, pose):
        """(pos (..., num_joints, 3), rot (..., num_joints, 4)): joint frames in world."""
        pos, rot, _ = self._frames(pose)
        return pos, rot

    def calc_body_world(self, pose):
        """(pos (..., num_joints, 3) body centres, rot (..., num_joints, 4)) in world."""
        pos, rot, mat = self._frames(pose)
        if self._body_rots is not None:
            rot = math_util.quat_mul(rot, self._body_rots)
        return pos + self._body_offsets(mat), rot

    def calc_joint_vel_world(self, pose, vel):
        """(linear (..., num_joints, 3), angular (..., num_joints, 3)) world velocities of the
        joint origins."""
        pos, _, mat = self._frames(pose)
        return self._joint_vel(pos, mat, vel)

    def calc_body_vel_world(self, pose, vel):
        """(linear (..., num_joints, 3) of the body centres, angular (..., num_joints, 3))."""
        pos, _, mat = self._frames(pose)
        lin, ang = self._joint_vel(pos, mat, vel)
        return lin + math_util.cross(ang, self._body_offsets(mat)), ang

    def calc_com(self, pose, vel):
        """(centre of mass (..., 3), its velocity (..., 3)) from the body masses."""
        pos, _, mat = self._frames(pose)
        lin, ang = self._joint_vel(pos, mat, vel)
        body_offsets = self._body_offsets(mat)
        body_lin = lin + math_util.cross(ang, body_offsets)
        return self._mass_weights @ (pos + body_offsets), self._mass_weights @ body_lin

    def _frames(self, pose):
        """World joint positions, quaternions and rotation matrices."""
        pose = np.asarray(pose, dtype=float)
        # chain the rotations as left-multiplication matrices: L(a * b) = L(a) L(b)
        left = math_util.quat_left_matrix(self.calc_local_rots(pose))
        for child, parent in self._levels:
            left[..., child, :, :] = left[..., parent, :, :] @ left[..., child, :, :]
        rot = left[..., :, 0]
        mat = math_util.quat_to_matrix(rot)
        offsets = np.empty(pose.shape[:-1] + (self.desc.num_joints, 3))
        offsets[..., 0, :] = pose[..., 0:3]
        offsets[..., 1:, :] = (mat[..., self._parents[1:], :, :] @ self._attach[1:, :, None])[..., 0]
        return self._ancestors @ offsets, rot, mat

    def _body_offsets(self, mat):
        """Body centres relative to their joints, in world axes."""
        return (mat @ self._body_attach[:, :, None])[..., 0]

    def _joint_vel(self, pos, mat, vel):
        vel = np.asarray(vel, dtype=float)
        local_ang = np.zeros(pos.shape)
        local_ang[..., self._sph_ids, :] = vel[..., self._sph_dofs]
        local_ang[..., self._rev_ids, 2] = vel[..., self._rev_dofs]
        joint_ang = (mat @ local_ang[..., None])[..., 0]
        joint_ang[..., 0, :] = vel[..., 3:6]
        ang = self._ancestors @ joint_ang
        lin_terms = np.empty(pos.shape)
        lin_terms[..., 0, :] = vel[..., 0:3]
        lin_terms[..., 1:, :] = math_util.cross(ang[..., self._parents[1:], :],
                                                pos[..., 1:, :] - pos[..., self._parents[1:], :])
        return self._ancestors @ lin_terms, ang

    # ---- the kinematic character --------------------------------------------------------

    @property
    def root_pos(self):
        return self.pose[0:3]

    @property
    def root_rot(self):
        return self.pose[3:7]

    def set_pose(self, pose, vel=None):
        self.pose = np.array(pose, dtype=float)
        self.vel = np.zeros(self.desc.dof_size) if vel is None else np.array(vel, dtype=float)

    def calc_pose(self, time):
        """The motion's pose at `time`, placed by the origin."""
        pose = self.motion.calc_frame(time)
        pose[0:3] = self.origin_pos + self._origin_mat @ pose[0:3]
        pose[3:7] = self._origin_left @ pose[3:7]
        return pose

    def calc_poses(self, times):
        """calc_pose at several times at once, (len(times), pose_size)."""
        poses = self.motion.calc_frames(times)
        poses[:, 0:3] = self.origin_pos + poses[:, 0:3] @ self._origin_mat.T
        poses[:, 3:7] = poses[:, 3:7] @ self._origin_left.T
        return poses

    def calc_vel(self, time):
        """The motion's velocity at `time`, root velocities turned by the origin rotation."""
        vel = self.motion.calc_vel(time)
        vel[0:6] = (vel[0:6].reshape(2, 3) @ self._origin_mat.T).reshape(6)
        return vel

    def set_time(self, time):
        """Moves to `time` on the motion: pose and vel follow."""
        self.time = time
        self.pose = self.calc_pose(time)
        self.vel = self.calc_vel(time)

    def update(self, dt):
        self.set_time(self.time + dt)

    @property
    def phase(self):
        return self.motion.calc_phase(self.time)

    def calc_heading(self):
        return float(math_util.quat_heading(self.root_rot))

    def set_root_pos(self, pos):
        """Shifts the origin so that the root is at `pos`; later poses keep the shift."""
        delta = np.asarray(pos, dtype=float) - self.root_pos
        self.origin_pos = self.origin_pos + delta
        self.pose[0:3] += delta

    def set_heading(self, heading):
        """Turns the origin about the root's vertical axis so that the root's heading is `heading`."""
        turn = math_util.quat_from_axis_angle(_Y_AXIS, heading - self.calc_heading())
        root = self.root_pos.copy()
        self.origin_rot = math_util.quat_mul(turn, self.origin_rot)
        self.origin_pos = root + math_util.quat_rotate(turn, self.origin_pos - root)
        self.pose[3:7] = math_util.quat_mul(turn, self.pose[3:7])
        self.vel[0:6] = math_util.quat_rotate(turn, self.vel[0:6].reshape(2, 3)).reshape(6)


def _depth_levels(parents):
    """[(child ids, their parent ids)] per tree depth 1, 2, ... (parents precede children)."""
    depth = np.zeros(len(parents), dtype=int)
    for j in range(1, len(parents)):
        depth[j] = depth[parents[j]] + 1
    return [(np.flatnonzero(depth == d), parents[depth == d]) for d in range(1, depth.max() + 1)]


def _ancestor_matrix(parents):
    """A (n, n) with A[j, k] = 1 when joint k is j or an ancestor of j."""
    ancestors = np.zeros((len(parents), len(parents)))
    for j in range(len(parents)):
        k = j
        while k >= 0:
            ancestors[j, k] = 1.0
            k = parents[k]
    return ancestors


def _euler_xyz_quats(thetas):
    """(n, 4) quaternions [w,x,y,z] of R = Rz(t_z) Ry(t_y) Rx(t_x) for (n, 3) angles (DeepMimic's AttachTheta)."""
    def axis(k, angle):
        q = np.zeros((len(angle), 4))
        q[:, 0], q[:, 1 + k] = np.cos(0.5 * angle), np.sin(0.5 * angle)
        return q
    return math_util.quat_mul(axis(2, thetas[:, 2]), math_util.quat_mul(axis(1, thetas[:, 1]), axis(0, thetas[:, 0])))
