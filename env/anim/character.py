"""The character file (data/characters/humanoid3d.txt): skeleton and bodies in DeepMimic's keys.

JSON: {"Skeleton": {"Joints": [...]}, "BodyDefs": [...]}, one entry per joint/body, listed in id
order, parents before children. Units are DeepMimic's (metres, kg, unscaled).

Joint keys: ID, Name, Type ("none" = the root, "spherical", "revolute", "fixed"), Parent (-1 for
the root), AttachX/Y/Z (joint origin in the parent joint's frame), LimLow0/LimHigh0 (revolute
only), TorqueLim, DiffWeight, IsEndEffector.
Body keys: ID, Name, Shape ("sphere", "capsule", "box"), Mass, AttachX/Y/Z (body centre in its
joint's frame), optional AttachThetaX/Y/Z (body rotation in its joint's frame, R = Rz Ry Rx), Param0-2 (sphere: diameter; capsule: diameter, length of the cylinder part along
the joint's y axis; box: full extents x, y, z), ColorR/G/B/A, EnableFallContact.

Pose layout (pose_size 43): per joint in id order, root 7 (position 3, quaternion w x y z),
spherical 4 (local quaternion), revolute 1 (angle about the joint's z), fixed 0.
Velocity layout (dof_size 34): root 6 (linear 3, angular 3, world frame), spherical 3 (angular
velocity in the joint's local frame), revolute 1, fixed 0.
"""
from dataclasses import dataclass
from enum import Enum

import numpy as np

from util import math_util
from util.paths import load_json


class CharacterError(ValueError):
    """A malformed character file; the message names the file and the key."""


class JointType(Enum):
    ROOT = "none"
    SPHERICAL = "spherical"
    REVOLUTE = "revolute"
    FIXED = "fixed"


PARAM_SIZES = {JointType.ROOT: 7, JointType.SPHERICAL: 4, JointType.REVOLUTE: 1, JointType.FIXED: 0}
DOF_SIZES = {JointType.ROOT: 6, JointType.SPHERICAL: 3, JointType.REVOLUTE: 1, JointType.FIXED: 0}
SHAPES = ("sphere", "capsule", "box")


@dataclass(frozen=True)
class Joint:
    id: int
    name: str
    type: JointType
    parent: int
    attach_pt: np.ndarray      # (3,) in the parent joint's frame
    limit_low: float | None    # revolute joints only
    limit_high: float | None
    torque_lim: float
    diff_weight: float
    is_end_effector: bool


@dataclass(frozen=True)
class Body:
    id: int
    name: str
    shape: str                 # 'sphere' | 'capsule' | 'box'
    mass: float
    size: np.ndarray           # (3,) Param0-2, see the module docstring
    attach_pt: np.ndarray      # (3,) body centre in its joint's frame
    attach_theta: np.ndarray   # (3,) body rotation in its joint's frame, Euler x y z (R = Rz Ry Rx); 0 if absent
    color: np.ndarray          # (4,) RGBA
    enable_fall_contact: bool


class _Reader:
    """Typed access to one JSON entry, errors naming the file, the entry and the key."""

    def __init__(self, path, where, entry):
        self.path, self.where, self.entry = path, where, entry
        if not isinstance(entry, dict):
            self.fail(None, "is not a JSON object")

    def fail(self, key, problem):
        what = f"{self.where} key '{key}'" if key else self.where
        raise CharacterError(f"{self.path}: {what} {problem}")

    def get(self, key, kind):
        if key not in self.entry:
            self.fail(key, "is missing")
        value = self.entry[key]
        is_number = isinstance(value, (int, float)) and not isinstance(value, bool)
        if kind is float and is_number:
            return float(value)
        if kind is int and is_number and value == int(value):
            return int(value)
        if kind not in (float, int) and isinstance(value, kind):
            return value
        return self.fail(key, f"has value {value!r}, expected {kind.__name__}")

    def flag(self, key):
        value = self.get(key, int)
        if value not in (0, 1):
            self.fail(key, f"has value {value!r}, expected 0 or 1")
        return bool(value)

    def vec(self, *keys):
        return np.array([self.get(k, float) for k in keys])

    def vec_or_zero(self, *keys):
        """Optional keys, 0 when absent (DeepMimic's default)."""
        return np.array([self.get(k, float) if k in self.entry else 0.0 for k in keys])


class CharacterDesc:
    def __init__(self, path, joints, bodies):
        self.path = path
        self.joints = joints
        self.bodies = bodies
        self.num_joints = len(joints)
        self.param_size = [PARAM_SIZES[j.type] for j in joints]
        self.dof_size_of = [DOF_SIZES[j.type] for j in joints]
        self.param_offset = [int(o) for o in np.cumsum([0] + self.param_size[:-1])]
        self.dof_offset = [int(o) for o in np.cumsum([0] + self.dof_size_of[:-1])]
        self.pose_size = sum(self.param_size)
        self.dof_size = sum(self.dof_size_of)

    @classmethod
    def load(cls, path):
        resolved, data = load_json(path, CharacterError)
        top = _Reader(resolved, "file", data)
        skeleton = _Reader(resolved, "Skeleton", top.get("Skeleton", dict))
        joint_entries = skeleton.get("Joints", list)
        body_entries = top.get("BodyDefs", list)
        joints = [_parse_joint(_Reader(resolved, f"joint {i}", e), i) for i, e in enumerate(joint_entries)]
        if not joints:
            top.fail("Joints", "is empty")
        if len(body_entries) != len(joints):
            top.fail("BodyDefs", f"has {len(body_entries)} bodies for {len(joints)} joints")
        bodies = [_parse_body(_Reader(resolved, f"body {i}", e), i) for i, e in enumerate(body_entries)]
        return cls(resolved, joints, bodies)

    def body_aabbs(self, body_pos, body_rot):
        """Per body (min, max) corners, (n, 3) each, of its collision shape at the body positions
        (n, 3) and rotations (n, 4) (sphere: diameter Param0; capsule: diameter Param0, cylinder
        length Param1 along the body's y; box: extents Param0-2)."""
        mats = math_util.quat_to_matrix(body_rot)
        half = np.empty((len(self.bodies), 3))
        for i, body in enumerate(self.bodies):
            size = body.size
            if body.shape == "sphere":
                half[i] = 0.5 * size[0]
            elif body.shape == "capsule":
                half[i] = 0.5 * size[0] + np.abs(mats[i][:, 1]) * 0.5 * size[1]
            else:
                half[i] = np.abs(mats[i]) @ (0.5 * size)
        return body_pos - half, body_pos + half


def _parse_joint(r, index):
    if r.get("ID", int) != index:
        r.fail("ID", f"is {r.entry['ID']}, expected {index} (joints in id order)")
    type_name = r.get("Type", str)
    try:
        joint_type = JointType(type_name)
    except ValueError:
        r.fail("Type", f"has unknown joint type {type_name!r} (none, spherical, revolute, fixed)")
    parent = r.get("Parent", int)
    if (joint_type is JointType.ROOT) != (index == 0):
        r.fail("Type", "must be 'none' for joint 0 (the root) and only there")
    if index == 0 and parent != -1:
        r.fail("Parent", f"is {parent}, expected -1 for the root")
    if index > 0 and not 0 <= parent < index:
        r.fail("Parent", f"is {parent}, expected an earlier joint id in [0, {index - 1}]")
    low = high = None
    if joint_type is JointType.REVOLUTE:
        low, high = r.get("LimLow0", float), r.get("LimHigh0", float)
        if low > high:
            r.fail("LimLow0", f"{low} is above LimHigh0 {high}")
    # DeepMimic zeroes the root's attach point after loading (dog3d's root AttachZ 50 has no effect)
    attach_pt = np.zeros(3) if index == 0 else r.vec("AttachX", "AttachY", "AttachZ")
    return Joint(id=index, name=r.get("Name", str), type=joint_type, parent=parent,
                 attach_pt=attach_pt, limit_low=low, limit_high=high,
                 torque_lim=r.get("TorqueLim", float), diff_weight=r.get("DiffWeight", float),
                 is_end_effector=r.flag("IsEndEffector"))


def _parse_body(r, index):
    if r.get("ID", int) != index:
        r.fail("ID", f"is {r.entry['ID']}, expected {index} (bodies in id order)")
    shape = r.get("Shape", str)
    if shape not in SHAPES:
        r.fail("Shape", f"has unknown shape {shape!r} ({', '.join(SHAPES)})")
    mass = r.get("Mass", float)
    if mass <= 0:
        r.fail("Mass", f"is {mass}, expected > 0")
    return Body(id=index, name=r.get("Name", str), shape=shape, mass=mass,
                size=r.vec("Param0", "Param1", "Param2"), attach_pt=r.vec("AttachX", "AttachY", "AttachZ"),
                attach_theta=r.vec_or_zero("AttachThetaX", "AttachThetaY", "AttachThetaZ"),
                color=r.vec("ColorR", "ColorG", "ColorB", "ColorA"),
                enable_fall_contact=r.flag("EnableFallContact"))
