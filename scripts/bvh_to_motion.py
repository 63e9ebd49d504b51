"""BVH -> DeepMimic clip: python scripts/bvh_to_motion.py IN.bvh OUT.txt [--map MAP.json]
[--scale 0.01] [--up y|z] [--loop wrap|none] [--character_file data/characters/humanoid3d.txt]

Retargets the BVH's rotations onto the character (logic and conventions: env/anim/bvh.py)."""
import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from env.anim import bvh  # noqa: E402
from env.anim.character import CharacterDesc  # noqa: E402
from util.cli import run_main  # noqa: E402
from util.paths import resolve_data_path  # noqa: E402


def main(argv=None):
    parser = argparse.ArgumentParser(description="BVH motion capture -> DeepMimic motion file")
    parser.add_argument("bvh_file")
    parser.add_argument("motion_file")
    parser.add_argument("--map", default=bvh.DEFAULT_JOINT_MAP, help="JSON {BVH joint: character joint}")
    parser.add_argument("--scale", type=float, default=1.0, help="BVH units times this are metres (cm: 0.01)")
    parser.add_argument("--up", choices=("y", "z"), default="y", help="the BVH's up axis")
    parser.add_argument("--loop", choices=("wrap", "none"), default="wrap")
    parser.add_argument("--character_file", default="data/characters/humanoid3d.txt")
    args = parser.parse_args(argv)
    char_desc = CharacterDesc.load(args.character_file)
    data = bvh.read_bvh(args.bvh_file)
    joint_map = bvh.load_joint_map(str(resolve_data_path(args.map)))
    poses = bvh.bvh_to_frames(data, char_desc, joint_map, args.scale, args.up, args.bvh_file)
    bvh.write_atomic(args.motion_file, bvh.motion_file_text(poses, data.frame_time, args.loop))
    print(f"{args.motion_file}: {len(poses)} frames at {1.0 / data.frame_time:.4g} fps")


if __name__ == "__main__":
    sys.exit(run_main(main, "bvh_to_motion.py"))
