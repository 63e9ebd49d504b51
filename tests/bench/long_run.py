"""Long-run soundness (issue 15): does a training run hold its memory and file descriptors?

    .venv/bin/python -m tests.bench.long_run [--iters 100] [--warmup 20] [--batch 256]
        [--int_output_iters 10] [--json FILE]

One rank trains the walk (args/train_humanoid3d_walk_args.txt, DeepMimic's PPO agent file with
its 1024-512 networks) with a small batch (BatchSize --batch, MiniBatchSize 64), a log row every
iteration, and every --int_output_iters iterations a test phase (4 episodes) and an intermediate
checkpoint, so every path that allocates or opens files runs many times. After each iteration it
samples this process's resident memory (VmRSS of /proc/self/status) and its open file descriptors
(/proc/self/fd). The first --warmup iterations (graph tracing, first checkpoint, first test phase)
are not judged. PASS when, over the --iters iterations after the warm-up, resident memory grows by
less than 5% and the descriptor count stays constant.
"""
import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if __package__ in (None, ""):
    sys.path.insert(0, str(ROOT))

from tests.bench.learning_check import write_json  # noqa: E402

ARG_FILE = ROOT / "args/train_humanoid3d_walk_args.txt"
AGENT_FILE = "data/agents/ct_agent_humanoid_ppo.txt"
MAX_RSS_GROWTH = 0.05


def resident_mib():
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS in /proc/self/status")


def open_fds():
    return len(os.listdir("/proc/self/fd"))


def measure(iters, warmup, batch, int_output_iters, out_dir, seed=1):
    """Trains warmup + iters iterations; the per-iteration series and the verdict."""
    from util.cli import configure_process_env
    configure_process_env()
    from tests.mpi_helpers import train_on_rank

    series = []
    start = time.time()

    def sample(agent):
        series.append({"iter": agent.iter, "samples": agent.total_sample_count, "rss_mib": round(resident_mib(), 2),
                       "fds": open_fds(), "wall_s": round(time.time() - start, 2)})

    overrides = {"BatchSize": batch, "MiniBatchSize": 64, "OutputIters": 1, "IntOutputIters": int_output_iters,
                 "TestEpisodes": 4}
    world = train_on_rank(out_dir, ARG_FILE, AGENT_FILE, overrides, warmup + iters, seed,
                          "--int_output_path", str(Path(out_dir) / "intermediate"), "--tensorboard", "false",
                          "--model_files", "none", on_iter=sample)
    world.shutdown()
    judged = [s for s in series if s["iter"] >= warmup]
    rss0, rss1 = judged[0]["rss_mib"], judged[-1]["rss_mib"]
    fds = [s["fds"] for s in judged]
    result = {"iters": iters, "warmup": warmup, "batch": batch, "int_output_iters": int_output_iters,
              "samples": series[-1]["samples"], "wall_s": series[-1]["wall_s"],
              "rss_start_mib": rss0, "rss_end_mib": rss1, "rss_max_mib": max(s["rss_mib"] for s in judged),
              "rss_growth": round((rss1 - rss0) / rss0, 4), "fds_min": min(fds), "fds_max": max(fds),
              "checkpoints_written": len(list(Path(out_dir, "intermediate").rglob("*.index"))),
              "series": series}
    result["pass"] = result["rss_growth"] < MAX_RSS_GROWTH and result["fds_min"] == result["fds_max"]
    return result


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iters", type=int, default=100)
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--int_output_iters", type=int, default=10)
    parser.add_argument("--json", default="")
    opts = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as out_dir:
        result = measure(opts.iters, opts.warmup, opts.batch, opts.int_output_iters, out_dir)
    print(f"{result['iters']} iterations after {result['warmup']} of warm-up, {result['samples']:,} samples, "
          f"{result['wall_s']:.0f} s; resident memory {result['rss_start_mib']:.1f} -> {result['rss_end_mib']:.1f} MiB "
          f"({result['rss_growth']:+.2%}, max {result['rss_max_mib']:.1f}); open fds {result['fds_min']}-"
          f"{result['fds_max']}; {result['checkpoints_written']} intermediate checkpoints")
    print("PASS" if result["pass"] else "FAIL")
    if opts.json:
        write_json(opts.json, result)
    return 0 if result["pass"] else 1


if __name__ == "__main__":
    sys.exit(main())
