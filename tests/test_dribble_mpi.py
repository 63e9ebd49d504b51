"""A short AMP training run of dribble_amp under `mpiexec -n 2`: the state with the 15 ball
features (241) feeds the policy and its normaliser, the losses are finite, and both ranks end with
identical parameters and the same state normaliser.

    .venv/bin/python -m pytest tests/test_dribble_mpi.py -m slow
"""
import json
import sys
from pathlib import Path

import numpy as np
import pytest

from tests.mpi_helpers import rank_spread, read_log_columns, run_module_on_two_ranks, train_on_rank, write_param_summary

ROOT = Path(__file__).resolve().parent.parent
ITERS = 3
AGENT_OVERRIDES = {"ActorNet": "fc_2layers_32units", "CriticNet": "fc_2layers_32units", "DiscNet": "fc_2layers_32units",
                   "BatchSize": 256, "MiniBatchSize": 64, "ReplayBufferSize": 10000, "DiscBatchSize": 64,
                   "TestEpisodes": 0, "OutputIters": 1000}


def run_rank(out_dir):
    """One rank's training run (called under mpiexec)."""
    from tests.test_dribble_scene import DRIBBLE_ARGS

    world = train_on_rank(out_dir, DRIBBLE_ARGS, "data/agents/ct_agent_humanoid_amp_tasks_rl07.txt", AGENT_OVERRIDES,
                          ITERS, 5)
    agent = world.agents[0]
    s_mean = np.asarray(agent.s_norm.mean)
    write_param_summary(agent, out_dir, state_size=int(agent.get_state_size()), s_norm_size=int(s_mean.size),
                        s_norm_diff=rank_spread(s_mean), ball_mean=s_mean[-15:].tolist())
    world.shutdown()


@pytest.mark.slow
@pytest.mark.mpi
def test_dribble_two_ranks(tmp_path):
    run_module_on_two_ranks("tests.test_dribble_mpi", tmp_path, timeout=1200)

    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["ranks"] == 2 and summary["max_param_diff"] == 0.0
    assert summary["state_size"] == summary["s_norm_size"] == 241 and summary["s_norm_diff"] == 0.0
    assert np.any(np.asarray(summary["ball_mean"]) != 0.0)     # the ball features were normalised
    col = read_log_columns(tmp_path / "agent0_log.txt")
    assert all(len(values) == ITERS for values in col.values())
    for name in ("Critic_Loss", "Actor_Loss", "Disc_Loss"):
        assert np.all(np.isfinite(col[name])), (name, col[name])


if __name__ == "__main__":
    run_rank(Path(sys.argv[1]))
