"""A short GoalsAgent run on goals_point under `mpiexec -n 2`: every solver's parameters (goal
policy, action policy, inverse model) are identical on both ranks after training, and the log
has every column of the hierarchy.

    .venv/bin/python -m pytest tests/test_goals_mpi.py -m mpi     (about 2 minutes on 2 busy cores)
"""
import json
import sys
from pathlib import Path

import numpy as np
import pytest

from tests.mpi_helpers import run_module_on_two_ranks, write_param_summary

ITERS = 3


def run_rank(out_dir):
    """One rank's training run (called under mpiexec)."""
    import util.mpi_util as mpi_util
    from env.deepmimic_env import DeepMimicEnv
    from app.rollout import update_world
    from learning.rl_world import RLWorld
    from learning.tf_util import limit_tf_threads, seed_rank
    from tests.test_goals_agent import ARGS, write_agent
    from util.arg_parser import load_args

    limit_tf_threads()
    seed = seed_rank(21)
    agent_file = out_dir / "agent.txt"
    if mpi_util.is_root():
        write_agent(agent_file)
    mpi_util.bcast(np.zeros(1))     # the file exists before any rank reads it
    args = load_args(["--arg_file", ARGS, "--agent_files", str(agent_file), "--output_path", str(out_dir),
                      "--int_output_path", "", "--tensorboard", "false"])
    world = RLWorld(DeepMimicEnv(args, seed=seed), args)
    agent = world.agents[0]
    while agent.iter < ITERS:
        update_world(world, 1 / 60)
    write_param_summary(agent, out_dir, solvers=sorted(agent._solvers()))
    world.shutdown()


@pytest.mark.slow
@pytest.mark.mpi
def test_goals_two_ranks(tmp_path):
    from tests.test_goals_agent import REQUIRED_COLUMNS, read_log

    run_module_on_two_ranks("tests.test_goals_mpi", tmp_path, timeout=900)

    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["ranks"] == 2 and summary["max_param_diff"] == 0.0
    assert summary["solvers"] == ["actor", "critic", "goal_actor", "goal_critic", "inverse"]
    header, rows = read_log(tmp_path / "agent0_log.txt")
    assert len(rows) == ITERS and all(column in header for column in REQUIRED_COLUMNS)


if __name__ == "__main__":
    run_rank(Path(sys.argv[1]))
