"""The simulated character driven in our layouts.

The multibody is built from the character file (env/sim/character_builder.py). from_urdf=True loads
the pybullet wheel's humanoid/humanoid.urdf instead (humanoid3d only): DeepMimic's humanoid3d at 4x
the character file's size, loaded with globalScaling = world_scale / 4 and checked against the
character file at load (joint names, types, parents, offsets, masses, limits; a mismatch is a
one-line error), with the Bullet shape inertias set as the builder sets them. In both, link j is
our joint/body j; link 0 (root) hangs from a massless base by a fixed joint, so the base frame is
the root joint frame.

Physics settings as DeepMimic's: friction 0.9 on every link (the ground has 0.9 too; Bullet
multiplies the two), no linear or angular damping, self-collision on with each body excluded from
its parent only (btMultiBody's default with DeepMimic's disable_parent_collision; pybullet's
URDF_USE_SELF_COLLISION), revolute limits enforced by Bullet limit constraints, spherical
joints unlimited. pybullet's default joint motors are switched off so that only our commands act.
self_collision=False turns self-collision off: the pybullet wheel's pretrained policies were
trained in the older port before it enabled self-collision (bullet3 PR #2343 added the policies,
PR #2517 later enabled self-collision), so their gaits let the legs touch.

Units: poses, velocities and body states here are in character units (physics / world_scale);
rotations and angular velocities do not scale. Layouts: env/anim/character.py (pose 43, vel 34:
root linear and world angular velocity, joint angular velocity in the joint's local frame, which
is also pybullet's spherical joint velocity frame).
"""
import os
import sys
from contextlib import contextmanager
from dataclasses import dataclass
from itertools import chain

import numpy as np
import pybullet as p
import pybullet_data

from env.anim.character import JointType
from env.sim.character_builder import LINK_FRICTION, build_multibody, shape_inertias
from util import math_util

URDF_PATH = "humanoid/humanoid.urdf"
URDF_SCALE = 4.0

_PB_JOINT_TYPES = {JointType.ROOT: p.JOINT_FIXED, JointType.SPHERICAL: p.JOINT_SPHERICAL,
                   JointType.REVOLUTE: p.JOINT_REVOLUTE, JointType.FIXED: p.JOINT_FIXED}


@dataclass
class BodyStates:
    """World states of the 15 bodies (character units): centres, rotations [w,x,y,z], linear and
    angular velocities, plus each joint's world position (the link frame origin)."""
    pos: np.ndarray
    rot: np.ndarray
    vel: np.ndarray
    ang_vel: np.ndarray
    joint_pos: np.ndarray


# getLinkStates fields per link: 0 centre, 1 rotation xyzw, 4 link frame origin, 6 velocity,
# 7 angular velocity
_BODY_FIELDS = lambda st: st[0] + st[1] + st[4] + st[6] + st[7]  # noqa: E731
_JOINT_POS_VEL_FIELDS = lambda st: st[4] + st[6]  # noqa: E731


class SimCharacter:
    def __init__(self, world, char_desc, self_collision=True, from_urdf=False):
        """The multibody is built from the character file (character_builder); from_urdf=True loads
        the wheel's humanoid URDF instead (humanoid3d only, checked against the file)."""
        self.world = world
        self.desc = char_desc
        self.client = world.client
        self.scale = world.scale
        if from_urdf:
            self.body = _load_urdf(char_desc, self.scale, self.client, self_collision)
        else:
            self.body = build_multibody(char_desc, self.scale, self.client, self_collision)

        joints = char_desc.joints
        self.num_bodies = char_desc.num_joints
        self.link_ids = list(range(self.num_bodies))
        self.sph_ids = [j.id for j in joints if j.type is JointType.SPHERICAL]
        self.rev_ids = [j.id for j in joints if j.type is JointType.REVOLUTE]
        self.actuated_ids = [j.id for j in joints if j.type in (JointType.SPHERICAL, JointType.REVOLUTE)]
        self.masses = np.array([b.mass for b in char_desc.bodies])
        self.total_mass = self.masses.sum()
        self._mass_fractions = self.masses / self.total_mass
        self._fall_ids = frozenset(b.id for b in char_desc.bodies if b.enable_fall_contact)
        self._build_pose_maps()
        # spherical joints whose child body is rotated in the joint frame (Rb != I): pybullet keeps their
        # state in the child inertial frame, q_bullet = Rb^-1 q Rb, w_bullet = Rb^-1 w (see joint_quats_to_bullet)
        self._sph_body_rots = {j: math_util.quat_from_pybullet(p.getQuaternionFromEuler(
            char_desc.bodies[j].attach_theta.tolist())) for j in self.sph_ids if np.any(char_desc.bodies[j].attach_theta)}
        # per get_body_states column: 1 / scale on the centre, joint origin and linear velocity
        self._body_state_scale = np.ones(16)
        self._body_state_scale[[0, 1, 2, 7, 8, 9, 10, 11, 12]] = 1.0 / self.scale
        self.disable_default_motors()

    def _build_pose_maps(self):
        """Where pybullet's joint states go in our layouts. Flattened joint positions of the actuated
        joints (spherical x y z w, revolute angle) map to pose columns; flattened joint velocities are
        exactly vel[6:] (same joint order and sizes)."""
        d = self.desc
        self._joint_pose_order = [[d.param_offset[j] + k for k in (1, 2, 3, 0)] if d.param_size[j] == 4
                                  else [d.param_offset[j]] for j in self.actuated_ids]
        self._joint_pose_cols = np.concatenate(self._joint_pose_order)
        ends = 6 + np.cumsum([d.dof_size_of[j] for j in self.actuated_ids])
        self._joint_vel_slices = [(int(e - d.dof_size_of[j]), int(e)) for e, j in zip(ends, self.actuated_ids)]
        # pose column c takes entry _pose_gather[c] of [root pos 3, root quat wxyz 4, joint positions]
        self._pose_gather = np.empty(d.pose_size, dtype=np.intp)
        self._pose_gather[0:7] = np.arange(7)
        self._pose_gather[self._joint_pose_cols] = 7 + np.arange(len(self._joint_pose_cols))
        if (len(self._joint_pose_cols) != d.pose_size - 7
                or sum(d.dof_size_of[j] for j in self.actuated_ids) != d.dof_size - 6):
            raise ValueError(f"{d.path}: joint positions or velocities do not follow the actuated joints")

    def disable_default_motors(self):
        """pybullet gives every joint a velocity motor at load; zero force switches it off."""
        for j in self.sph_ids:
            p.setJointMotorControlMultiDof(self.body, j, p.POSITION_CONTROL, targetPosition=[0, 0, 0, 1],
                                           positionGain=0, velocityGain=1, force=[0, 0, 0],
                                           physicsClientId=self.client)
        for j in self.rev_ids:
            p.setJointMotorControl2(self.body, j, p.VELOCITY_CONTROL, force=0, physicsClientId=self.client)

    # ---- fall contacts -------------------------------------------------------------------

    def check_body_ids(self, key, body_ids):
        """A ValueError naming the argument --key when an id is not one of this character's bodies."""
        for b in body_ids:
            if not 0 <= b < self.num_bodies:
                raise ValueError(f"--{key}: body id {b} is not in [0, {self.num_bodies - 1}]")

    def set_fall_contact_bodies(self, body_ids):
        """DeepMimic's fall_contact_bodies: a non-empty list replaces the character file's flags."""
        self.check_body_ids("fall_contact_bodies", body_ids)
        if body_ids:
            self._fall_ids = frozenset(int(b) for b in body_ids)

    @property
    def fall_contact_bodies(self):
        return sorted(self._fall_ids)

    def has_fall_contact(self, ground):
        """True when a fall-contact body touches `ground` (contacts of the last physics sub-step;
        this runs after every env update)."""
        fall = self._fall_ids
        for contact in p.getContactPoints(self.body, ground, physicsClientId=self.client):
            if contact[3] in fall:
                return True
        return False

    # ---- pose and velocity in the character layouts ---------------------------------------

    def set_state(self, pose, vel):
        """Teleport to `pose` (43) moving at `vel` (34), character units."""
        s = self.scale
        pl, vl = np.asarray(pose, dtype=float).tolist(), np.asarray(vel, dtype=float).tolist()
        p.resetBasePositionAndOrientation(self.body, [pl[0] * s, pl[1] * s, pl[2] * s], [pl[4], pl[5], pl[6], pl[3]],
                                          physicsClientId=self.client)
        p.resetBaseVelocity(self.body, [vl[0] * s, vl[1] * s, vl[2] * s], vl[3:6], physicsClientId=self.client)
        values = [[pl[i] for i in cols] for cols in self._joint_pose_order]
        velocities = [vl[a:b] for a, b in self._joint_vel_slices]
        for k, j in enumerate(self.actuated_ids):
            if j in self._sph_body_rots:
                rb = self._sph_body_rots[j]
                q = math_util.quat_from_pybullet(values[k])
                values[k] = math_util.quat_to_pybullet(math_util.quat_mul(math_util.quat_conj(rb),
                                                                          math_util.quat_mul(q, rb))).tolist()
                velocities[k] = math_util.quat_rotate(math_util.quat_conj(rb), velocities[k]).tolist()
        p.resetJointStatesMultiDof(self.body, self.actuated_ids, targetValues=values, targetVelocities=velocities,
                                   physicsClientId=self.client)

    def get_state(self):
        """(pose (43), vel (34)) in character units; joint quaternions with w >= 0 as DeepMimic's.
        Built as flat Python lists in pybullet's order, then one gather into the pose layout."""
        client, s = self.client, self.scale
        pos, rot = p.getBasePositionAndOrientation(self.body, physicsClientId=client)
        lin, ang = p.getBaseVelocity(self.body, physicsClientId=client)
        states = p.getJointStatesMultiDof(self.body, self.actuated_ids, physicsClientId=client)
        flat_pose = [*pos, rot[3], rot[0], rot[1], rot[2]]
        flat_vel = [*lin, *ang]
        for j, (q, qd, _, _) in zip(self.actuated_ids, states):
            if j in self._sph_body_rots:
                rb = self._sph_body_rots[j]
                local = math_util.quat_mul(rb, math_util.quat_mul(math_util.quat_from_pybullet(q), math_util.quat_conj(rb)))
                q, qd = math_util.quat_to_pybullet(local).tolist(), math_util.quat_rotate(rb, qd).tolist()
            flat_pose.extend((-q[0], -q[1], -q[2], -q[3]) if len(q) == 4 and q[3] < 0.0 else q)
            flat_vel.extend(qd)
        pose = np.array(flat_pose)[self._pose_gather]
        pose[0:3] /= s
        vel = np.array(flat_vel)
        vel[0:3] /= s
        return pose, vel

    def joint_quats_to_bullet(self, sph_quats):
        """Spherical joint rotations [w,x,y,z] (rows in sph_ids order) as pybullet stores them:
        Rb^-1 q Rb for the joints whose body is rotated, unchanged otherwise."""
        if not self._sph_body_rots:
            return sph_quats
        out = np.array(sph_quats, dtype=float)
        for row, j in enumerate(self.sph_ids):
            if j in self._sph_body_rots:
                rb = self._sph_body_rots[j]
                out[row] = math_util.quat_mul(math_util.quat_conj(rb), math_util.quat_mul(out[row], rb))
        return out

    def get_root_pos(self):
        pos, _ = p.getBasePositionAndOrientation(self.body, physicsClientId=self.client)
        return np.asarray(pos) / self.scale

    def get_generalized_state(self):
        """pybullet's padded 43-dim (q, qdot) as calculateMassMatrix(flags=1) expects them, physics units:
        q = base pos 3, base quat xyzw 4, then per joint (spherical xyzw 4, revolute 1);
        qdot = base linear 3, base angular 3 (world), pad, then per joint (spherical 3 + pad, revolute 1)."""
        pos, rot = p.getBasePositionAndOrientation(self.body, physicsClientId=self.client)
        lin, ang = p.getBaseVelocity(self.body, physicsClientId=self.client)
        q = list(pos) + list(rot)
        qd = list(lin) + list(ang) + [0.0]
        for jq, jqd, _, _ in p.getJointStatesMultiDof(self.body, self.actuated_ids, physicsClientId=self.client):
            q.extend(jq)
            qd.extend(jqd)
            if len(jqd) == 3:
                qd.append(0.0)
        return q, np.array(qd)

    def _link_rows(self, pick, width):
        """(num_bodies, width) array of the getLinkStates fields `pick` concatenates per link
        (physics units), from one C call with velocities and fresh forward kinematics."""
        states = p.getLinkStates(self.body, self.link_ids, computeLinkVelocity=1, computeForwardKinematics=1,
                                 physicsClientId=self.client)
        return np.fromiter(chain.from_iterable(pick(st) for st in states), float,
                           width * self.num_bodies).reshape(self.num_bodies, width)

    def get_body_states(self):
        # per link: centre (3), rotation xyzw (4), link frame origin (3), velocity (3), angular velocity (3)
        flat = self._link_rows(_BODY_FIELDS, 16)
        flat *= self._body_state_scale  # lengths to character units, in one product
        return BodyStates(pos=flat[:, 0:3], rot=flat[:, [6, 3, 4, 5]], joint_pos=flat[:, 7:10], vel=flat[:, 10:13],
                          ang_vel=flat[:, 13:16])

    def get_joint_pos_com_vel(self):
        """(joint world positions (n, 3), centre-of-mass velocity (3,)), character units: the part
        of get_body_states the imitation reward reads from the reference, read in one pass."""
        flat = self._link_rows(_JOINT_POS_VEL_FIELDS, 6)
        flat *= 1.0 / self.scale
        return flat[:, 0:3], self._mass_fractions @ flat[:, 3:6]

    def get_body_centre(self, body_id):
        return np.asarray(p.getLinkState(self.body, body_id, physicsClientId=self.client)[0]) / self.scale

    def calc_aabb(self):
        """(min (3,), max (3,)) of the whole character from its body shapes."""
        bodies = self.get_body_states()
        mins, maxs = self.desc.body_aabbs(bodies.pos, bodies.rot)
        return mins.min(axis=0), maxs.max(axis=0)

    def calc_com_vel(self, body_states):
        return self.masses @ body_states.vel / self.total_mass

    def apply_force(self, body_id, force, world_pos):
        """External force (character units: N at scale 1, scaled by world_scale) at a world point,
        held over the next World.step() call, all its num_sim_substeps sub-steps (pybullet keeps
        external forces until the end of stepSimulation), then dropped."""
        p.applyExternalForce(self.body, body_id, np.asarray(force) * self.scale, np.asarray(world_pos) * self.scale,
                             p.WORLD_FRAME, physicsClientId=self.client)


def _load_urdf(char_desc, scale, client, self_collision):
    """The wheel's humanoid URDF at world_scale, checked against the character file, with DeepMimic's
    friction, damping and Bullet shape inertias (the URDF's inertia tags are placeholders)."""
    path = f"{pybullet_data.getDataPath()}/{URDF_PATH}"
    flags = p.URDF_MAINTAIN_LINK_ORDER | (p.URDF_USE_SELF_COLLISION if self_collision else 0)
    with _silent_stdout():  # the URDF importer prints a warning per spherical joint
        body = p.loadURDF(path, [0, 0, 0], globalScaling=scale / URDF_SCALE, flags=flags, physicsClientId=client)
    _check_urdf(char_desc, body, client, scale, path)
    # damping belongs to the whole multibody (base index); pybullet ignores a link command
    # that mixes damping with friction, so friction goes per link on its own
    p.changeDynamics(body, -1, linearDamping=0.0, angularDamping=0.0, physicsClientId=client)
    for link in range(-1, char_desc.num_joints):
        p.changeDynamics(body, link, lateralFriction=LINK_FRICTION, physicsClientId=client)
    for link, inertia in enumerate(shape_inertias(char_desc, scale)):
        p.changeDynamics(body, link, localInertiaDiagonal=inertia.tolist(), physicsClientId=client)
    return body


@contextmanager
def _silent_stdout():
    """Discard what C code writes to stdout meanwhile (file descriptor 1)."""
    sys.stdout.flush()
    saved = os.dup(1)
    with open(os.devnull, "w") as devnull:
        os.dup2(devnull.fileno(), 1)
    try:
        yield
    finally:
        os.dup2(saved, 1)
        os.close(saved)


def _check_urdf(desc, body, client, s, path):
    """The URDF must be the character file's skeleton at URDF_SCALE (so at world_scale here)."""
    num = p.getNumJoints(body, physicsClientId=client)
    if num != desc.num_joints:
        raise ValueError(f"{path}: has {num} links, character file {desc.path} has {desc.num_joints} joints")
    for joint, b in zip(desc.joints, desc.bodies):
        info = p.getJointInfo(body, joint.id, physicsClientId=client)
        dyn = p.getDynamicsInfo(body, joint.id, physicsClientId=client)
        name = info[1].decode()
        parent_body = desc.bodies[joint.parent].attach_pt if joint.parent >= 0 else np.zeros(3)
        checks = [("name", name, joint.name),
                  ("type", info[2], _PB_JOINT_TYPES[joint.type]),
                  ("parent", info[16], joint.parent),
                  ("mass", dyn[0], b.mass),
                  ("body centre", np.asarray(dyn[3]) / s, b.attach_pt),
                  ("joint offset", np.asarray(info[14]) / s, joint.attach_pt - parent_body)]
        if joint.type is JointType.REVOLUTE:
            checks += [("lower limit", info[8], joint.limit_low), ("upper limit", info[9], joint.limit_high),
                       ("axis", info[13], (0.0, 0.0, 1.0))]
        for key, got, want in checks:
            same = got == want if isinstance(want, str) else np.allclose(got, want, atol=1e-5)
            if not same:
                raise ValueError(f"{path}: link {joint.id} ({name}) {key} is {got}, character file "
                                 f"{desc.path} says {want}")
