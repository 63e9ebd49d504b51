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
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if __package__ in (None, ""):
    sys.path.insert(0, str(ROOT))

from tests.bench import interleaved  # noqa: E402

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
    """Each scene's median samples/s and update seconds per iteration (the policy step, and AMP's
    discriminator steps), and the medians over rounds of AMP / imitate (raw, per floor)."""
    return interleaved.pair_summary(runs, "imitate", "amp")


def main(argv=None):
    args, names = interleaved.parse_arguments("AMP's training samples/s against imitate's (issue 36)", RECIPES,
                                              "deepmimic,fast", argv)

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
    interleaved.print_pair_table(summary, "imitate", "amp", args.ranks, ("imitate", "AMP"), f"; target >= {TARGET}")
    rounds.write(args, {n: [RECIPES[n][0], RECIPES[n][1], *RECIPES[n][2]] for n in names}, summary=summary,
                 runs=runs, target=TARGET)


if __name__ == "__main__":
    main()
