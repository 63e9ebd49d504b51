"""BVH motion capture files <-> DeepMimic clips for a character file (humanoid3d).

BVH: HIERARCHY (ROOT/JOINT name, OFFSET x y z in the parent's frame, CHANNELS n names..., End
Site) then MOTION (Frames: N, Frame Time: dt, one line of channel values per frame). Rotation
channels are degrees; a joint's local rotation is the product of its rotation channels in the
order listed (ZYX: R = Rz Ry Rx, the last channel applied first). The rest pose of a BVH
skeleton has every local rotation identity.

Retargeting to the character (whose joint frames are also identity at rest): a mapped character
joint j gets the world rotation G_j = B_j A_j, where B_j is the world rotation of its BVH joint
(the product along the BVH chain, unmapped joints in between included) and A_j is the shortest
rotation taking j's rest bone direction in the character (towards its first mapped child joint)
onto the BVH's rest bone direction between the same joints (identity when they agree or j has
no mapped child). Local rotations are then G_parent^-1 G_j; a revolute joint keeps the twist
about its z axis, 2 atan2(q_z, q_w). Several BVH joints mapped to one character joint: the
deepest in the hierarchy wins (CMU Spine, Spine1 -> chest uses Spine1). A "prefix:" on BVH joint
names (Mixamo's mixamorig:) is ignored for the mapping. Units: values times `scale` are metres.
A z-up file is turned y-up by the rotation (x, y, z) -> (x, z, -y).

Without a given map, the shipped map (JOINT_MAPS) that reaches the most character joints is used,
ties going to the one that recognises more of the file's joints (select_joint_map). Without a
given scale, it is the character's leg length over the file's (hip-knee and knee-ankle, from the
rest offsets along the chain, so any rest pose works: infer_scale). ground_poses then sets the
lowest point of the character's collision shapes over the clip on the ground; resample_poses
changes the frame time (linear root position and angles, slerp of the quaternions).

Parser: our own (read_bvh, some 90 lines: token-based, so any line layout; every error one line
with the file and line number, fuzzed in tests/test_fuzz_inputs.py). Checked on PyPI in
2026-11: bvhio 1.5.4 (maintained, pure Python) pins pyglm==2.8.2 and spatial-transform==1.3.3
exactly, which would fix those versions for every user, and reads line by line ("First line must
be only HIERARCHY") raising SyntaxError without the file; bvh 0.3 is unmaintained (three
releases, no validation of frame sizes); pymotion on PyPI is an empty placeholder (0.0.0).
"""
import json
import math
from dataclasses import dataclass

import numpy as np

from env.anim.character import JointType
from util import math_util
from util.paths import resolve_data_path

DEFAULT_JOINT_MAP = "data/bvh/default_joint_map.json"
# The shipped maps select_joint_map chooses from: Mixamo-style names, and the CMU database's
# (the cgspeed BVH conversion's Hips/LowerBack/LeftUpLeg..., the DAZ-friendly hip/abdomen/lThigh...).
JOINT_MAPS = (DEFAULT_JOINT_MAP, "data/bvh/cmu_joint_map.json")
LEG_BONES = (("right_hip", "right_knee"), ("right_knee", "right_ankle"),
             ("left_hip", "left_knee"), ("left_knee", "left_ankle"))
_AXES = {"X": (1.0, 0.0, 0.0), "Y": (0.0, 1.0, 0.0), "Z": (0.0, 0.0, 1.0)}
_Z_UP_TO_Y_UP = math_util.quat_from_axis_angle([1.0, 0.0, 0.0], -0.5 * math.pi)


class BvhError(ValueError):
    """A malformed BVH file or mapping; the message names the file (and the line)."""


@dataclass
class BvhJoint:
    name: str
    parent: int
    offset: np.ndarray
    channels: list
    first_channel: int


@dataclass
class Bvh:
    joints: list
    frame_time: float
    frames: np.ndarray   # (N, total channels)


def _tokens(path):
    try:
        text = open(path).read()
    except OSError:
        raise FileNotFoundError(f"{path}: BVH file not found") from None
    for line_no, line in enumerate(text.splitlines(), 1):
        for tok in line.split():
            yield line_no, tok


def read_bvh(path):
    toks = list(_tokens(path))
    pos = 0

    def fail(problem, at=None):
        line = toks[min(pos if at is None else at, len(toks) - 1)][0] if toks else 1
        raise BvhError(f"{path}: line {line}: {problem}")

    def take(expected=None):
        nonlocal pos
        if pos >= len(toks):
            fail("unexpected end of file" + (f", expected {expected}" if expected else ""))
        tok = toks[pos][1]
        if expected and tok != expected:
            fail(f"expected {expected}, found {tok!r}")
        pos += 1
        return tok

    def number(what):
        tok = take()
        try:
            return float(tok)
        except ValueError:
            fail(f"{what} {tok!r} is not a number", pos - 1)

    joints, num_channels = [], 0

    def parse_joint(parent):
        nonlocal num_channels
        name = take()
        take("{")
        take("OFFSET")
        offset = np.array([number("OFFSET value") for _ in range(3)])
        take("CHANNELS")
        count = number("channel count")
        if count != int(count) or count < 0:
            fail(f"bad channel count {count}", pos - 1)
        channels = []
        for _ in range(int(count)):
            ch = take()
            if ch[1:] not in ("position", "rotation") or ch[0] not in _AXES:
                fail(f"unknown channel {ch!r}", pos - 1)
            channels.append(ch)
        index = len(joints)
        joints.append(BvhJoint(name, parent, offset, channels, num_channels))
        num_channels += len(channels)
        while True:
            tok = take()
            if tok == "}":
                return
            if tok == "JOINT":
                parse_joint(index)
            elif tok == "End":
                take("Site"), take("{"), take("OFFSET")
                [number("OFFSET value") for _ in range(3)]
                take("}")
            else:
                fail(f"expected JOINT, End Site or }}, found {tok!r}", pos - 1)

    take("HIERARCHY")
    take("ROOT")
    parse_joint(-1)
    take("MOTION")
    take("Frames:")
    num_frames = number("frame count")
    take("Frame"), take("Time:")
    frame_time = number("frame time")
    if frame_time <= 0 or num_frames != int(num_frames) or num_frames < 1:
        fail("frame count must be a positive integer and frame time > 0", pos - 1)
    values = []
    for i in range(int(num_frames) * num_channels):
        values.append(number(f"frame {i // max(num_channels, 1)} value"))
    if pos != len(toks):
        fail(f"more values than {int(num_frames)} frames of {num_channels} channels")
    frames = np.array(values).reshape(int(num_frames), num_channels)
    return Bvh(joints, frame_time, frames)


def euler_to_quat(channels, degrees):
    """Local rotation of rotation channels (names like 'Zrotation') in the listed order."""
    q = math_util.quat_identity()
    for ch, deg in zip(channels, degrees):
        q = math_util.quat_mul(q, math_util.quat_from_axis_angle(_AXES[ch[0]], math.radians(deg)))
    return q


def quat_to_euler_zyx(q):
    """(z, y, x) degrees with q = Rz Ry Rx."""
    m = math_util.quat_to_matrix(math_util.quat_normalize(q))
    y = math.asin(max(-1.0, min(1.0, -m[2, 0])))
    z = math.atan2(m[1, 0], m[0, 0])
    x = math.atan2(m[2, 1], m[2, 2])
    return [math.degrees(z), math.degrees(y), math.degrees(x)]


def _shortest_rotation(a, b):
    """Unit quaternion turning direction a onto direction b (identity if either is zero)."""
    na, nb = np.linalg.norm(a), np.linalg.norm(b)
    if na < 1e-12 or nb < 1e-12:
        return math_util.quat_identity()
    a, b = a / na, b / nb
    w = 1.0 + float(a @ b)
    if w < 1e-9:   # opposite: half turn about any axis normal to a
        axis = np.cross(a, [1.0, 0.0, 0.0] if abs(a[0]) < 0.9 else [0.0, 1.0, 0.0])
        return math_util.quat_from_axis_angle(axis, math.pi)
    return math_util.quat_normalize(np.concatenate([[w], np.cross(a, b)]))


def load_joint_map(path):
    """{BVH joint name: character joint name} from a JSON file."""
    try:
        data = json.loads(open(path).read())
    except OSError:
        raise FileNotFoundError(f"{path}: joint map not found") from None
    except json.JSONDecodeError as err:
        raise BvhError(f"{path}: not valid JSON ({err})") from None
    if not isinstance(data, dict) or not all(isinstance(v, str) for v in data.values()):
        raise BvhError(f"{path}: expected an object of BVH joint name -> character joint name")
    return data


def _map_name(joint_map, name):
    return joint_map.get(name.split(":")[-1])


def mapped_joints(bvh, char_desc, joint_map, path="<bvh>"):
    """{character joint id: index of its BVH joint} (several BVH joints to one: the deepest)."""
    char_ids = {j.name: j.id for j in char_desc.joints}
    bad = sorted(set(joint_map.values()) - set(char_ids))
    if bad:
        raise BvhError(f"{path}: joint map names unknown character joint(s) {bad}")
    bvh_of = {}
    for index, joint in enumerate(bvh.joints):
        target = _map_name(joint_map, joint.name)
        if target is not None:
            bvh_of[char_ids[target]] = index   # deepest (listed last) wins
    return bvh_of


def select_joint_map(bvh, char_desc, candidates=JOINT_MAPS):
    """(path, map) of the candidate reaching the most character joints, then recognising the most
    BVH joints (the first on a tie)."""
    def score(joint_map):
        names = sum(_map_name(joint_map, j.name) is not None for j in bvh.joints)
        return len(mapped_joints(bvh, char_desc, joint_map)), names

    loaded = [(path, load_joint_map(str(resolve_data_path(path)))) for path in candidates]
    return max(loaded, key=lambda item: score(item[1]))


def unmapped_names(bvh, char_desc, joint_map):
    """(BVH joints no character joint takes, movable character joints with no BVH joint)."""
    bvh_of = mapped_joints(bvh, char_desc, joint_map)
    used = set(bvh_of.values())
    ignored = [j.name for i, j in enumerate(bvh.joints) if i not in used]
    missing = [j.name for j in movable_joints(char_desc) if j.id not in bvh_of]
    return ignored, missing


def movable_joints(char_desc):
    """The character's joints that are not fixed (the ones a pose moves)."""
    return [j for j in char_desc.joints if j.type is not JointType.FIXED]


def _chain_length(bvh, ancestor, joint):
    """Sum of the rest offsets from BVH joint `ancestor` down to `joint` (None if not below it)."""
    length = 0.0
    while joint != ancestor:
        if joint < 0:
            return None
        length += float(np.linalg.norm(bvh.joints[joint].offset))
        joint = bvh.joints[joint].parent
    return length


def infer_scale(bvh, char_desc, joint_map, path="<bvh>"):
    """(scale, character leg length, BVH leg length): BVH units to metres so that the file's legs
    (LEG_BONES found in both) are as long as the character's."""
    bvh_of = mapped_joints(bvh, char_desc, joint_map, path)
    ids = {j.name: j.id for j in char_desc.joints}
    char_len = bvh_len = 0.0
    for upper, lower in LEG_BONES:
        a, b = ids.get(upper), ids.get(lower)
        if a in bvh_of and b in bvh_of and char_desc.joints[b].parent == a:
            length = _chain_length(bvh, bvh_of[a], bvh_of[b])
            if length:
                char_len += float(np.linalg.norm(char_desc.joints[b].attach_pt))
                bvh_len += length
    if bvh_len == 0.0:
        raise BvhError(f"{path}: cannot infer the scale (no mapped hip-knee-ankle bones): give --scale")
    return char_len / bvh_len, char_len, bvh_len


def ground_poses(poses, char_desc, ground_height=0.0):
    """(poses with the root moved up or down, the shift): the lowest point of the character's
    collision shapes over the whole clip on the ground."""
    from env.anim.kin_character import KinCharacter
    pos, rot = KinCharacter(char_desc).calc_body_world(poses)
    lowest = min(char_desc.body_aabbs(p, r)[0][:, 1].min() for p, r in zip(pos, rot))
    shift = ground_height - lowest
    grounded = np.array(poses, dtype=float)
    grounded[:, 1] += shift
    return grounded, shift


def resample_poses(poses, frame_time, new_frame_time, char_desc):
    """The clip at new_frame_time per frame over the same duration (Motion.calc_frame: linear root
    position and angles, slerp of the quaternions); the last frame is the last whole step."""
    from env.anim.motion import Motion
    motion = Motion(poses, np.full(len(poses), frame_time), "none", char_desc)
    count = int(math.floor(motion.duration / new_frame_time + 1e-9)) + 1
    return np.array([motion.calc_frame(k * new_frame_time) for k in range(count)])


def bvh_to_frames(bvh, char_desc, joint_map, scale=1.0, up="y", path="<bvh>"):
    """(N, pose_size) character poses from a parsed BVH (see the module docstring)."""
    if up not in ("y", "z"):
        raise BvhError(f"{path}: up axis {up!r} is not y or z")
    bvh_of = mapped_joints(bvh, char_desc, joint_map, path)
    if 0 not in bvh_of:
        raise BvhError(f"{path}: no BVH joint maps to the character's root {char_desc.joints[0].name!r}")
    conv = _Z_UP_TO_Y_UP if up == "z" else math_util.quat_identity()

    def to_y_up(v):
        return math_util.quat_rotate(conv, np.asarray(v, dtype=float) * scale)

    rest_pos = []
    for joint in bvh.joints:
        base = rest_pos[joint.parent] if joint.parent >= 0 else np.zeros(3)
        rest_pos.append(base + to_y_up(joint.offset))
    char_rest = [np.zeros(3)] * len(char_desc.joints)
    for j in char_desc.joints[1:]:
        char_rest[j.id] = char_rest[j.parent] + j.attach_pt
    align = {}
    for cid, bid in bvh_of.items():
        child = next((k.id for k in char_desc.joints if k.parent == cid and k.id in bvh_of), None)
        align[cid] = math_util.quat_identity() if child is None else _shortest_rotation(
            char_rest[child] - char_rest[cid], rest_pos[bvh_of[child]] - rest_pos[bid])

    conv_inv = math_util.quat_conj(conv)
    poses = np.zeros((len(bvh.frames), char_desc.pose_size))
    for f, values in enumerate(bvh.frames):
        world, root_pos = [], None
        for joint in bvh.joints:
            vals = values[joint.first_channel:joint.first_channel + len(joint.channels)]
            rot = [(c, v) for c, v in zip(joint.channels, vals) if c.endswith("rotation")]
            local = euler_to_quat([c for c, _ in rot], [v for _, v in rot])
            local = math_util.quat_mul(math_util.quat_mul(conv, local), conv_inv)
            parent = world[joint.parent] if joint.parent >= 0 else math_util.quat_identity()
            world.append(math_util.quat_mul(parent, local))
            if joint.parent < 0:
                trans = np.zeros(3)
                for c, v in zip(joint.channels, vals):
                    if c.endswith("position"):
                        trans["XYZ".index(c[0])] = v
                root_pos = to_y_up(joint.offset + trans)
        char_world = {cid: math_util.quat_mul(world[bid], align[cid]) for cid, bid in bvh_of.items()}
        for j in char_desc.joints:
            off = char_desc.param_offset[j.id]
            if j.type is JointType.ROOT:
                poses[f, 0:3] = root_pos
                poses[f, 3:7] = char_world[0]
                continue
            if j.type is JointType.FIXED:
                continue
            parent_world = _char_world(char_desc, char_world, j.parent)
            local = math_util.quat_mul(math_util.quat_conj(parent_world), _char_world(char_desc, char_world, j.id))
            local = math_util.quat_normalize(local)
            if j.type is JointType.SPHERICAL:
                poses[f, off:off + 4] = local
            else:
                angle = 2.0 * math.atan2(local[3], local[0])
                poses[f, off] = math.remainder(angle, 2.0 * math.pi)
    return poses


def _char_world(char_desc, char_world, cid):
    """World rotation of a character joint; an unmapped one follows its parent (identity local)."""
    while cid not in char_world:
        cid = char_desc.joints[cid].parent
    return char_world[cid]


def motion_file_text(poses, frame_time, loop):
    frames = [[frame_time] + [float(v) for v in pose] for pose in poses]
    return json.dumps({"Loop": loop, "Frames": frames}, indent=1) + "\n"


def motion_to_bvh_text(motion, scale=1.0):
    """BVH of a clip on its character: offsets from the character file times `scale`, root
    channels X/Y/Zposition Z/Y/Xrotation, other joints Z/Y/Xrotation (a revolute joint's angle
    on Z); fixed joints become their parent's End Site. Frame Time: the first frame's duration
    (frames are written as stored)."""
    desc = motion.char_desc
    lines, cols = ["HIERARCHY"], []

    def write(j, depth):
        pad = "  " * depth
        kind = "ROOT" if j.type is JointType.ROOT else "JOINT"
        off = j.attach_pt * scale
        lines.append(f"{pad}{kind} {j.name}")
        lines.append(pad + "{")
        lines.append(f"{pad}  OFFSET {off[0]:.9g} {off[1]:.9g} {off[2]:.9g}")
        chans = "Zrotation Yrotation Xrotation"
        if j.type is JointType.ROOT:
            chans = "Xposition Yposition Zposition " + chans
        lines.append(f"{pad}  CHANNELS {len(chans.split())} {chans}")
        cols.append(j)
        children = [k for k in desc.joints if k.parent == j.id]
        movable = [k for k in children if k.type is not JointType.FIXED]
        for k in movable:
            write(k, depth + 1)
        ends = [k.attach_pt * scale for k in children if k.type is JointType.FIXED] or ([] if movable else [np.zeros(3)])
        for e in ends:
            lines.extend([f"{pad}  End Site", pad + "  {", f"{pad}    OFFSET {e[0]:.9g} {e[1]:.9g} {e[2]:.9g}", pad + "  }"])
        lines.append(pad + "}")

    write(desc.joints[0], 0)
    lines += ["MOTION", f"Frames: {motion.num_frames}", f"Frame Time: {motion.frame_durations[0]:.9g}"]
    for pose in motion.frames:
        row = []
        for j in cols:
            off = desc.param_offset[j.id]
            if j.type is JointType.ROOT:
                row += list(pose[0:3] * scale) + quat_to_euler_zyx(pose[3:7])
            elif j.type is JointType.SPHERICAL:
                row += quat_to_euler_zyx(pose[off:off + 4])
            else:
                row += [math.degrees(pose[off]), 0.0, 0.0]
        lines.append(" ".join(f"{v:.12g}" for v in row))
    return "\n".join(lines) + "\n"
