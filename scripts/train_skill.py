"""Trains a clip of the library (or a user's clip) with the project's recipe until it ships:

    .venv/bin/python scripts/train_skill.py --clip backflip [--num_workers 2] [--max_samples 5000000]
    .venv/bin/python scripts/train_skill.py --motion my_clip.txt          (or .bvh)
    make skill CLIP=backflip        make skill CLIP=dog3d_trot        make skill MOTION=my_clip.txt

Progress per iteration and per evaluation here (the iterations also in
output/skills/CLIP/train_stdout.txt); the curve in output/skills/CLIP/time_to_skill.json. Ctrl-C (or
a lost session) stops it; the same command goes on. When it ships:
data/policies/<character>_<clip>_trained/ (checkpoint and metadata.json), played by DeepMimic's own
args/run_<character>_<clip>_args.txt. The clips and the recipe: app/skill_recipes.py; options:
app/skill_config.py.
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.skill_training import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
