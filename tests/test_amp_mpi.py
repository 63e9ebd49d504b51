"""A short AMP training run of the humanoid (imitate_amp, walk) under `mpiexec -n 2`, with
DeepMimic's discriminator and with its successor's variant (a window of 4 states, BCE, the
gradient penalty on both inputs, replayed agent observations).

The test launches this module as a script on 2 ranks; each rank trains the same world for
ITERS iterations, then rank 0 checks that every solver's parameters are identical on both ranks
and writes a summary. Checked: the log has every AMP column, the discriminator separates expert
from agent observations (both accuracies above 0.5 and higher at the end than at the start).

    .venv/bin/python -m pytest tests/test_amp_mpi.py -m slow
"""
import json
import sys
from pathlib import Path

import numpy as np
import pytest

from tests.mpi_helpers import read_log, run_module_on_two_ranks, train_on_rank, write_param_summary

ROOT = Path(__file__).resolve().parent.parent
ITERS = 8
AMP_COLUMNS = ["Disc_Loss", "Disc_Acc_Expert", "Disc_Acc_Agent", "Disc_Stepsize", "Disc_Steps", "Disc_Prob",
               "Disc_Abs_Logit", "Disc_Reward_Mean", "Disc_Reward_Std", "Grad_Penalty"]
# the humanoid agent file with small policy nets, a 512-sample batch and a faster discriminator
AGENT_OVERRIDES = {"ActorNet": "fc_2layers_32units", "CriticNet": "fc_2layers_32units", "BatchSize": 512,
                   "MiniBatchSize": 128, "ReplayBufferSize": 20000, "DiscStepSize": 0.001,
                   "TestEpisodes": 0, "OutputIters": 1000}
VARIANTS = {"deepmimic": {},
            "window4_bce": {"DiscObsSteps": 4, "DiscLoss": "bce", "DiscGradPenaltyInputs": "both",
                            "DiscReplaySamples": 64}}


def run_rank(out_dir, variant):
    """One rank's training run (called under mpiexec)."""
    from tests.test_amp_scene import WALK_ARGS

    world = train_on_rank(out_dir, WALK_ARGS, "data/agents/ct_agent_humanoid_amp.txt",
                          {**AGENT_OVERRIDES, **VARIANTS[variant]}, ITERS, 11)
    write_param_summary(world.agents[0], out_dir, amp_obs_size=int(world.agents[0].get_amp_obs_size()))
    world.shutdown()


@pytest.mark.slow
@pytest.mark.mpi
@pytest.mark.parametrize("variant", VARIANTS)
def test_amp_humanoid_two_ranks(tmp_path, variant):
    run_module_on_two_ranks("tests.test_amp_mpi", tmp_path, variant, timeout=1200)

    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["ranks"] == 2 and summary["max_param_diff"] == 0.0
    assert summary["amp_obs_size"] == VARIANTS[variant].get("DiscObsSteps", 2) * 113

    header, rows = read_log(tmp_path / "agent0_log.txt")
    assert header[-len(AMP_COLUMNS):] == AMP_COLUMNS and len(rows) == ITERS
    col = {name: rows[:, i] for i, name in enumerate(header)}
    for name in ("Disc_Acc_Expert", "Disc_Acc_Agent"):
        first, last = col[name][:2].mean(), col[name][-2:].mean()
        assert last > 0.5 and last > first, (name, col[name])
    assert np.all(np.diff(col["Disc_Steps"]) > 0)


if __name__ == "__main__":
    run_rank(Path(sys.argv[1]), sys.argv[2])
