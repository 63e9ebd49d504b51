"""Trains a skill with the project's recipe until it meets its criterion, then ships it:

    .venv/bin/python scripts/train_skill.py --clip backflip [--num_workers 2] [--max_samples 5000000]
    make skill CLIP=backflip

Progress per iteration in output/skills/CLIP/train_stdout.txt and per evaluation here; the curve in
output/skills/CLIP/time_to_skill.json. Ctrl-C (or a lost session) stops it; the same command goes
on. At the criterion: data/policies/humanoid3d_CLIP_trained/ (checkpoint and metadata.json) and
args/run_humanoid3d_CLIP_trained_args.txt. Options: app/skill_training.py.
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.skill_training import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
