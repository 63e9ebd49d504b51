"""The time-to-skill benchmark: app/skill_training.py's train-evaluate-resume loop on any args file
(its docstring has the options), and --compare for curves at equal budgets.

    .venv/bin/python -m tests.bench.time_to_skill --arg_file args/train_humanoid3d_walk_fast_args.txt \\
        --output RUN_DIR [--resume] [--num_workers 2] [--eval_every 250000] ...
"""
import sys
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from app.skill_training import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
