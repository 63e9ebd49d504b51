"""BVH import/export: a round trip of the walk clip, hand-made files with known rotations, Euler
order, units and up axis, bad input, and the converted clip in the kin_char scene."""
import importlib.util
import math
from pathlib import Path

import numpy as np
import pytest

from env.anim import bvh
from env.anim.character import CharacterDesc
from env.anim.motion import Motion
from util.cli import run_main

ROOT = Path(__file__).resolve().parent.parent
CHAR = CharacterDesc.load("data/characters/humanoid3d.txt")


def script(name):
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.main


def two_joint_bvh(tmp_path, root_channels, root_values, leg_z=0.0, frames=2):
    """Hips (root) with a spine and a right leg (Hips -> RightUpLeg -> RightLeg -> RightFoot)."""
    text = f"""HIERARCHY
ROOT Hips
{{
  OFFSET 0 0 0
  CHANNELS {len(root_channels)} {' '.join(root_channels)}
  JOINT Spine1
  {{
    OFFSET 0 20 0
    CHANNELS 0
    End Site
    {{
      OFFSET 0 10 0
    }}
  }}
  JOINT RightUpLeg
  {{
    OFFSET 0 0 8
    CHANNELS 3 Zrotation Yrotation Xrotation
    JOINT RightLeg
    {{
      OFFSET 0 -40 0
      CHANNELS 3 Zrotation Yrotation Xrotation
      End Site
      {{
        OFFSET 0 -40 0
      }}
    }}
  }}
}}
MOTION
Frames: {frames}
Frame Time: 0.025
""" + "".join(" ".join(str(v) for v in list(root_values) + [0, 0, 0, leg_z, 0, 0]) + "\n" for _ in range(frames))
    path = tmp_path / "hand.bvh"
    path.write_text(text)
    return path


def convert(path, tmp_path, *extra):
    out = tmp_path / "out.txt"
    assert script("bvh_to_motion")([str(path), str(out), *extra]) in (None, 0)
    return Motion.load(str(out), CHAR)


def test_round_trip_of_the_walk_clip(tmp_path):
    src = Motion.load("data/motions/humanoid3d_walk.txt", CHAR)
    script("motion_to_bvh")(["data/motions/humanoid3d_walk.txt", str(tmp_path / "walk.bvh"), "--scale", "100"])
    back = convert(tmp_path / "walk.bvh", tmp_path, "--scale", "0.01", "--ground", "false")
    assert back.num_frames == src.num_frames and back.loop == "wrap"
    assert np.allclose(back.frame_durations[:-1], src.frame_durations[:-1], atol=1e-9)
    assert np.abs(back.frames[:, :3] - src.frames[:, :3]).max() < 1e-9
    qa, qb = src.frames[:, src._quat_cols], back.frames[:, back._quat_cols]
    assert np.minimum(np.abs(qa - qb).max(-1), np.abs(qa + qb).max(-1)).max() < 1e-5
    revolute = [CHAR.param_offset[j.id] for j in CHAR.joints if j.type.value == "revolute"]
    assert np.abs(src.frames[:, revolute] - back.frames[:, revolute]).max() < 1e-5


def test_known_rotation_units_and_knee_twist(tmp_path):
    channels = ["Xposition", "Yposition", "Zposition", "Zrotation", "Yrotation", "Xrotation"]
    path = two_joint_bvh(tmp_path, channels, [10, 90, 20, 90, 0, 0], leg_z=-30)
    motion = convert(path, tmp_path, "--scale", "0.01", "--loop", "none", "--ground", "false")
    pose = motion.frames[0]
    assert np.allclose(pose[:3], [0.1, 0.9, 0.2])
    assert np.allclose(pose[3:7], [math.cos(math.pi / 4), 0, 0, math.sin(math.pi / 4)])
    knee = CHAR.param_offset[4]
    assert pose[knee] == pytest.approx(math.radians(-30))
    assert motion.frame_durations[0] == pytest.approx(0.025) and motion.loop == "none"


def test_mixamo_prefix_and_deepest_spine_joint(tmp_path):
    """mixamorig:Hips maps to the root; Spine and Spine1 both map to chest, Spine1 (deeper) wins:
    the chest's local rotation is Spine's 20 deg and Spine1's 30 deg about y together."""
    path = tmp_path / "mixamo.bvh"
    path.write_text("""HIERARCHY
ROOT mixamorig:Hips
{
  OFFSET 0 0 0
  CHANNELS 3 Xposition Yposition Zposition
  JOINT mixamorig:Spine
  {
    OFFSET 0 10 0
    CHANNELS 1 Yrotation
    JOINT mixamorig:Spine1
    {
      OFFSET 0 10 0
      CHANNELS 1 Yrotation
      End Site
      {
        OFFSET 0 10 0
      }
    }
  }
}
MOTION
Frames: 2
Frame Time: 0.5
0 90 0 20 30
0 90 0 20 30
""")
    pose = convert(path, tmp_path, "--scale", "0.01").frames[0]
    chest = CHAR.param_offset[1]
    assert np.allclose(pose[chest:chest + 4], [math.cos(math.radians(25)), 0, math.sin(math.radians(25)), 0])


def test_euler_channel_order_and_z_up(tmp_path):
    a, b, c = 30.0, -45.0, 60.0
    path = two_joint_bvh(tmp_path, ["Xrotation", "Yrotation", "Zrotation", "Xposition", "Yposition", "Zposition"],
                         [a, b, c, 1, 2, 3])
    q = convert(path, tmp_path, "--ground", "false").frames[0, 3:7]
    rx = np.array([[1, 0, 0], [0, math.cos(math.radians(a)), -math.sin(math.radians(a))],
                   [0, math.sin(math.radians(a)), math.cos(math.radians(a))]])
    ry = np.array([[math.cos(math.radians(b)), 0, math.sin(math.radians(b))], [0, 1, 0],
                   [-math.sin(math.radians(b)), 0, math.cos(math.radians(b))]])
    rz = np.array([[math.cos(math.radians(c)), -math.sin(math.radians(c)), 0],
                   [math.sin(math.radians(c)), math.cos(math.radians(c)), 0], [0, 0, 1]])
    from util.math_util import quat_to_matrix
    assert np.allclose(quat_to_matrix(q), rx @ ry @ rz)
    zup = convert(path, tmp_path, "--up", "z", "--scale", "1", "--ground", "false").frames[0]
    assert np.allclose(zup[:3], [1, 3, -2])    # (x, y, z) z-up -> (x, z, -y) y-up


def test_rest_pose_offsets_are_accounted_for(tmp_path):
    """A leg whose BVH rest points along +x: the hip turns the character's leg (-y) onto it."""
    path = two_joint_bvh(tmp_path, ["Xposition", "Yposition", "Zposition"], [0, 0, 0])
    path.write_text(path.read_text().replace("OFFSET 0 -40 0\n      CHANNELS", "OFFSET 40 0 0\n      CHANNELS"))
    pose = convert(path, tmp_path).frames[0]
    hip = CHAR.param_offset[3]
    from util.math_util import quat_rotate
    assert np.allclose(quat_rotate(pose[hip:hip + 4], [0, -1, 0]), [1, 0, 0])


@pytest.mark.parametrize("edit, line", [(("OFFSET 0 20 0", "OFFSET 0 twenty 0"), 8),
                                        (("CHANNELS 0", "CHANNELS 2 Qrotation Yrotation"), 9)])
def test_broken_bvh_is_one_line_with_the_line_number(tmp_path, capsys, edit, line):
    path = two_joint_bvh(tmp_path, ["Xposition", "Yposition", "Zposition"], [0, 0, 0])
    path.write_text(path.read_text().replace(*edit))
    main = script("bvh_to_motion")
    assert run_main(lambda: main([str(path), str(tmp_path / "o.txt")]), "bvh_to_motion.py") == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"bvh_to_motion.py: error: {path}: line {line}: ")
    assert not (tmp_path / "o.txt").exists()


def test_truncated_motion_names_the_file(tmp_path):
    path = two_joint_bvh(tmp_path, ["Xposition", "Yposition", "Zposition"], [0, 0, 0])
    path.write_text(path.read_text().rstrip()[:-6])
    with pytest.raises(bvh.BvhError, match=f"{path}: line 34: unexpected end of file"):
        bvh.read_bvh(str(path))


def test_converted_clip_builds_the_kin_char_scene(tmp_path):
    script("motion_to_bvh")(["data/motions/humanoid3d_walk.txt", str(tmp_path / "walk.bvh")])
    play_in_kin_char(tmp_path / "out.txt", convert(tmp_path / "walk.bvh", tmp_path))


# ---- a CMU-style skeleton made from a shipped clip ----

# (BVH joint, parent, character joint whose rest offset it takes a part of, that part); the joint
# maps to a character joint through data/bvh/cmu_joint_map.json when it ends the bone (part 1 or
# the last part). Extra joints on the way (LHipJoint, LowerBack, Spine, Neck, Neck1, the collars)
# and toes have no character joint.
CMU_BONES = [("Hips", None, "root", 1.0),
             ("LowerBack", "Hips", "chest", 0.3), ("Spine", "LowerBack", "chest", 0.3),
             ("Spine1", "Spine", "chest", 0.4), ("Neck", "Spine1", "neck", 0.5), ("Neck1", "Neck", "neck", 0.3),
             ("Head", "Neck1", "neck", 0.2)]
for side, s in (("Left", "left"), ("Right", "right")):
    CMU_BONES += [(f"{side[0]}HipJoint", "Hips", f"{s}_hip", 0.5), (f"{side}UpLeg", f"{side[0]}HipJoint", f"{s}_hip", 0.5),
                  (f"{side}Leg", f"{side}UpLeg", f"{s}_knee", 1.0), (f"{side}Foot", f"{side}Leg", f"{s}_ankle", 1.0),
                  (f"{side}ToeBase", f"{side}Foot", None, 1.0),
                  (f"{side}Shoulder", "Spine1", f"{s}_shoulder", 0.4), (f"{side}Arm", f"{side}Shoulder", f"{s}_shoulder", 0.6),
                  (f"{side}ForeArm", f"{side}Arm", f"{s}_elbow", 1.0), (f"{side}Hand", f"{side}ForeArm", f"{s}_wrist", 1.0)]
CMU_UNITS = 110.0           # centimetres of an actor 10% taller than the character
TOE = np.array([0.12, -0.05, 0.0])


def cmu_bvh_text(motion):
    """The clip on a CMU-named skeleton in T-pose (arms along the shoulder line at rest), z-up, in
    CMU_UNITS per metre. Each mapped BVH joint's world rotation is its character joint's times the
    inverse of its rest rotation T (the T-pose turn for the arm joints, identity elsewhere), so that
    the retargeting (which takes T out again from the rest bone directions) gives back the clip."""
    from env.anim.kin_character import KinCharacter
    from util import math_util as mu
    ids = {j.name: j.id for j in CHAR.joints}
    parent_joint = {name: parent for name, parent, _, _ in CMU_BONES}
    turn = {}
    for s in ("left", "right"):
        lateral = np.sign(CHAR.joints[ids[f"{s}_shoulder"]].attach_pt[2]) * np.array([0.0, 0.0, 1.0])
        q = bvh._shortest_rotation(np.array([0.0, -1.0, 0.0]), lateral)
        turn.update({f"{s}_shoulder": q, f"{s}_elbow": q, f"{s}_wrist": q})
    ident = mu.quat_identity()
    zup = mu.quat_conj(bvh._Z_UP_TO_Y_UP)          # y-up -> z-up

    def rest_turn_of_parent(name):
        """The rest rotation of the bone this joint's offset lies on: T of its character joint's
        parent (identity for the root and the toes, which hang off the feet)."""
        char = next(c for n, _, c, _ in CMU_BONES if n == name)
        parent = CHAR.joints[ids[char]].parent if char else -1
        return turn.get(CHAR.joints[parent].name, ident) if parent >= 0 else ident

    lines, order = ["HIERARCHY"], []

    def write(name, depth):
        _, parent, char, part = next(b for b in CMU_BONES if b[0] == name)
        pad = "  " * depth
        offset = np.zeros(3) if parent is None else (
            TOE if char is None else part * CHAR.joints[ids[char]].attach_pt)
        offset = mu.quat_rotate(zup, mu.quat_rotate(rest_turn_of_parent(name), offset) * CMU_UNITS)
        lines.append(f"{pad}{'ROOT' if parent is None else 'JOINT'} {name}")
        lines.append(pad + "{")
        lines.append(f"{pad}  OFFSET {offset[0]:.12g} {offset[1]:.12g} {offset[2]:.12g}")
        chans = ("Xposition Yposition Zposition " if parent is None else "") + "Zrotation Yrotation Xrotation"
        lines.append(f"{pad}  CHANNELS {len(chans.split())} {chans}")
        order.append(name)
        children = [n for n, p, _, _ in CMU_BONES if p == name]
        for child in children:
            write(child, depth + 1)
        if not children:
            lines.extend([f"{pad}  End Site", pad + "  {", f"{pad}    OFFSET 0 {0.1 * CMU_UNITS:.6g} 0", pad + "  }"])
        lines.append(pad + "}")

    write("Hips", 0)
    world_rots = KinCharacter(CHAR).calc_joint_world(motion.frames)[1]
    mapped = {n: c for n, _, c, part in CMU_BONES
              if c is not None and (part == 1.0 or n in ("Spine1", "Head", "LeftUpLeg", "RightUpLeg", "LeftArm", "RightArm"))}
    lines += ["MOTION", f"Frames: {motion.num_frames}", f"Frame Time: {motion.frame_durations[0]:.12g}"]
    for f, pose in enumerate(motion.frames):
        world, row = {}, []
        for name in order:
            parent = parent_joint[name]
            if name in mapped:
                g = world_rots[f, ids[mapped[name]]]
                world[name] = mu.quat_mul(g, mu.quat_conj(turn.get(mapped[name], ident)))
            else:
                world[name] = world[parent]
            local = world[name] if parent is None else mu.quat_mul(mu.quat_conj(world[parent]), world[name])
            local = mu.quat_mul(mu.quat_mul(zup, local), mu.quat_conj(zup))
            if parent is None:
                row += list(mu.quat_rotate(zup, pose[:3] * CMU_UNITS))
            row += bvh.quat_to_euler_zyx(local)
        lines.append(" ".join(f"{v:.12g}" for v in row))
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("clip", ["humanoid3d_walk", "humanoid3d_cartwheel"])
def test_cmu_skeleton_retargets_to_the_source_joint_positions(tmp_path, capsys, clip):
    """The map is picked from the names, the scale from the legs (1/110), the file is z-up with a
    T-pose rest: every character joint lands where the source clip (grounded the same way) has it."""
    from env.anim.kin_character import KinCharacter
    src = Motion.load(f"data/motions/{clip}.txt", CHAR)
    path = tmp_path / "cmu.bvh"
    path.write_text(cmu_bvh_text(src))
    out = convert(path, tmp_path, "--up", "z")
    printed = capsys.readouterr().out
    assert "joint map data/bvh/cmu_joint_map.json (picked): 13 of 13 character joints" in printed
    assert f"scale {1 / CMU_UNITS:.6g}" in printed
    assert ("warning: BVH joints with no character joint (their rotation is carried by the next mapped one): "
            "LowerBack, Spine, Neck, Neck1, LeftShoulder, RightShoulder, LHipJoint, LeftToeBase, RHipJoint, "
            "RightToeBase") in printed
    kin = KinCharacter(CHAR)
    expected, _ = bvh.ground_poses(src.frames, CHAR)
    err = np.linalg.norm(kin.calc_joint_world(out.frames)[0] - kin.calc_joint_world(expected)[0], axis=-1)
    per_joint = {j.name: (float(err[:, j.id].max()), float(err[:, j.id].mean())) for j in CHAR.joints}
    print(f"{clip}: per-joint position error max/mean (m):",
          ", ".join(f"{k} {a:.1e}/{b:.1e}" for k, (a, b) in per_joint.items()))
    assert err.max() < 1e-6, per_joint
    _, shift = bvh.ground_poses(out.frames, CHAR)
    assert abs(shift) < 1e-9                         # the clip is on the ground
    play_in_kin_char(tmp_path / "out.txt", out)


def play_in_kin_char(clip_path, motion, steps=4, dt=0.1):
    """The kin_char scene plays the clip: after each step its pose is the clip's at that time."""
    from env.deepmimic_env import DeepMimicEnv
    from util.arg_parser import load_args
    env = DeepMimicEnv(load_args(["--scene", "kin_char", "--character_file", "data/characters/humanoid3d.txt",
                                  "--motion_file", str(clip_path)]))
    for step in range(1, steps + 1):
        env.update(dt)
        assert np.allclose(env.kin_char.pose, motion.calc_frame(step * dt))


def test_resampling_halves_the_frame_time_with_slerp(tmp_path):
    src = Motion.load("data/motions/humanoid3d_walk.txt", CHAR)
    script("motion_to_bvh")(["data/motions/humanoid3d_walk.txt", str(tmp_path / "walk.bvh")])
    dt = src.frame_durations[0]
    out = convert(tmp_path / "walk.bvh", tmp_path, "--frame_time", str(dt / 2), "--ground", "false", "--scale", "1")
    assert out.num_frames == 2 * src.num_frames - 1
    assert np.allclose(out.frame_durations, dt / 2)
    np.testing.assert_allclose(out.frames[2], src.frames[1], atol=1e-6)
    mid = out.frames[1]
    np.testing.assert_allclose(mid[:3], 0.5 * (src.frames[0, :3] + src.frames[1, :3]), atol=1e-9)
    q0, q1 = src.frames[0, 3:7], src.frames[1, 3:7]
    half = np.arccos(np.clip(abs(q0 @ q1), -1, 1))
    slerp = (np.sin(0.5 * half) * (q0 + np.sign(q0 @ q1) * q1)) / np.sin(half)
    assert min(np.abs(mid[3:7] - slerp).max(), np.abs(mid[3:7] + slerp).max()) < 1e-6


def test_map_auto_selection_and_missing_joints_named(tmp_path, capsys):
    """Mixamo/Hips names pick the default map; the joints the file lacks are named once."""
    path = two_joint_bvh(tmp_path, ["Xposition", "Yposition", "Zposition"], [0, 90, 0])
    convert(path, tmp_path)
    printed = capsys.readouterr().out
    assert "joint map data/bvh/default_joint_map.json (picked): 4 of 13 character joints" in printed
    assert ("warning: character joints with no BVH joint (they follow their parent): neck, right_ankle, "
            "right_shoulder, right_elbow, left_hip, left_knee, left_ankle, left_shoulder, left_elbow") in printed


def test_given_joint_map_and_its_alias(tmp_path, capsys):
    path = two_joint_bvh(tmp_path, ["Xposition", "Yposition", "Zposition"], [0, 90, 0])
    for option in ("--joint_map", "--map"):
        convert(path, tmp_path, option, "data/bvh/cmu_joint_map.json")
        assert "joint map data/bvh/cmu_joint_map.json: 4 of 13" in capsys.readouterr().out


def test_scale_cannot_be_inferred_without_legs(tmp_path, capsys):
    path = two_joint_bvh(tmp_path, ["Xposition", "Yposition", "Zposition"], [0, 90, 0])
    path.write_text(path.read_text().replace("RightUpLeg", "Thigh").replace("RightLeg", "Shin"))
    main = script("bvh_to_motion")
    assert run_main(lambda: main([str(path), str(tmp_path / "o.txt")]), "bvh_to_motion.py") == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"bvh_to_motion.py: error: {path}: cannot infer the scale (no mapped hip-knee-ankle bones): "
                   "give --scale"]
