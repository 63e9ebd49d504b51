"""AMP's training cost against imitate's (issue 36, item 5): training samples per second of the AMP
walk and of the imitate walk, interleaved in one run, at the same ranks.

    .venv/bin/python -m tests.bench.amp_cost [--ranks 1|2] [--rounds 3] [--iters 2]
        [--recipes deepmimic,fast] [--json FILE]

Recipes (each an imitate / AMP pair of args files that differ only in the scene's reward):
  deepmimic  args/train_humanoid3d_walk_args.txt      / args/train_amp_humanoid3d_walk_args.txt
  fast       args/train_humanoid3d_walk_fast_args.txt / args/train_amp_humanoid3d_walk_fast_args.txt
  shipped    args/train_humanoid3d_walk_fast_args.txt / the shipped AMP walk's: the AMP fast file with
             data/agents/ct_agent_humanoid_amp_fast_bce.txt, --ref_relative_actions true and
             --tar_obs_steps 1 2 3 (the imitate fast file's own options)
  shipped_bf16  as shipped, its discriminator in bfloat16
             (data/agents/ct_agent_humanoid_amp_fast_bce_bf16.txt: DiscComputeDtype bfloat16)
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
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if __package__ in (None, ""):
    sys.path.insert(0, str(ROOT))

from tests.bench import interleaved, throughput  # noqa: E402
from tests.bench.interleaved import per_floor, update_per_iter  # noqa: E402

# per recipe: the imitate args file, the AMP args file and the AMP run's arguments after it
RECIPES = {
    "deepmimic": ("args/train_humanoid3d_walk_args.txt", "args/train_amp_humanoid3d_walk_args.txt", ()),
    "fast": ("args/train_humanoid3d_walk_fast_args.txt", "args/train_amp_humanoid3d_walk_fast_args.txt", ()),
    "shipped": ("args/train_humanoid3d_walk_fast_args.txt", "args/train_amp_humanoid3d_walk_fast_args.txt",
                ("--agent_files", "data/agents/ct_agent_humanoid_amp_fast_bce.txt",
                 "--ref_relative_actions", "true", "--tar_obs_steps", "1", "2", "3")),
    "shipped_bf16": ("args/train_humanoid3d_walk_fast_args.txt", "args/train_amp_humanoid3d_walk_fast_args.txt",
                     ("--agent_files", "data/agents/ct_agent_humanoid_amp_fast_bce_bf16.txt",
                      "--ref_relative_actions", "true", "--tar_obs_steps", "1", "2", "3")),
}
TARGET = 0.9


def summarise(runs):
    """{scene: median samples/s}, and the medians over rounds of AMP / imitate (raw, per floor)."""
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
    interleaved.add_arguments(parser)
    parser.add_argument("--recipes", default="deepmimic,fast", help="comma-separated: " + ", ".join(RECIPES))
    args = parser.parse_args(argv)
    interleaved.check_arguments(parser, args)
    names = interleaved.recipe_names(parser, args.recipes, RECIPES)

    rounds = interleaved.Rounds()
    runs = {name: {"imitate": [], "amp": []} for name in names}
    for rnd in range(args.rounds):
        for name in names:
            for scene in ("imitate", "amp") if rnd % 2 == 0 else ("amp", "imitate"):
                imitate_file, amp_file, amp_extra = RECIPES[name]
                rounds.measure(f"round {rnd + 1}: {name} {scene}", runs[name][scene],
                               imitate_file if scene == "imitate" else amp_file, args,
                               amp_extra if scene == "amp" else ())

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
    rounds.write(args, {n: [RECIPES[n][0], RECIPES[n][1], *RECIPES[n][2]] for n in names}, summary=summary,
                 runs=runs, target=TARGET)


if __name__ == "__main__":
    main()
