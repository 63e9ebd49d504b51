"""Shared by the tests that train under `mpiexec -n 2`: the launch (from pytest) and, on the
ranks, the summary of the parameters every solver holds."""
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

from mpi_run import MPI_WAIT_ENV

ROOT = Path(__file__).resolve().parent.parent


def run_module_on_two_ranks(module, *args, timeout=1800):
    """`python -m module args...` on 2 ranks with the project's mpiexec; fails the test with the
    output's tail when a rank fails."""
    mpiexec = Path(sys.executable).parent / "mpiexec"
    cmd = [str(mpiexec), "-n", "2", "--oversubscribe", "--bind-to", "none"]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        cmd.append("--allow-run-as-root")
    env = {**MPI_WAIT_ENV, **os.environ, "PYTHONPATH": str(ROOT), "TF_CPP_MIN_LOG_LEVEL": "2",
           "OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}
    result = subprocess.run(cmd + [sys.executable, "-m", module, *map(str, args)], cwd=ROOT, env=env,
                            capture_output=True, text=True, timeout=timeout)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return result


def write_param_summary(agent, out_dir, **extra):
    """On every rank: gathers the solvers' flat parameters; rank 0 writes out_dir/summary.json
    (ranks, parameter count, largest difference between ranks, samples, extra)."""
    import util.mpi_util as mpi_util

    params = np.concatenate([s.get_flat_vars() for s in agent._solvers().values()])
    gathered = mpi_util.gather(params)
    if mpi_util.is_root():
        summary = {"ranks": len(gathered), "num_params": int(params.size),
                   "max_param_diff": float(max(np.abs(g - gathered[0]).max() for g in gathered)),
                   "samples": agent.total_sample_count, **extra}
        (Path(out_dir) / "summary.json").write_text(json.dumps(summary))


def read_log(path):
    """(column names, rows) of an agent log."""
    lines = Path(path).read_text().splitlines()
    return lines[0].split(), np.array([list(map(float, line.split())) for line in lines[1:]])


def train_on_rank(out_dir, arg_file, agent_file, overrides, iters, seed, *extra_args, on_iter=None):
    """On every rank: the scene of arg_file with the agent file plus overrides (small nets are
    registered; rank 0 writes the merged agent file), trained for `iters` iterations, calling
    on_iter(agent) after each one. Returns the world (the caller shuts it down)."""
    import util.mpi_util as mpi_util
    from env.deepmimic_env import DeepMimicEnv
    from app.rollout import update_world
    from learning.rl_world import RLWorld
    from learning.tf_util import limit_tf_threads, seed_rank
    from tests.toy_env import register_small_net
    from util.arg_parser import load_args

    limit_tf_threads()
    register_small_net()
    seed = seed_rank(seed)
    merged_agent_file = Path(out_dir) / "agent.txt"
    if mpi_util.is_root():
        agent_data = json.loads((ROOT / agent_file).read_text())
        merged_agent_file.write_text(json.dumps({**agent_data, **overrides}))
    mpi_util.bcast(np.zeros(1))     # the file exists before any rank reads it
    args = load_args([*map(str, extra_args), "--arg_file", str(arg_file), "--agent_files", str(merged_agent_file),
                      "--output_path", str(out_dir), "--int_output_path", ""])   # extra_args come first: they win
    world = RLWorld(DeepMimicEnv(args, seed=seed), args)
    agent = world.agents[0]
    while agent.iter < iters:
        last_iter = agent.iter
        update_world(world, 1 / 60)
        if on_iter is not None and agent.iter != last_iter:
            on_iter(agent)
    return world


def rank_spread(values):
    """The largest difference of `values` between any rank and rank 0 (on rank 0; 0 elsewhere)."""
    import util.mpi_util as mpi_util

    gathered = mpi_util.gather(np.asarray(values))
    return float(max(np.abs(g - gathered[0]).max() for g in gathered)) if gathered else 0.0


def read_log_columns(path):
    """{column: values} of an agent log."""
    header, rows = read_log(path)
    return {name: rows[:, i] for i, name in enumerate(header)}
