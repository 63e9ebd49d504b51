"""Training samples per second with TensorFlow's oneDNN kernels off and on (TF_ENABLE_ONEDNN_OPTS
0 / 1 in every rank's environment), interleaved in one run, at the same ranks.

    .venv/bin/python -m tests.bench.onednn [--ranks 1|2] [--rounds 3] [--iters 2]
        [--recipes deepmimic,fast,amp_bf16] [--json FILE]

Recipes (args file, and the arguments after it):
  deepmimic  args/train_humanoid3d_walk_args.txt (DeepMimic's PPO: 1 epoch, momentum SGD)
  fast       args/train_humanoid3d_walk_fast_args.txt (5 epochs, Adam, 410-dim state)
  amp        the shipped AMP walk's recipe (tests/bench/amp_cost.py's `shipped`)
  amp_bf16   the same, its discriminator in bfloat16 (amp_cost.py's `shipped_bf16`)
Each measurement is tests/bench/throughput.py's training section (c): a fresh run (seed 7) trained
to its first update and its test phase, then --iters whole iterations timed (sampling and update),
with the physics floor probe B between chunks of work; at --ranks 2 under the mpiexec that
mpi_run.py uses, global samples/s. The setting reaches the ranks through the environment (the
entry points keep a value set there; unset, TensorFlow's default is on). Per round each recipe runs
off then on, the order reversed in even rounds, so the machine's load hits both.
Reported per recipe: the median samples/s and update seconds per iteration of each setting, and the
median over rounds of on / off (raw and normalised by each run's floor).
Output: a table on stdout and, with --json FILE, every figure (written atomically).
"""
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if __package__ in (None, ""):
    sys.path.insert(0, str(ROOT))

from tests.bench import amp_cost, interleaved  # noqa: E402

ENV_KEY = "TF_ENABLE_ONEDNN_OPTS"
SETTINGS = {"off": "0", "on": "1"}
RECIPES = {
    "deepmimic": ("args/train_humanoid3d_walk_args.txt", ()),
    "fast": ("args/train_humanoid3d_walk_fast_args.txt", ()),
    "amp": amp_cost.RECIPES["shipped"][1:],
    "amp_bf16": amp_cost.RECIPES["shipped_bf16"][1:],
}


def summarise(runs):
    return interleaved.pair_summary(runs, "off", "on")


def main(argv=None):
    args, names = interleaved.parse_arguments("training samples/s with oneDNN off and on", RECIPES,
                                              "deepmimic,fast,amp_bf16", argv)

    before = os.environ.get(ENV_KEY)
    rounds = interleaved.Rounds()
    runs = {name: {setting: [] for setting in SETTINGS} for name in names}
    try:
        for rnd in range(args.rounds):
            for name in names:
                for setting in SETTINGS if rnd % 2 == 0 else reversed(SETTINGS):
                    os.environ[ENV_KEY] = SETTINGS[setting]
                    arg_file, extra = RECIPES[name]
                    rounds.measure(f"round {rnd + 1}: {name} oneDNN {setting}", runs[name][setting], arg_file,
                                   args, extra)
    finally:
        if before is None:
            os.environ.pop(ENV_KEY, None)
        else:
            os.environ[ENV_KEY] = before

    summary = {name: summarise(runs[name]) for name in names}
    interleaved.print_pair_table(summary, "off", "on", args.ranks, ("off", "on"))
    rounds.write(args, {n: [RECIPES[n][0], *RECIPES[n][1]] for n in names}, summary=summary, runs=runs)


if __name__ == "__main__":
    main()
