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

from tests.mpi_helpers import read_log, run_module_on_two_ranks, write_param_summary

ROOT = Path(__file__).resolve().parent.parent
ITERS = 3
AGENT_OVERRIDES = {"ActorNet": "fc_2layers_32units", "CriticNet": "fc_2layers_32units", "DiscNet": "fc_2layers_32units",
                   "BatchSize": 256, "MiniBatchSize": 64, "ReplayBufferSize": 10000, "DiscBatchSize": 64,
                   "TestEpisodes": 0, "OutputIters": 1000}


def run_rank(out_dir):
    """One rank's training run (called under mpiexec)."""
    import util.mpi_util as mpi_util
    from env.deepmimic_env import DeepMimicEnv
    from learning.rl_world import RLWorld, update_world
    from learning.tf_util import limit_tf_threads, seed_rank
    from tests.test_dribble_scene import DRIBBLE_ARGS
    from tests.toy_env import register_small_net
    from util.arg_parser import load_args

    limit_tf_threads()
    register_small_net()
    seed = seed_rank(5)
    agent_data = json.loads((ROOT / "data/agents/ct_agent_humanoid_amp_tasks_rl07.txt").read_text())
    agent_file = out_dir / "agent.txt"
    if mpi_util.is_root():
        agent_file.write_text(json.dumps({**agent_data, **AGENT_OVERRIDES}))
    mpi_util.bcast(np.zeros(1))     # the file exists before any rank reads it
    args = load_args(["--arg_file", DRIBBLE_ARGS, "--agent_files", str(agent_file),
                      "--output_path", str(out_dir), "--int_output_path", ""])
    env = DeepMimicEnv(args, seed=seed)
    world = RLWorld(env, args)
    agent = world.agents[0]
    while agent.iter < ITERS:
        update_world(world, 1 / 60)
    s_mean = mpi_util.gather(np.asarray(agent.s_norm.mean))
    write_param_summary(agent, out_dir, state_size=int(agent.get_state_size()),
                        s_norm_size=int(np.asarray(agent.s_norm.mean).size),
                        s_norm_diff=float(max(np.abs(m - s_mean[0]).max() for m in s_mean)) if s_mean else 0.0,
                        ball_mean=np.asarray(agent.s_norm.mean)[-15:].tolist())
    world.shutdown()


@pytest.mark.slow
@pytest.mark.mpi
def test_dribble_two_ranks(tmp_path):
    run_module_on_two_ranks("tests.test_dribble_mpi", tmp_path, timeout=1200)

    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["ranks"] == 2 and summary["max_param_diff"] == 0.0
    assert summary["state_size"] == summary["s_norm_size"] == 241 and summary["s_norm_diff"] == 0.0
    assert np.any(np.asarray(summary["ball_mean"]) != 0.0)     # the ball features were normalised
    header, rows = read_log(tmp_path / "agent0_log.txt")
    assert len(rows) == ITERS
    col = {name: rows[:, i] for i, name in enumerate(header)}
    for name in ("Critic_Loss", "Actor_Loss", "Disc_Loss"):
        assert np.all(np.isfinite(col[name])), (name, col[name])


if __name__ == "__main__":
    run_rank(Path(sys.argv[1]))
