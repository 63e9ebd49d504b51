"""Training entry point, one MPI rank: build the env and world, then update_world(world, 1/60)
until every training agent reaches --max_samples samples or --max_iters iterations.

    python DeepMimic_Optimizer.py --arg_file args/train_humanoid3d_walk_args.txt [--max_samples N]
        [--max_iters N] [--resume true]

Rank 0 holds output_path/train.lock while it runs (a second run on the folder stops with one line
naming the PID: util/output_lock.py), copies the resolved arguments (output_path/args.txt) and the
agent files into output_path, prints a progress line per iteration, and writes the final
checkpoint and resume state when the run stops. SIGINT (Ctrl-C) or SIGTERM stops it after the
current iteration with that checkpoint (exit status 130 / 143; util/stop_request.py). Use
mpi_run.py --num_workers N for several ranks.
"""
import os
import sys
import tempfile
import time

from util.cli import configure_process_env, run_main

configure_process_env()  # before numpy and TensorFlow are imported

import util.mpi_util as mpi_util  # noqa: E402
from app.build import build_world  # noqa: E402
from app.rollout import WorldEvent, update_world  # noqa: E402
from env.env import FRAME_TIME  # noqa: E402
from util.arg_parser import load_args  # noqa: E402
from util.atomic_write import write_text  # noqa: E402
from util.entry_keys import warn_unused_args  # noqa: E402
from util.logger import Logger  # noqa: E402
from util.output_lock import lock_output_path  # noqa: E402
from util.paths import resolve_data_path  # noqa: E402
from util.stop_request import StopRequest, exit_status  # noqa: E402

INVALID_WARNING_EVERY = 100    # consecutive invalid episodes between warnings


def check_output_paths(arg_parser):
    """--output_path and --int_output_path (when set) are directories this rank can write; a
    ValueError naming the key, the path and the problem otherwise (before any training)."""
    for key in ("output_path", "int_output_path"):
        path = arg_parser.parse_string(key, "")
        if not path:
            continue
        if os.path.exists(path) and not os.path.isdir(path):
            raise ValueError(f"--{key} {path}: exists and is not a directory")
        try:
            os.makedirs(path, exist_ok=True)
            with tempfile.TemporaryFile(dir=path):
                pass
        except OSError as err:
            raise ValueError(f"--{key} {path}: cannot write there ({err.strerror})") from None


def copy_run_inputs(arg_parser, output_path):
    """output_path/args.txt (the resolved arguments) and copies of the agent files (rank 0)."""
    if not (output_path and mpi_util.is_root()):
        return
    os.makedirs(output_path, exist_ok=True)
    files = {"args.txt": "\n".join(arg_parser.to_lines()) + "\n"}
    for agent_file in arg_parser.parse_strings("agent_files"):
        if agent_file != "none":
            src = resolve_data_path(agent_file)
            files[os.path.basename(src)] = src.read_text()
    for name, text in files.items():
        write_text(os.path.join(output_path, name), text)


def progress_line(agent, start, now, max_samples=float("inf"), max_iters=float("inf")):
    """The iteration's line: samples, rate, returns; in imitation scenes the last test phase's
    fall rate and body position error (m in the log, cm here), in AMP scenes its fall rate, style
    error (cm) and root speed; with a budget, percent done and the
    time left at this run's rate. start: (samples, iteration, time) when this run began."""
    start_samples, start_iter, start_time = start
    row = agent.logger.last_row
    elapsed = max(now - start_time, 1e-9)
    rate = (agent.total_sample_count - start_samples) / elapsed
    line = (f"agent {agent.id} iter {agent.iter:6d} | samples {agent.total_sample_count:>11,} | "
            f"{rate:7.1f} samples/s | train return {row.get('Train_Return', 0.0):9.3f} | "
            f"test return {row.get('Test_Return', 0.0):9.3f}")
    if "Test_Body_Pos_Err" in row:    # imitation scenes: how far the last test phase was from the clip
        line += (f" | test falls {row['Test_Fall_Rate']:4.0%}, body pos "
                 f"{100 * row['Test_Body_Pos_Err']:5.1f} cm")
    elif "Test_Style_Err" in row:     # AMP scenes: how far its poses were from the motion data's
        line += (f" | test falls {row['Test_Fall_Rate']:4.0%}, style "
                 f"{100 * row['Test_Style_Err']:5.1f} cm, speed {row['Test_Root_Speed']:4.2f} m/s")
    left = []     # (fraction done, seconds left) per finite budget
    if max_samples < float("inf") and rate > 0:
        left.append((agent.total_sample_count / max_samples, (max_samples - agent.total_sample_count) / rate))
    iters_done = agent.iter - start_iter
    if max_iters < float("inf") and iters_done > 0:
        left.append((agent.iter / max_iters, (max_iters - agent.iter) * elapsed / iters_done))
    if left:
        done, seconds = max(left)          # the budget that ends the run first
        line += f" | {min(done, 1.0):6.1%} done, {format_duration(max(seconds, 0.0))} left"
    return line


def format_duration(seconds):
    minutes, secs = divmod(int(round(seconds)), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m" if hours else f"{minutes}m{secs:02d}s"


def train(world, max_samples=float("inf"), max_iters=float("inf"), stop=None):
    """Runs the world until every training agent reaches max_samples or max_iters (both global
    counts, so every rank stops after the same training round) or, with a StopRequest, until a
    rank is signalled (checked after every iteration). Writes the final checkpoints and resume
    states; returns the agreed signal number (0: the budget ended the run)."""
    agents = [a for a in world.agents if a is not None and a.enable_training]
    if not agents:
        raise ValueError("no agent to train (train_agents false, or every agent file is none)")
    start_time = time.time()
    start = {a.id: (a.total_sample_count, a.iter, start_time) for a in agents}
    last_iter = {a.id: a.iter for a in agents}
    invalid_run = 0
    signum = 0
    while not (signum or all(a.total_sample_count >= max_samples for a in agents)
               or all(a.iter >= max_iters for a in agents)):
        event = update_world(world, FRAME_TIME)
        if event != WorldEvent.NONE:
            invalid_run = invalid_run + 1 if event == WorldEvent.INVALID_EPISODE else 0
            if invalid_run and invalid_run % INVALID_WARNING_EVERY == 0:
                print(f"rank {mpi_util.rank()}: {invalid_run} invalid episodes in a row (exploding "
                      "velocities; their samples are discarded): check the policy's action scale", flush=True)
        for a in agents:
            if a.iter != last_iter[a.id]:
                last_iter[a.id] = a.iter
                Logger.print(progress_line(a, start[a.id], time.time(), max_samples, max_iters))
                if stop is not None:
                    signum = signum or stop.agreed()
    world.save_outputs()
    return signum


def main(argv=None):
    arg_parser = load_args(sys.argv[1:] if argv is None else argv)
    Logger.print(f"DeepMimic optimizer: {mpi_util.size()} worker(s)")
    output_path = arg_parser.parse_string("output_path")
    if mpi_util.is_root():
        check_output_paths(arg_parser)
        if output_path:
            lock_output_path(output_path)     # before a resume reads the folder
    world = build_world(arg_parser, enable_draw=False)
    warn_unused_args(arg_parser)
    copy_run_inputs(arg_parser, output_path)
    stop = StopRequest()
    stop.install()
    try:
        signum = train(world, arg_parser.parse_float("max_samples", float("inf")),
                       arg_parser.parse_float("max_iters", float("inf")), stop)
    finally:
        world.shutdown()
    if signum:
        Logger.print(f"stopped by a signal after iteration {max(a.iter for a in world.agents if a is not None)}; "
                     "--resume true continues from the next one")
    return exit_status(signum) if signum else 0


if __name__ == "__main__":
    sys.exit(run_main(main, "DeepMimic_Optimizer.py"))
