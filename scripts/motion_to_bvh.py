"""DeepMimic clip -> BVH: python scripts/motion_to_bvh.py IN.txt OUT.bvh [--scale 100]
[--character_file data/characters/humanoid3d.txt]

The character's skeleton with its offsets, Z/Y/X Euler channels (env/anim/bvh.py)."""
import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from env.anim import bvh  # noqa: E402
from env.anim.character import CharacterDesc  # noqa: E402
from env.anim.motion import Motion  # noqa: E402
from util.cli import run_main  # noqa: E402
from util.atomic_write import write_text  # noqa: E402


def main(argv=None):
    parser = argparse.ArgumentParser(description="DeepMimic motion file -> BVH")
    parser.add_argument("motion_file")
    parser.add_argument("bvh_file")
    parser.add_argument("--scale", type=float, default=1.0, help="metres times this are BVH units (cm: 100)")
    parser.add_argument("--character_file", default="data/characters/humanoid3d.txt")
    args = parser.parse_args(argv)
    motion = Motion.load(args.motion_file, CharacterDesc.load(args.character_file))
    write_text(args.bvh_file, bvh.motion_to_bvh_text(motion, args.scale))
    print(f"{args.bvh_file}: {motion.num_frames} frames")


if __name__ == "__main__":
    sys.exit(run_main(main, "motion_to_bvh.py"))
