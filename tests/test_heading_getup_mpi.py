"""A short AMP training run of the heading_amp_getup scene under `mpiexec -n 2` (its args file,
the task AMP agent with small nets and small batches).

The test launches this module as a script on 2 ranks; each rank trains its own world for ITERS
iterations, then rank 0 checks that every solver's parameters are identical on both ranks and
writes a summary. Checked: finite losses in every log row, and the goal normaliser: the first 3
goal entries normalised from samples, the getup phase fixed at offset -0.5, scale 2 (mean 0.5,
std 0.5).

    .venv/bin/python -m pytest tests/test_heading_getup_mpi.py -m slow
"""
import json
import sys
from pathlib import Path

import numpy as np
import pytest

from tests.mpi_helpers import read_log_columns, run_module_on_two_ranks, train_on_rank, write_param_summary

ROOT = Path(__file__).resolve().parent.parent
ARGS = ROOT / "args/train_amp_heading_getup_humanoid3d_locomotion_getup_args.txt"
ITERS = 3
AGENT_OVERRIDES = {"ActorNet": "fc_2layers_32units", "CriticNet": "fc_2layers_32units", "BatchSize": 256,
                   "MiniBatchSize": 64, "ReplayBufferSize": 5000, "TestEpisodes": 0, "OutputIters": 1000}
LOSSES = ("Critic_Loss", "Actor_Loss", "Disc_Loss")


def run_rank(out_dir):
    """One rank's training run (called under mpiexec)."""
    world = train_on_rank(out_dir, ARGS, "data/agents/ct_agent_humanoid_amp_task.txt", AGENT_OVERRIDES, ITERS, 5,
                          "--recover_episode_prob", "0.5")
    agent = world.agents[0]
    write_param_summary(agent, out_dir, goal_mean=agent.g_norm.mean.tolist(), goal_std=agent.g_norm.std.tolist())
    world.shutdown()


@pytest.mark.slow
@pytest.mark.mpi
def test_heading_getup_two_ranks(tmp_path):
    run_module_on_two_ranks("tests.test_heading_getup_mpi", tmp_path, timeout=1200)

    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["ranks"] == 2 and summary["max_param_diff"] == 0.0
    assert summary["samples"] >= ITERS * AGENT_OVERRIDES["BatchSize"]
    assert summary["goal_mean"][3] == 0.5 and summary["goal_std"][3] == 0.5
    assert summary["goal_std"][:3] != [1.0, 1.0, 1.0]      # normalised from the samples

    col = read_log_columns(tmp_path / "agent0_log.txt")
    assert all(len(values) == ITERS for values in col.values())
    for name in LOSSES:
        assert np.all(np.isfinite(col[name])), (name, col[name])


if __name__ == "__main__":
    run_rank(Path(sys.argv[1]))
