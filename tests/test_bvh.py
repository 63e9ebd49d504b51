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
    back = convert(tmp_path / "walk.bvh", tmp_path, "--scale", "0.01")
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
    motion = convert(path, tmp_path, "--scale", "0.01", "--loop", "none")
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
    pose = convert(path, tmp_path).frames[0]
    chest = CHAR.param_offset[1]
    assert np.allclose(pose[chest:chest + 4], [math.cos(math.radians(25)), 0, math.sin(math.radians(25)), 0])


def test_euler_channel_order_and_z_up(tmp_path):
    a, b, c = 30.0, -45.0, 60.0
    path = two_joint_bvh(tmp_path, ["Xrotation", "Yrotation", "Zrotation", "Xposition", "Yposition", "Zposition"],
                         [a, b, c, 1, 2, 3])
    q = convert(path, tmp_path).frames[0, 3:7]
    rx = np.array([[1, 0, 0], [0, math.cos(math.radians(a)), -math.sin(math.radians(a))],
                   [0, math.sin(math.radians(a)), math.cos(math.radians(a))]])
    ry = np.array([[math.cos(math.radians(b)), 0, math.sin(math.radians(b))], [0, 1, 0],
                   [-math.sin(math.radians(b)), 0, math.cos(math.radians(b))]])
    rz = np.array([[math.cos(math.radians(c)), -math.sin(math.radians(c)), 0],
                   [math.sin(math.radians(c)), math.cos(math.radians(c)), 0], [0, 0, 1]])
    from util.math_util import quat_to_matrix
    assert np.allclose(quat_to_matrix(q), rx @ ry @ rz)
    zup = convert(path, tmp_path, "--up", "z").frames[0]
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
    from env.deepmimic_env import DeepMimicEnv
    from util.arg_parser import load_args
    script("motion_to_bvh")(["data/motions/humanoid3d_walk.txt", str(tmp_path / "walk.bvh")])
    motion = convert(tmp_path / "walk.bvh", tmp_path)
    env = DeepMimicEnv(load_args(["--scene", "kin_char", "--character_file", "data/characters/humanoid3d.txt",
                                  "--motion_file", str(tmp_path / "out.txt")]))
    env.update(0.5)
    assert np.allclose(env.scene.kin_char.pose, motion.calc_frame(0.5))
