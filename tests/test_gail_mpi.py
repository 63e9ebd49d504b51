"""Short GAIL runs under `mpiexec -n 2`, with the PPO and with the TRPO step: on the toy point mass
(fast, in `make test`) and on the humanoid's walk from the shipped demonstrations (marked slow).

The test launches this module as a script on 2 ranks; each rank trains the same world for ITERS
iterations, then rank 0 checks that every solver's parameters (actor, critic, discriminator) are
identical on both ranks and writes a summary. Checked: the discriminator separates expert from
agent samples (the mean of its two accuracies rises above chance and above its start), and under
TRPO every step's KL is within the bound.

    .venv/bin/python -m pytest tests/test_gail_mpi.py            # toy, both steps
    .venv/bin/python -m pytest tests/test_gail_mpi.py -m slow    # humanoid, both steps
"""
import json
import sys
from pathlib import Path

import numpy as np
import pytest

from tests.mpi_helpers import read_log, run_module_on_two_ranks, write_param_summary

ROOT = Path(__file__).resolve().parent.parent
ITERS = {"toy": 5, "humanoid": 6}
TRPO = {"PolicyStep": "TRPO", "ExpParamsEnd": {"Rate": 1, "Noise": 0.2}}   # the agent file's Noise (it does not anneal)
HUMANOID_OVERRIDES = {"ActorNet": "fc_2layers_32units", "CriticNet": "fc_2layers_32units", "BatchSize": 512,
                      "MiniBatchSize": 128, "ReplayBufferSize": 20000, "TestEpisodes": 0, "OutputIters": 1000,
                      "DiscStepsPerIter": 5}


def run_rank(out_dir, scene, step):
    """One rank's training run (called under mpiexec)."""
    import util.mpi_util as mpi_util
    from app.rollout import update_world
    from learning.rl_world import RLWorld
    from learning.tf_util import limit_tf_threads, seed_rank
    from tests.toy_env import PointMassEnv, register_small_net, toy_args

    limit_tf_threads()
    register_small_net()
    seed = seed_rank(13)
    agent_file = out_dir / "agent.txt"
    if scene == "toy":
        from tests.gail_toy import TRPO_KEYS, record_toy_demos, write_gail_agent_file
        demo_file = out_dir / "toy_demos.npz"
        if mpi_util.is_root():
            record_toy_demos(demo_file)
            write_gail_agent_file(agent_file, OutputIters=1000, **(TRPO_KEYS if step == "TRPO" else {}))
        mpi_util.bcast(np.zeros(1))     # the files exist before any rank reads them
        world = RLWorld(PointMassEnv(seed=seed), toy_args(agent_file, "--demo_file", demo_file,
                                                          "--output_path", out_dir))
    else:
        from env.deepmimic_env import DeepMimicEnv
        from util.arg_parser import load_args
        arg_file = ROOT / "args/train_gail_humanoid3d_walk_args.txt"
        if mpi_util.is_root():
            data = json.loads((ROOT / "data/agents/ct_agent_humanoid_gail.txt").read_text())
            agent_file.write_text(json.dumps({**data, **HUMANOID_OVERRIDES, **(TRPO if step == "TRPO" else {})}))
        mpi_util.bcast(np.zeros(1))
        args = load_args(["--arg_file", str(arg_file), "--agent_files", str(agent_file),
                          "--output_path", str(out_dir), "--int_output_path", ""])
        world = RLWorld(DeepMimicEnv(args, seed=seed), args)
    agent = world.agents[0]
    while agent.iter < ITERS[scene]:
        update_world(world, 1 / 60)
    write_param_summary(agent, out_dir)
    world.shutdown()


def run_two_ranks(tmp_path, scene, step):
    run_module_on_two_ranks("tests.test_gail_mpi", tmp_path, scene, step)

    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["ranks"] == 2 and summary["max_param_diff"] == 0.0, summary
    header, rows = read_log(tmp_path / "agent0_log.txt")
    assert len(rows) == ITERS[scene]
    col = {name: rows[:, i] for i, name in enumerate(header)}
    accuracy = 0.5 * (col["Disc_Acc_Expert"] + col["Disc_Acc_Agent"])
    assert accuracy[-2:].mean() > 0.55 and accuracy[-2:].mean() > accuracy[0], accuracy
    if step == "TRPO":
        assert np.all(col["KL"] <= 0.02 + 1e-9) and np.any(col["KL"] > 0), col["KL"]
    return summary, col


@pytest.mark.mpi
@pytest.mark.parametrize("step", ["PPO", "TRPO"])
def test_gail_toy_two_ranks(tmp_path, step):
    run_two_ranks(tmp_path, "toy", step)


@pytest.mark.slow
@pytest.mark.mpi
@pytest.mark.parametrize("step", ["PPO", "TRPO"])
def test_gail_humanoid_two_ranks(tmp_path, step):
    run_two_ranks(tmp_path, "humanoid", step)


if __name__ == "__main__":
    run_rank(Path(sys.argv[1]), sys.argv[2], sys.argv[3])
