"""Short dog3d training runs (imitate PPO on the trot, AMP on the trot) under `mpiexec -n 2`.

The test launches this module as a script on 2 ranks; each rank trains ITERS iterations with small
nets, then rank 0 checks that the parameters are identical on both ranks and writes a summary.
Checked: every logged number is finite, the parameters agree exactly, both ranks sampled.

    .venv/bin/python -m pytest tests/test_dog3d_mpi.py -m slow
"""
import json
import sys
from pathlib import Path

import numpy as np
import pytest

from tests.mpi_helpers import read_log, run_module_on_two_ranks, train_on_rank, write_param_summary

ROOT = Path(__file__).resolve().parent.parent
ITERS = 2
RUNS = {"imitate": ("args/train_dog3d_trot_args.txt", "data/agents/ct_agent_dog_ppo.txt"),
        "amp": ("args/train_amp_dog3d_trot_args.txt", "data/agents/ct_agent_dog_amp.txt")}
OVERRIDES = {"ActorNet": "fc_2layers_32units", "CriticNet": "fc_2layers_32units", "BatchSize": 256,
             "MiniBatchSize": 64, "TestEpisodes": 0, "OutputIters": 1000}
AMP_OVERRIDES = {"ReplayBufferSize": 10000}


def run_rank(out_dir, run):
    """One rank's training run (called under mpiexec)."""
    args_file, agent_file = RUNS[run]
    overrides = {**OVERRIDES, **(AMP_OVERRIDES if run == "amp" else {})}
    world = train_on_rank(out_dir, args_file, agent_file, overrides, ITERS, 5)
    write_param_summary(world.agents[0], out_dir)
    world.shutdown()


@pytest.mark.slow
@pytest.mark.mpi
@pytest.mark.parametrize("run", RUNS)
def test_dog3d_two_ranks(tmp_path, run):
    run_module_on_two_ranks("tests.test_dog3d_mpi", tmp_path, run, timeout=1200)
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["ranks"] == 2 and summary["max_param_diff"] == 0.0
    assert summary["samples"] >= ITERS * 256
    header, rows = read_log(tmp_path / "agent0_log.txt")
    assert len(rows) == ITERS and np.all(np.isfinite(rows))
    assert "Critic_Loss" in header and "Actor_Loss" in header


if __name__ == "__main__":
    run_rank(Path(sys.argv[1]), sys.argv[2])
