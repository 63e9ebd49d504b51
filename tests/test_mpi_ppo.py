"""PPO under `mpiexec -n 2`: identical parameters, summed samples, pooled normaliser statistics.

pytest runs this file under mpiexec (test_two_ranks); each rank then runs run_rank_checks().
"""
import os
import subprocess
import sys
import traceback
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent
ITERS = 4
OK = "MPI CHECKS OK"


@pytest.mark.mpi
def test_two_ranks(tmp_path):
    mpiexec = Path(sys.executable).parent / "mpiexec"
    cmd = [str(mpiexec), "-n", "2", "--oversubscribe", "--bind-to", "none"]
    if os.geteuid() == 0:
        cmd.append("--allow-run-as-root")
    env = dict(os.environ, PYTHONPATH=str(ROOT), TF_CPP_MIN_LOG_LEVEL="2", OPENBLAS_NUM_THREADS="1")
    proc = subprocess.run(cmd + [sys.executable, __file__, str(tmp_path)], env=env, cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0 and OK in proc.stdout, proc.stdout[-3000:] + proc.stderr[-3000:]


def check_normalizer_pooling(rank):
    from learning.normalizer import Normalizer
    import util.mpi_util as mpi_util
    groups = np.array([-1, 0, 0, 5, 5])
    data = np.random.RandomState(50 + rank).normal(rank, 1 + rank, (20 + 10 * rank, 5))
    norm = Normalizer(5, groups)
    norm.set_mean_std(np.full(5, 0.5), np.full(5, 2.0))
    norm.record(data)
    norm.update()
    everything = mpi_util.gather((data, norm.mean, norm.std, norm.count))
    if rank == 0:
        pooled = np.concatenate([d for d, _, _, _ in everything])
        mean, mean_sq = pooled.mean(0), np.square(pooled).mean(0)
        mean[0], mean_sq[0] = 0.5, 0.5 ** 2 + 2.0 ** 2
        mean[3:], mean_sq[3:] = pooled[:, 3:].mean(), np.square(pooled[:, 3:]).mean()
        std = np.sqrt(mean_sq - mean ** 2)
        for _, m, s, count in everything:
            assert count == len(pooled)
            np.testing.assert_allclose(m, mean, rtol=1e-12)
            np.testing.assert_allclose(s, std, rtol=1e-10)
        assert all(np.array_equal(m, everything[0][1]) for _, m, _, _ in everything)


def check_fast_rank_keeps_sampling(tmp, rank):
    """Rank 1 holds back each round, just before its share of the batch is complete, until rank 0
    (ready first) has sampled more than twice its share: rank 0 must go on sampling with the same
    policy instead of blocking in the round's first collective (if it blocked, rank 1 would wait in
    vain), and both ranks must still train the same number of rounds and end with the same
    parameters. Rank 0 reports (rounds trained, buffer size) through a file after every frame."""
    import time

    import util.mpi_util as mpi_util
    from app.rollout import update_world
    from learning.rl_world import RLWorld
    from tests.toy_env import PointMassEnv, toy_args, write_agent_file
    from util.atomic_write import write_text

    agent_file = write_agent_file(tmp / f"slow_agent{rank}.txt", BatchSize=400, TestEpisodes=0)
    world = RLWorld(PointMassEnv(seed=30 + rank), toy_args(agent_file))
    agent = world.agents[0]
    progress = tmp / "rank0_progress.txt"
    rounds = []
    train = agent._train

    def recorded_train():
        rounds.append(agent.replay_buffer.current_size())
        train()

    def rank0_has_sampled_ahead():
        if not progress.is_file():
            return False
        done, size = map(int, progress.read_text().split())
        return done == len(rounds) and size > 2 * agent.local_batch_size

    agent._train = recorded_train
    while agent.iter < 3:
        if rank == 1 and agent.replay_buffer.current_size() >= agent.local_batch_size - 20:
            deadline = time.monotonic() + 120
            while not rank0_has_sampled_ahead():
                assert time.monotonic() < deadline, "rank 0 stopped sampling while rank 1 was not ready"
                time.sleep(0.01)
        update_world(world, 1 / 60)
        if rank == 0:
            write_text(progress, f"{len(rounds)} {agent.replay_buffer.current_size()}")
    everything = mpi_util.gather((rounds, agent.actor_solver.get_flat_vars(), agent.local_batch_size))
    if rank == 0:
        (fast, actor0, local_batch), (slow, actor1, _) = everything
        assert len(fast) == len(slow), "the ranks ran different numbers of training rounds"
        assert np.array_equal(actor0, actor1), "parameters differ"
        assert all(n >= local_batch for n in fast + slow)
        assert min(fast) > 2 * local_batch, (fast, slow)


def run_rank_checks(tmp):
    import util.mpi_util as mpi_util
    from app.rollout import update_world
    from learning.rl_world import RLWorld
    from learning.solvers.mpi_solver import SolverDesyncError
    from learning.tf_util import limit_tf_threads, seed_rank
    from tests.toy_env import PointMassEnv, register_small_net, toy_args, write_agent_file

    limit_tf_threads()
    register_small_net()
    rank, size = mpi_util.rank(), mpi_util.size()
    assert size == 2
    seed_rank(7)                                    # different exploration noise per rank
    out = tmp / "out"
    agent_file = write_agent_file(tmp / f"agent{rank}.txt", BatchSize=600, TestEpisodes=4, IntOutputIters=2)
    world = RLWorld(PointMassEnv(seed=10 + rank), toy_args(agent_file, "--output_path", out))
    agent = world.agents[0]
    while agent.iter < ITERS:
        update_world(world, 1 / 60)

    state = (agent.actor_solver.get_flat_vars(), agent.critic_solver.get_flat_vars(),
             agent.s_norm.mean, agent.s_norm.std, agent.replay_buffer.total_count,
             agent.total_sample_count, agent.avg_test_return,
             agent.model.actor_mean_np([np.linspace(-1, 1, 4, dtype=np.float32)[None]]))
    states = mpi_util.gather(state)
    if rank == 0:
        (actor0, critic0, mean0, std0, _, total0, test0, snap0), (actor1, critic1, mean1, std1, _, total1, test1, snap1) = states
        assert np.array_equal(actor0, actor1) and np.array_equal(critic0, critic1), "parameters differ"
        assert np.array_equal(snap0, snap1), "numpy mirrors differ"
        assert np.array_equal(mean0, mean1) and np.array_equal(std0, std1), "normalisers differ"
        assert total0 == total1 == sum(s[4] for s in states)
        lines = (out / "agent0_log.txt").read_text().splitlines()
        header, last = lines[0].split(), lines[-1].split()
        assert len(lines) == ITERS + 1
        assert int(last[header.index("Samples")]) == total0, "logged Samples is not the sum over ranks"
        assert test0 == test1 and test0 > 0
        assert not any(f.name.startswith("agent1") for f in out.iterdir())

    check_normalizer_pooling(rank)
    check_fast_rank_keeps_sampling(tmp, rank)

    if rank == 1:    # a diverged rank is detected on every rank
        var = agent.model.critic_vars[0]
        var.assign(var + 1e-3)
    try:
        agent.critic_solver.check_synced()
        raise AssertionError("divergence not detected")
    except SolverDesyncError as err:
        assert "critic parameters differ between MPI ranks" in str(err)
    if rank == 0:
        print(OK, flush=True)


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    try:
        run_rank_checks(Path(sys.argv[1]))
    except BaseException:
        traceback.print_exc()
        sys.stdout.flush()
        from mpi4py import MPI
        MPI.COMM_WORLD.Abort(1)
