"""AMP's training cost against imitate's (issue 36, item 5): training samples per second of the AMP
walk and of the imitate walk, interleaved in one run, at the same ranks.

    .venv/bin/python -m tests.bench.amp_cost [--ranks 1|2] [--rounds 3] [--iters 2]
        [--recipes deepmimic,fast] [--json FILE]

Recipes (each an imitate / AMP pair of args files that differ only in the scene's reward):
  deepmimic  args/train_humanoid3d_walk_args.txt      / args/train_amp_humanoid3d_walk_args.txt
  fast       args/train_humanoid3d_walk_fast_args.txt / args/train_amp_humanoid3d_walk_fast_args.txt
Each measurement is tests/bench/throughput.py's training section (c): a fresh run (seed 7) trained
to its first update, then --iters whole iterations timed (sampling and update, the agent file's own
BatchSize), with the physics floor probe B between chunks of work; at --ranks 2 under the mpiexec
that mpi_run.py uses, global samples/s. Per round the imitate and AMP runs of every recipe alternate
(imitate first in odd rounds, AMP first in even ones), so the machine's load hits both.
Reported per recipe: the median samples/s of each scene, the median over rounds of AMP / imitate,
raw and normalised by each run's floor (the target: >= 0.9), and each scene's update seconds per
iteration (the policy step; AMP's also holds its discriminator's steps): the rest of the gap is
sampling (AMP's observations).
Output: a table on stdout and, with --json FILE, every figure (written atomically).
"""
import argparse
import os
import statistics
import sys
import time
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if __package__ in (None, ""):
    sys.path.insert(0, str(ROOT))

from tests.bench import throughput  # noqa: E402
from util.atomic_write import write_json  # noqa: E402

RECIPES = {
    "deepmimic": ("args/train_humanoid3d_walk_args.txt", "args/train_amp_humanoid3d_walk_args.txt"),
    "fast": ("args/train_humanoid3d_walk_fast_args.txt", "args/train_amp_humanoid3d_walk_fast_args.txt"),
}
TARGET = 0.9


def measure(arg_file, ranks, iters):
    """throughput.py's training section (c) on `arg_file`."""
    throughput.TRAIN_ARGS = arg_file
    budget = replace(throughput.FULL, train_iters=iters)
    return throughput.measure_training(budget, ranks, "B")


def summarise(runs):
    """{scene: median samples/s}, and the medians over rounds of AMP / imitate (raw, per floor)."""
    def per_floor(r):
        return r["samples_per_s"] / r["floor"]["B"]

    def update_per_iter(r):
        return r["update_seconds"] / r["timed_iterations"]

    pairs = [(i, a) for i, a in zip(runs["imitate"], runs["amp"]) if throughput.ok(i) and throughput.ok(a)]
    if not pairs:
        return {"status": "failed: no round with both runs"}
    return {
        "status": "ok",
        "imitate_samples_per_s": statistics.median(i["samples_per_s"] for i, _ in pairs),
        "amp_samples_per_s": statistics.median(a["samples_per_s"] for _, a in pairs),
        "amp_over_imitate": statistics.median(a["samples_per_s"] / i["samples_per_s"] for i, a in pairs),
        "amp_over_imitate_per_floor": statistics.median(per_floor(a) / per_floor(i) for i, a in pairs),
        # seconds per iteration of the update (the policy step, and AMP's discriminator steps)
        "imitate_update_seconds_per_iter": statistics.median(update_per_iter(i) for i, _ in pairs),
        "amp_update_seconds_per_iter": statistics.median(update_per_iter(a) for _, a in pairs),
        "rounds": len(pairs),
    }


def main(argv=None):
    parser = argparse.ArgumentParser(description="AMP's training samples/s against imitate's (issue 36)")
    parser.add_argument("--ranks", type=int, choices=[1, 2], default=2)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--iters", type=int, default=2, help="whole iterations timed per run")
    parser.add_argument("--recipes", default="deepmimic,fast", help="comma-separated: " + ", ".join(RECIPES))
    parser.add_argument("--json", help="write every figure to this file")
    args = parser.parse_args(argv)
    names = args.recipes.split(",")
    unknown = [n for n in names if n not in RECIPES]
    if unknown:
        parser.error(f"--recipes: unknown recipe {unknown[0]!r} (known: {', '.join(RECIPES)})")
    if args.rounds < 1 or args.iters < 1:
        parser.error("--rounds and --iters must be >= 1")

    started, load_at_start = time.time(), os.getloadavg()
    runs = {name: {"imitate": [], "amp": []} for name in names}
    for rnd in range(args.rounds):
        for name in names:
            order = ("imitate", "amp") if rnd % 2 == 0 else ("amp", "imitate")
            for scene in order:
                arg_file = RECIPES[name][0 if scene == "imitate" else 1]
                print(f"[{time.time() - started:6.0f} s] round {rnd + 1}: {name} {scene} ...", file=sys.stderr, flush=True)
                result = measure(arg_file, args.ranks, args.iters)
                runs[name][scene].append(result)
                if not throughput.ok(result):
                    print(f"  {result['status']}", file=sys.stderr, flush=True)

    summary = {name: summarise(runs[name]) for name in names}
    print(f"{'recipe':<10} {'imitate':>9} {'AMP':>9} {'AMP/imitate':>12} {'per floor':>10}  (samples/s, {args.ranks} ranks; "
          "update s/iteration)")
    for name, s in summary.items():
        if s["status"] != "ok":
            print(f"{name:<10} {s['status']}")
            continue
        print(f"{name:<10} {s['imitate_samples_per_s']:9.1f} {s['amp_samples_per_s']:9.1f} "
              f"{s['amp_over_imitate']:12.2f} {s['amp_over_imitate_per_floor']:10.2f}  target >= {TARGET}; update "
              f"{s['imitate_update_seconds_per_iter']:.2f} / {s['amp_update_seconds_per_iter']:.2f}")
    if args.json:
        write_json(args.json, {
            "meta": {"ranks": args.ranks, "rounds": args.rounds, "iters": args.iters, "seconds": time.time() - started,
                     "cpus": os.cpu_count(), "load_average_at_start": load_at_start,
                     "load_average_at_end": os.getloadavg(), "recipes": {n: RECIPES[n] for n in names}},
            "summary": summary, "runs": runs, "target": TARGET})


if __name__ == "__main__":
    main()
