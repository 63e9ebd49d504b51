"""A short AMP training run of strike_amp under `mpiexec -n 2`: the 4-entry goal (never normalised:
norm group None) feeds the policy, the losses are finite, and both ranks end with identical
parameters and the same goal normaliser.

    .venv/bin/python -m pytest tests/test_strike_mpi.py -m slow
"""
import json
import sys
from pathlib import Path

import numpy as np
import pytest

from tests.mpi_helpers import read_log, run_module_on_two_ranks, write_param_summary

ROOT = Path(__file__).resolve().parent.parent
ITERS = 2
AGENT_OVERRIDES = {"ActorNet": "fc_2layers_32units", "CriticNet": "fc_2layers_32units", "DiscNet": "fc_2layers_32units",
                   "BatchSize": 128, "MiniBatchSize": 64, "ReplayBufferSize": 10000, "DiscBatchSize": 64,
                   "TestEpisodes": 0, "OutputIters": 1000}


def run_rank(out_dir):
    """One rank's training run (called under mpiexec)."""
    import util.mpi_util as mpi_util
    from env.deepmimic_env import DeepMimicEnv
    from learning.rl_world import RLWorld, update_world
    from learning.tf_util import limit_tf_threads, seed_rank
    from tests.test_strike_scene import STRIKE_ARGS
    from tests.toy_env import register_small_net
    from util.arg_parser import load_args

    limit_tf_threads()
    register_small_net()
    seed = seed_rank(5)
    agent_data = json.loads((ROOT / "data/agents/ct_agent_humanoid_amp_task.txt").read_text())
    agent_file = out_dir / "agent.txt"
    if mpi_util.is_root():
        agent_file.write_text(json.dumps({**agent_data, **AGENT_OVERRIDES}))
    mpi_util.bcast(np.zeros(1))     # the file exists before any rank reads it
    args = load_args(["--arg_file", STRIKE_ARGS, "--agent_files", str(agent_file),
                      "--output_path", str(out_dir), "--int_output_path", ""])
    env = DeepMimicEnv(args, seed=seed)
    world = RLWorld(env, args)
    agent = world.agents[0]
    while agent.iter < ITERS:
        update_world(world, 1 / 60)
    g_mean = mpi_util.gather(np.asarray(agent.g_norm.mean))
    write_param_summary(agent, out_dir, goal_size=int(agent.get_goal_size()),
                        g_norm_diff=float(max(np.abs(m - g_mean[0]).max() for m in g_mean)) if g_mean else 0.0,
                        g_mean=np.asarray(agent.g_norm.mean).tolist(), g_std=np.asarray(agent.g_norm.std).tolist())
    world.shutdown()


@pytest.mark.slow
@pytest.mark.mpi
def test_strike_two_ranks(tmp_path):
    run_module_on_two_ranks("tests.test_strike_mpi", tmp_path, timeout=1200)

    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["ranks"] == 2 and summary["max_param_diff"] == 0.0
    assert summary["goal_size"] == 4 and summary["g_norm_diff"] == 0.0
    assert summary["g_mean"] == [0.0] * 4 and summary["g_std"] == [1.0] * 4     # norm group None: never updated
    header, rows = read_log(tmp_path / "agent0_log.txt")
    assert len(rows) == ITERS
    col = {name: rows[:, i] for i, name in enumerate(header)}
    for name in ("Critic_Loss", "Actor_Loss", "Disc_Loss"):
        assert np.all(np.isfinite(col[name])), (name, col[name])


if __name__ == "__main__":
    run_rank(Path(sys.argv[1]))
