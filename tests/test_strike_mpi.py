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

from tests.mpi_helpers import rank_spread, read_log_columns, run_module_on_two_ranks, train_on_rank, write_param_summary

ROOT = Path(__file__).resolve().parent.parent
ITERS = 2
AGENT_OVERRIDES = {"ActorNet": "fc_2layers_32units", "CriticNet": "fc_2layers_32units", "DiscNet": "fc_2layers_32units",
                   "BatchSize": 128, "MiniBatchSize": 64, "ReplayBufferSize": 10000, "DiscBatchSize": 64,
                   "TestEpisodes": 0, "OutputIters": 1000}


def run_rank(out_dir):
    """One rank's training run (called under mpiexec)."""
    from tests.test_strike_scene import STRIKE_ARGS

    world = train_on_rank(out_dir, STRIKE_ARGS, "data/agents/ct_agent_humanoid_amp_task.txt", AGENT_OVERRIDES,
                          ITERS, 5)
    agent = world.agents[0]
    write_param_summary(agent, out_dir, goal_size=int(agent.get_goal_size()), g_norm_diff=rank_spread(agent.g_norm.mean),
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
    col = read_log_columns(tmp_path / "agent0_log.txt")
    assert all(len(values) == ITERS for values in col.values())
    for name in ("Critic_Loss", "Actor_Loss", "Disc_Loss"):
        assert np.all(np.isfinite(col[name])), (name, col[name])


if __name__ == "__main__":
    run_rank(Path(sys.argv[1]))
