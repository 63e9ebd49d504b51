"""GAIL check (issue 11): after a fixed sample budget, the GAIL policy's DeepMimic imitation reward
per step and survival in test mode against the untrained policy's, PPO and TRPO step side by side.

    .venv/bin/python -m tests.bench.gail_check [--samples 300000] [--num_workers 2] [--output DIR]
        [--seed 1] [--episodes 16] [--episode_time 4] [--json FILE] [--eval_only]
        [--steps ppo,trpo] [--agent_set KEY=JSON ...]

For each policy step (args/train_gail_humanoid3d_walk_args.txt and
args/train_gail_trpo_humanoid3d_walk_args.txt: the imitate scene on the walk clip, trained on the
discriminator's reward from data/demos/humanoid3d_walk_demos.npz only):
1. Training as tests/bench/learning_check.py does it, into DIR/<step>, for --samples samples.
2. Evaluation, each policy in a process of its own with the same --rand_seed: the untrained policy
   (a fresh agent) and the trained checkpoint, in test mode (mean actions), --episodes episodes cut
   at --episode_time seconds, scored by the scene's own imitation reward (DeepMimic's 2021 reward,
   which GAIL never trains on): reward per decision, return per episode, episode length and falls.
3. The log's discriminator columns over the iterations.
PASS when, for every step, the trained policy's imitation reward per decision beats the untrained
policy's. For scale: the expert that recorded the demonstrations scores about 0.85 per decision
(the dataset's metadata, mean_env_reward; its own 2018 scene).
"""
import sys
import tempfile
from argparse import Namespace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if __package__ in (None, ""):
    sys.path.insert(0, str(ROOT))

from tests.bench import learning_check as lc  # noqa: E402

STEPS = {"ppo": "args/train_gail_humanoid3d_walk_args.txt", "trpo": "args/train_gail_trpo_humanoid3d_walk_args.txt"}
DEFAULT_SAMPLES = 300000
LOG_COLUMNS = ("Iteration", "Samples", "Train_Return", "Test_Return", "Disc_Loss", "Disc_Acc_Expert",
               "Disc_Acc_Agent", "Disc_Reward_Mean")
STEP_COLUMNS = {"trpo": ("KL", "Line_Search_Steps")}


def split_steps(argv):
    """(--steps values, the other arguments)."""
    argv = list(argv)
    steps = list(STEPS)
    if "--steps" in argv:
        i = argv.index("--steps")
        steps = [s for s in argv[i + 1].split(",") if s]
        del argv[i:i + 2]
        unknown = [s for s in steps if s not in STEPS]
        if unknown:
            raise SystemExit(f"--steps: unknown step {unknown[0]!r} (known: {', '.join(STEPS)})")
    return steps, argv


def format_step(name, result):
    t, ev = result["training"], result["evaluation"]
    lines = [f"[{name}] training: {t['samples']:,} samples, {t['iterations']} iterations, {t['wall_s'] / 60:.1f} min"]
    cols = t["row_columns"]
    rows = [dict(zip(cols, r)) for r in t["rows"]]
    step = max(1, -(-len(rows) // 8))
    for r in rows[::step] + ([rows[-1]] if (len(rows) - 1) % step else []):
        extra = " ".join(f"{c} {r[c]:.4g}" for c in STEP_COLUMNS.get(name, ()) if c in r)
        lines.append(f"  iter {int(r['Iteration']):4d} samples {int(r['Samples']):7d} | Disc_Acc_Expert "
                     f"{r['Disc_Acc_Expert']:.3f} Disc_Acc_Agent {r['Disc_Acc_Agent']:.3f} | Disc_Reward_Mean "
                     f"{r['Disc_Reward_Mean']:.4f} | Train_Return (env) {r['Train_Return']:.3f} {extra}")
    for policy in ("untrained", "trained"):
        r = ev[policy]
        lines.append(f"  {policy:>9}: imitation reward/step {r['mean_reward_per_decision']:.4f} | return/episode "
                     f"{r['mean_return']:.3f} | length {r['mean_length_s']:.2f} s | falls {r['falls']}/{r['episodes']}")
    return "\n".join(lines)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--worker"]:
        return lc.main(argv)
    steps, argv = split_steps(argv)
    args = lc.parse_args(argv, samples=DEFAULT_SAMPLES, arg_file=STEPS["ppo"], description=__doc__)
    results = {}
    with tempfile.TemporaryDirectory(prefix="gail_check_") as tmp:
        root = Path(args.output or tmp).resolve()
        for name in steps:
            out_dir = root / name
            out_dir.mkdir(parents=True, exist_ok=True)
            step_args = Namespace(**{**vars(args), "arg_file": STEPS[name]})
            columns = LOG_COLUMNS + STEP_COLUMNS.get(name, ())
            results[name] = lc.run_check(step_args, out_dir, "tests.bench.learning_check", columns)
    passed = {name: r["evaluation"]["trained"]["mean_reward_per_decision"]
              > r["evaluation"]["untrained"]["mean_reward_per_decision"] for name, r in results.items()}
    result = {"steps": results, "pass": all(passed.values()), "pass_per_step": passed,
              "criterion": "for every policy step, the trained policy's imitation reward per decision (the "
                           "scene's reward, not trained on) beats the untrained policy's"}
    for name, r in results.items():
        print(format_step(name, r), flush=True)
    print(f"{'PASS' if result['pass'] else 'FAIL'}: {result['criterion']} ({passed})", flush=True)
    if args.json:
        lc.write_json(args.json, result)
    return 0 if result["pass"] else 1


if __name__ == "__main__":
    sys.exit(main())
