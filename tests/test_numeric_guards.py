"""Numeric guards: a non-finite gradient is never applied (skipped with a warning; repeated, the
run stops with one line), a non-finite normaliser update is refused, and the ranks' parameter
fingerprints are compared every SyncCheckIters iterations (the MPI case is in test_mpi_ppo.py)."""
import numpy as np
import pytest
import tensorflow as tf

from DeepMimic_Optimizer import train
from learning import checkpoint
from learning.normalizer import Normalizer
from learning.rl_world import RLWorld
from learning.solvers.mpi_solver import MPISolver, NonFiniteUpdateError
from learning.tf_util import limit_tf_threads
from tests.toy_env import PointMassEnv, register_small_net, toy_args, write_agent_file
from util.cli import run_main

limit_tf_threads()
register_small_net()


def test_solver_skips_non_finite_gradients_then_stops(capsys):
    var = tf.Variable([1.0, 2.0])
    solver = MPISolver("actor", [var], stepsize=0.1, momentum=0.0)
    solver.update([np.array([1.0, 1.0])])
    np.testing.assert_allclose(var.numpy(), [0.9, 1.9])
    for k in range(1, MPISolver.MAX_NONFINITE_SKIPS):
        solver.update([np.array([np.nan, 1.0])])
        assert solver.nonfinite_skips == k and solver.iter == 1
        np.testing.assert_allclose(var.numpy(), [0.9, 1.9])     # nothing applied, not even the finite part
    assert "actor: non-finite gradient, update skipped (4 in a row)" in capsys.readouterr().out
    solver.update([np.array([0.0, 0.0])])                        # a finite update resets the count
    assert solver.nonfinite_skips == 0
    for _ in range(MPISolver.MAX_NONFINITE_SKIPS - 1):
        solver.update([np.array([np.inf, 0.0])])
    with pytest.raises(NonFiniteUpdateError, match="actor: non-finite gradients in 5 updates in a row"):
        solver.update([np.array([np.inf, 0.0])])
    assert np.isfinite(var.numpy()).all()


class NaNRewardEnv(PointMassEnv):
    def calc_reward(self, agent_id=0):
        return float("nan")


def test_nan_rewards_stop_the_run_with_one_line(tmp_path, capsys):
    """Paths with NaN rewards are discarded (never trained on): a warning every 10, the run stops
    at 100 in a row instead of sampling forever."""
    agent_file = write_agent_file(tmp_path / "agent.txt", OutputIters=1, TestEpisodes=0)
    world = RLWorld(NaNRewardEnv(), toy_args(agent_file))
    status = run_main(lambda: train(world, max_iters=50), "DeepMimic_Optimizer.py")
    captured = capsys.readouterr()
    assert status == 1 and world.agents[0].iter == 0
    assert captured.err.splitlines() == ["DeepMimic_Optimizer.py: error: rank 0: agent 0: 100 paths in a row with "
                                         "non-finite states, actions or rewards: the env gives NaN or infinite "
                                         "values; the run stops"]
    assert captured.out.count("(discarded)") == 9


def test_nan_gradients_never_reach_a_checkpoint(tmp_path, capsys):
    """NaN actions in the batches after one good iteration make the actor's gradients NaN: the
    updates are skipped, the run stops with one line, and the checkpoint on disk holds only finite
    values."""
    out = tmp_path / "out"
    agent_file = write_agent_file(tmp_path / "agent.txt", OutputIters=1, TestEpisodes=0)
    world = RLWorld(PointMassEnv(), toy_args(agent_file, "--output_path", out))
    train(world, max_iters=1)
    agent = world.agents[0]
    prepare_batch = agent._prepare_batch

    def nan_actions_batch():
        batch = prepare_batch()
        return batch._replace(norm_actions=np.full_like(batch.norm_actions, np.nan))
    agent._prepare_batch = nan_actions_batch
    status = run_main(lambda: train(world, max_iters=50), "DeepMimic_Optimizer.py")
    assert status == 1
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1 and "actor: non-finite gradients in 5 updates in a row" in lines[0]
    saved = checkpoint.read_checkpoint(out / "agent0_model.ckpt")
    assert all(np.isfinite(v).all() for v in saved.values() if v.dtype.kind == "f")


def test_non_finite_normaliser_update_is_refused(capsys):
    norm = Normalizer(2)
    norm.record(np.array([[1.0, 2.0], [3.0, 4.0]]))
    norm.update()
    mean, std = norm.mean.copy(), norm.std.copy()
    norm.record(np.array([[np.nan, 0.0]]))
    norm.update()
    np.testing.assert_array_equal(norm.mean, mean)
    np.testing.assert_array_equal(norm.std, std)
    assert "normaliser update refused" in capsys.readouterr().out


def test_sync_check_iters_key(tmp_path):
    agent_file = write_agent_file(tmp_path / "agent.txt", SyncCheckIters=2, TestEpisodes=0)
    world = RLWorld(PointMassEnv(), toy_args(agent_file))
    agent = world.agents[0]
    checks = []
    agent._check_synced = lambda: checks.append(agent.iter)
    train(world, max_iters=5)
    assert checks == [2, 4]
