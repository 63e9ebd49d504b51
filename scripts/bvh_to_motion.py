"""BVH -> DeepMimic clip: python scripts/bvh_to_motion.py IN.bvh OUT.txt [--joint_map MAP.json]
[--scale S] [--frame_time S] [--up y|z] [--loop wrap|none] [--ground true|false]
[--character_file data/characters/humanoid3d.txt]

Retargets the BVH's rotations onto the character (logic and conventions: env/anim/bvh.py).
Without --joint_map the shipped map that fits the file's joint names is picked; without --scale
the file's legs are scaled to the character's; the clip is grounded unless --ground false;
--frame_time resamples it. Prints the choices and one warning line per kind of unmapped joint."""
import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from env.anim import bvh  # noqa: E402
from env.anim.character import CharacterDesc  # noqa: E402
from util.cli import run_main  # noqa: E402
from util.paths import resolve_data_path  # noqa: E402
from util.atomic_write import write_text  # noqa: E402


def positive(text):
    value = float(text)
    if not value > 0:
        raise argparse.ArgumentTypeError(f"expected a number > 0, got {text}")
    return value


def main(argv=None):
    parser = argparse.ArgumentParser(description="BVH motion capture -> DeepMimic motion file")
    parser.add_argument("bvh_file")
    parser.add_argument("motion_file")
    parser.add_argument("--joint_map", "--map", help="JSON {BVH joint: character joint} (default: picked "
                        f"from {', '.join(bvh.JOINT_MAPS)})")
    parser.add_argument("--scale", type=positive, help="BVH units times this are metres (default: legs "
                        "scaled to the character's)")
    parser.add_argument("--frame_time", type=positive, help="resample to this frame time in seconds")
    parser.add_argument("--up", choices=("y", "z"), default="y", help="the BVH's up axis")
    parser.add_argument("--loop", choices=("wrap", "none"), default="wrap")
    parser.add_argument("--ground", choices=("true", "false"), default="true",
                        help="put the clip's lowest point on the ground")
    parser.add_argument("--character_file", default="data/characters/humanoid3d.txt")
    args = parser.parse_args(argv)
    char_desc = CharacterDesc.load(args.character_file)
    data = bvh.read_bvh(args.bvh_file)
    if args.joint_map:
        map_path, joint_map = args.joint_map, bvh.load_joint_map(str(resolve_data_path(args.joint_map)))
    else:
        map_path, joint_map = bvh.select_joint_map(data, char_desc)
    ignored, missing = bvh.unmapped_names(data, char_desc, joint_map)
    num_movable = len(bvh.movable_joints(char_desc))
    print(f"joint map {map_path}{'' if args.joint_map else ' (picked)'}: {num_movable - len(missing)} of "
          f"{num_movable} character joints")
    if ignored:
        print(f"warning: BVH joints with no character joint (their rotation is carried by the next "
              f"mapped one): {', '.join(ignored)}")
    if missing:
        print(f"warning: character joints with no BVH joint (they follow their parent): {', '.join(missing)}")
    scale = args.scale
    if scale is None:
        scale, char_len, bvh_len = bvh.infer_scale(data, char_desc, joint_map, args.bvh_file)
        print(f"scale {scale:.6g}: leg bones {bvh_len:.4g} BVH units -> {char_len:.4g} m")
    poses = bvh.bvh_to_frames(data, char_desc, joint_map, scale, args.up, args.bvh_file)
    frame_time = data.frame_time
    if args.frame_time:
        poses = bvh.resample_poses(poses, frame_time, args.frame_time, char_desc)
        frame_time = args.frame_time
    if args.ground == "true":
        poses, shift = bvh.ground_poses(poses, char_desc)
        print(f"grounded: root moved {shift:+.4f} m")
    write_text(args.motion_file, bvh.motion_file_text(poses, frame_time, args.loop))
    print(f"{args.motion_file}: {len(poses)} frames at {1.0 / frame_time:.4g} fps")


if __name__ == "__main__":
    sys.exit(run_main(main, "bvh_to_motion.py"))
