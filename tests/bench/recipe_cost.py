"""Training samples per second of the walk's recipes against DeepMimic's (issue 35, item 3),
interleaved in one run, at the same ranks.

    .venv/bin/python -m tests.bench.recipe_cost [--ranks 1|2] [--rounds 3] [--iters 2]
        [--recipes deepmimic,fast,fast512,fast512e3] [--json FILE]

Recipes (args file, and the agent file replacing its own where named):
  deepmimic  args/train_humanoid3d_walk_args.txt (DeepMimic's: 1 epoch, momentum SGD, 1024-512)
  fast       args/train_humanoid3d_walk_fast_args.txt (5 epochs, Adam, 1024-512, 410-dim state)
  fast512    the same with data/agents/ct_agent_humanoid_ppo_fast512.txt (both trunks 512-256)
  fast512e3  the same with data/agents/ct_agent_humanoid_ppo_fast512_epochs3.txt (512-256, 3 epochs)
Each measurement is tests/bench/throughput.py's training section (c): a fresh run (seed 7) trained
to its first update and its test phase, then --iters whole iterations timed (sampling and update,
the agent file's own BatchSize), with the physics floor probe B between chunks of work; at --ranks 2
under the mpiexec that mpi_run.py uses, global samples/s. Per round every recipe runs once, the
order rotating between rounds, so the machine's load hits each.
Reported per recipe: the median samples/s, the update's seconds per iteration, and the median over
rounds of recipe / the first recipe named (raw and normalised by each run's floor; issue 35's
target for the recipe shipped: >= 0.8 against deepmimic).
Output: a table on stdout and, with --json FILE, every figure (written atomically).
"""
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if __package__ in (None, ""):
    sys.path.insert(0, str(ROOT))

from tests.bench import interleaved, throughput  # noqa: E402
from tests.bench.interleaved import per_floor, update_per_iter  # noqa: E402

RECIPES = {
    "deepmimic": ("args/train_humanoid3d_walk_args.txt", ()),
    "fast": ("args/train_humanoid3d_walk_fast_args.txt", ()),
    "fast512": ("args/train_humanoid3d_walk_fast_args.txt",
                ("--agent_files", "data/agents/ct_agent_humanoid_ppo_fast512.txt")),
    "fast512e3": ("args/train_humanoid3d_walk_fast_args.txt",
                  ("--agent_files", "data/agents/ct_agent_humanoid_ppo_fast512_epochs3.txt")),
}
TARGET = 0.8


def summarise(runs, base):
    """Per recipe: median samples/s, update s/iteration, and medians over rounds of it / base."""
    summary = {}
    for name, results in runs.items():
        pairs = [(b, r) for b, r in zip(runs[base], results) if throughput.ok(b) and throughput.ok(r)]
        if not pairs:
            summary[name] = {"status": f"failed: no round with both {name} and {base}"}
            continue
        summary[name] = {
            "status": "ok",
            "samples_per_s": statistics.median(r["samples_per_s"] for _, r in pairs),
            "update_seconds_per_iter": statistics.median(update_per_iter(r) for _, r in pairs),
            f"over_{base}": statistics.median(r["samples_per_s"] / b["samples_per_s"] for b, r in pairs),
            f"over_{base}_per_floor": statistics.median(per_floor(r) / per_floor(b) for b, r in pairs),
            "rounds": len(pairs),
        }
    return summary


def main(argv=None):
    args, names = interleaved.parse_arguments("training samples/s of the walk's recipes (issue 35)", RECIPES,
                                              "deepmimic,fast,fast512,fast512e3", argv,
                                              recipes_help="comma-separated, the first is the base of the ratios")

    rounds = interleaved.Rounds()
    runs = {name: [] for name in names}
    for rnd in range(args.rounds):
        shift = rnd % len(names)
        for name in names[shift:] + names[:shift]:
            arg_file, extra_args = RECIPES[name]
            rounds.measure(f"round {rnd + 1}: {name}", runs[name], arg_file, args, extra_args)

    base = names[0]
    summary = summarise(runs, base)
    print(f"{'recipe':<10} {'samples/s':>10} {'update s/it':>12} {'/' + base:>12} {'per floor':>10}  ({args.ranks} ranks)")
    for name, s in summary.items():
        if s["status"] != "ok":
            print(f"{name:<10} {s['status']}")
            continue
        print(f"{name:<10} {s['samples_per_s']:10.1f} {s['update_seconds_per_iter']:12.2f} "
              f"{s[f'over_{base}']:12.2f} {s[f'over_{base}_per_floor']:10.2f}")
    rounds.write(args, {n: RECIPES[n] for n in names}, summary=summary, runs=runs, target=TARGET)


if __name__ == "__main__":
    main()
