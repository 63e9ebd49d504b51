"""Build a character's pybullet multibody from its character file, as DeepMimic's cMultiBody does.

Layout (the same as the wheel's humanoid URDF, so SimCharacter's link ids = our joint/body ids):
a (nearly) massless base whose frame is the root joint frame, and one link per joint in id order; link 0
(the root body) is welded to the base by a fixed joint at the origin (DeepMimic's floating root).

Frames at world_scale s: link j's frame is joint j's frame (its parent joint's frame translated
by AttachX/Y/Z x s); its inertial and collision frame is the body centre, AttachX/Y/Z of the body
x s in the joint frame, rotated by the body's AttachTheta (Rb). pybullet stores a spherical joint's
state in the child inertial frame: SimCharacter converts q_bullet = Rb^-1 q Rb (and the angular
velocity by Rb^-1) on the joints whose body is rotated (dog3d's neck and tails; none in humanoid3d).
pybullet's parent frame position is relative to the parent's inertial frame, hence
joint attach - parent body attach. Revolute joints turn about the joint's z axis.

Shapes (lengths x s): sphere radius Param0 / 2; box half extents Param0-2 / 2; capsule radius
Param0 / 2 and cylinder length Param1 along the body's y axis (pybullet's capsule lies along z,
so it is turned +90 deg about x). Inertias: Bullet's, from shape_inertias (capsule as its bounding
box), set explicitly because pybullet would take a margin-inflated or AABB inertia otherwise.

Physics as DeepMimic's: friction 0.9 on every link, zero linear and angular damping,
self-collision on with each link excluded from its parent only (URDF_USE_SELF_COLLISION),
revolute limits [LimLow0, LimHigh0] as Bullet limit constraints, spherical joints unlimited.
"""
import numpy as np
import pybullet as p

from env.anim.character import JointType

LINK_FRICTION = 0.9

_PB_JOINT_TYPES = {JointType.ROOT: p.JOINT_FIXED, JointType.SPHERICAL: p.JOINT_SPHERICAL,
                   JointType.REVOLUTE: p.JOINT_REVOLUTE, JointType.FIXED: p.JOINT_FIXED}
_IDENTITY = [0.0, 0.0, 0.0, 1.0]
# pybullet makes a zero-mass base static, so the "massless" base weighs what the wheel's humanoid URDF
# gives its base link (its dynamics stay identical to that URDF's)
BASE_MASS = 1e-4
BASE_INERTIA = 1e-4 / 1.5e6
_CAPSULE_Y_ALONG_Z = [float(np.sin(np.pi / 4)), 0.0, 0.0, float(np.cos(np.pi / 4))]  # +90 deg about x


def shape_inertias(char_desc, scale):
    """(n, 3) principal inertias of the bodies at world_scale as Bullet computes them for DeepMimic's
    shapes (DeepMimic takes them from calculateLocalInertia): solid sphere 2/5 m r^2, box
    m/12 (b^2 + c^2) with full edges, capsule as its bounding box (2r, h + 2r, 2r) (btCapsuleShape's
    approximation). Masses do not scale."""
    inertias = np.empty((len(char_desc.bodies), 3))
    for i, body in enumerate(char_desc.bodies):
        size = body.size * scale
        if body.shape == "sphere":
            inertias[i] = 0.4 * body.mass * (0.5 * size[0]) ** 2
        else:
            extents = size if body.shape == "box" else np.array([size[0], size[0] + size[1], size[0]])
            sq = extents ** 2
            inertias[i] = body.mass / 12.0 * np.array([sq[1] + sq[2], sq[0] + sq[2], sq[0] + sq[1]])
    return inertias


def body_rotation(body):
    """The body's rotation in its joint frame as pybullet's x y z w (R = Rz Ry Rx from AttachTheta)."""
    return list(p.getQuaternionFromEuler(body.attach_theta.tolist()))


def _collision_shape(body, scale, client):
    """The body's shape placed at its centre and rotation in the link (joint) frame, as createMultiBody
    expects."""
    size = body.size * scale
    centre, rot = (body.attach_pt * scale).tolist(), body_rotation(body)
    if body.shape == "sphere":
        return p.createCollisionShape(p.GEOM_SPHERE, radius=0.5 * size[0], collisionFramePosition=centre,
                                      collisionFrameOrientation=rot, physicsClientId=client)
    if body.shape == "box":
        return p.createCollisionShape(p.GEOM_BOX, halfExtents=(0.5 * size).tolist(), collisionFramePosition=centre,
                                      collisionFrameOrientation=rot, physicsClientId=client)
    capsule_rot = p.multiplyTransforms([0, 0, 0], rot, [0, 0, 0], _CAPSULE_Y_ALONG_Z)[1]
    return p.createCollisionShape(p.GEOM_CAPSULE, radius=0.5 * size[0], height=float(size[1]),
                                  collisionFramePosition=centre, collisionFrameOrientation=capsule_rot,
                                  physicsClientId=client)


def build_multibody(char_desc, scale, client, self_collision=True):
    """Create the character's multibody in `client` at world_scale `scale`; returns its body id."""
    joints, bodies = char_desc.joints, char_desc.bodies
    flags = p.URDF_MAINTAIN_LINK_ORDER | (p.URDF_USE_SELF_COLLISION if self_collision else 0)
    body_id = p.createMultiBody(
        baseMass=BASE_MASS, baseCollisionShapeIndex=-1, baseVisualShapeIndex=-1, basePosition=[0, 0, 0],
        linkMasses=[b.mass for b in bodies],
        linkCollisionShapeIndices=[_collision_shape(b, scale, client) for b in bodies],
        linkVisualShapeIndices=[-1] * len(bodies),
        linkPositions=[(j.attach_pt * scale).tolist() for j in joints],  # the root's is 0 (parser)
        linkOrientations=[_IDENTITY] * len(joints),
        linkInertialFramePositions=[(b.attach_pt * scale).tolist() for b in bodies],
        linkInertialFrameOrientations=[body_rotation(b) for b in bodies],
        linkParentIndices=[j.parent + 1 for j in joints],  # 0 = the base, k + 1 = link k
        linkJointTypes=[_PB_JOINT_TYPES[j.type] for j in joints],
        linkJointAxis=[[0.0, 0.0, 1.0]] * len(joints),
        flags=flags, physicsClientId=client)
    p.changeDynamics(body_id, -1, linearDamping=0.0, angularDamping=0.0, physicsClientId=client)
    p.changeDynamics(body_id, -1, lateralFriction=LINK_FRICTION, localInertiaDiagonal=[BASE_INERTIA] * 3,
                     physicsClientId=client)
    for link, (joint, inertia) in enumerate(zip(joints, shape_inertias(char_desc, scale))):
        p.changeDynamics(body_id, link, lateralFriction=LINK_FRICTION, localInertiaDiagonal=inertia.tolist(),
                         physicsClientId=client)
        if joint.type is JointType.REVOLUTE:
            p.changeDynamics(body_id, link, jointLowerLimit=joint.limit_low, jointUpperLimit=joint.limit_high,
                             physicsClientId=client)
    return body_id
