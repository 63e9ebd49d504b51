"""Stopping on signals (util/stop_request.py): after the current iteration, with a final
checkpoint and resume state, exit status 130 / 143; the resume continues from the next iteration.
The drills through real processes (single process and mpi_run with 2 ranks) are slow tests."""
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from DeepMimic_Optimizer import train
from learning.rl_world import RLWorld
from learning.tf_util import limit_tf_threads
from tests.test_learning_entry_points import SMOKE_AGENT
from tests.toy_env import PointMassEnv, register_small_net, toy_args, write_agent_file
from util.stop_request import StopRequest, exit_status

limit_tf_threads()
register_small_net()
ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def restore_handlers():
    saved = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGUSR1)}
    yield
    for sig, handler in saved.items():
        signal.signal(sig, handler)


def test_handler_records_the_first_signal_and_a_second_ctrl_c_stops_at_once(restore_handlers):
    stop = StopRequest()
    stop.install()
    os.kill(os.getpid(), signal.SIGTERM)
    assert stop.signum == signal.SIGTERM and stop.agreed() == signal.SIGTERM
    os.kill(os.getpid(), signal.SIGUSR1)          # later signals do not overwrite the first
    assert stop.signum == signal.SIGTERM
    with pytest.raises(KeyboardInterrupt):
        os.kill(os.getpid(), signal.SIGINT)
    assert (exit_status(signal.SIGINT), exit_status(signal.SIGTERM), exit_status(signal.SIGUSR1)) == (130, 143, 0)


def test_a_signalled_run_stops_after_the_iteration_and_resumes_from_the_next(tmp_path):
    out = tmp_path / "out"
    agent_file = write_agent_file(tmp_path / "agent.txt", OutputIters=100, TestEpisodes=0)
    world = RLWorld(PointMassEnv(), toy_args(agent_file, "--output_path", out))
    stop = StopRequest()
    stop.signum = signal.SIGINT                    # as if Ctrl-C came during the first iteration
    assert train(world, max_iters=50, stop=stop) == signal.SIGINT
    agent = world.agents[0]
    assert agent.iter == 1                         # OutputIters 100: only the final save wrote it
    assert (out / "agent0_model.ckpt.index").is_file() and (out / "agent0_model.ckpt.resume.npz").is_file()
    samples = agent.total_sample_count

    world2 = RLWorld(PointMassEnv(), toy_args(agent_file, "--output_path", out, "--resume", "true"))
    assert (world2.agents[0].iter, world2.agents[0].total_sample_count) == (1, samples)
    assert train(world2, max_iters=2, stop=StopRequest()) == 0
    rows = (out / "agent0_log.txt").read_text().splitlines()
    assert [int(r.split()[0]) for r in rows[1:]] == [0, 1]


def _wait_for_rows(log, count, proc, timeout):
    end = time.time() + timeout
    while time.time() < end:
        if log.is_file() and len(log.read_text().splitlines()) > count:
            return
        assert proc.poll() is None, proc.communicate()[0][-3000:]
        time.sleep(0.2)
    raise AssertionError(f"{log} did not reach {count} rows in {timeout} s")


def _drill(tmp_path, launcher, sig, expected_status):
    """Starts a walk run (small batches) in its own session, sends `sig` to the whole group once
    it has logged 2 iterations (as a terminal's Ctrl-C does), and checks the stop and the resume."""
    agent_file = tmp_path / "agent.txt"
    agent_file.write_text(SMOKE_AGENT.replace('"OutputIters": 1', '"OutputIters": 1000'))
    out = tmp_path / "out"
    run_args = ["--arg_file", "args/train_humanoid3d_walk_args.txt", "--agent_files", str(agent_file),
                "--output_path", str(out), "--int_output_path", "", "--rand_seed", "5"]
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
    proc = subprocess.Popen([sys.executable, *launcher, *run_args, "--max_iters", "1000"], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        log = out / "agent0_log.txt"
        _wait_for_rows(log, 2, proc, timeout=600)
        sent = time.time()
        os.killpg(proc.pid, sig)
        output, _ = proc.communicate(timeout=300)
        stop_seconds = time.time() - sent
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == expected_status, output[-3000:]
    assert "stopping after the current iteration" in output
    iters = [int(r.split()[0]) for r in log.read_text().splitlines()[1:]]
    assert iters == list(range(len(iters)))
    last = iters[-1]
    # OutputIters 1000: the checkpoint on disk is the final one, written after the last logged iteration
    resume = subprocess.run([sys.executable, *launcher, *run_args, "--resume", "true", "--max_iters", str(last + 2)],
                            cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
    assert resume.returncode == 0, resume.stdout[-2000:] + resume.stderr[-2000:]
    iters = [int(r.split()[0]) for r in log.read_text().splitlines()[1:]]
    assert iters == list(range(last + 2)), iters
    print(f"drill {launcher[0]} {signal.Signals(sig).name}: stopped {stop_seconds:.1f} s after the signal, "
          f"after iteration {last}; the resume logged iteration {last + 1}")


@pytest.mark.slow
def test_sigterm_drill_single_process(tmp_path):
    _drill(tmp_path, ["DeepMimic_Optimizer.py"], signal.SIGTERM, 143)


@pytest.mark.slow
@pytest.mark.mpi
def test_ctrl_c_drill_mpi_run_two_ranks(tmp_path):
    """SIGINT to mpi_run's whole process group (a terminal's Ctrl-C): every rank stops after the
    same iteration, exit 130, and the resume goes on from the next iteration."""
    _drill(tmp_path, ["mpi_run.py", "--num_workers", "2"], signal.SIGINT, 130)


@pytest.mark.slow
@pytest.mark.mpi
def test_dead_rank_drill(tmp_path):
    """SIGKILL to one rank of a 2-rank mpi_run: the job ends within 30 s with a non-zero status and
    a line naming the rank; the resume goes on from the last checkpoint (OutputIters 1: at most
    the iteration under way is lost)."""
    agent_file = tmp_path / "agent.txt"
    agent_file.write_text(SMOKE_AGENT)                      # OutputIters 1
    out = tmp_path / "out"
    run_args = ["--arg_file", "args/train_humanoid3d_walk_args.txt", "--agent_files", str(agent_file),
                "--output_path", str(out), "--int_output_path", "", "--rand_seed", "6"]
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
    proc = subprocess.Popen([sys.executable, "mpi_run.py", "--num_workers", "2", *run_args, "--max_iters", "1000"],
                            cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True)
    try:
        log = out / "agent0_log.txt"
        _wait_for_rows(log, 2, proc, timeout=600)
        rank_pattern = f"^{re.escape(sys.executable)} .*DeepMimic_Optimizer.py .*{out}"   # not mpiexec's line
        ranks = subprocess.run(["pgrep", "-f", rank_pattern], capture_output=True, text=True).stdout.split()
        assert len(ranks) == 2, ranks
        killed = time.time()
        os.kill(int(max(ranks, key=int)), signal.SIGKILL)
        output, _ = proc.communicate(timeout=60)
        stop_seconds = time.time() - killed
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode != 0 and stop_seconds < 30, output[-3000:]
    assert "rank" in output and ("killed" in output.lower() or "signal 9" in output.lower()), output[-3000:]
    assert not subprocess.run(["pgrep", "-f", rank_pattern], capture_output=True).stdout
    logged = [int(r.split()[0]) for r in log.read_text().splitlines()[1:]]
    resume = subprocess.run([sys.executable, "mpi_run.py", "--num_workers", "2", *run_args, "--resume", "true",
                             "--max_iters", str(logged[-1] + 2)], cwd=ROOT, env=env, capture_output=True, text=True,
                            timeout=900)
    assert resume.returncode == 0, resume.stdout[-2000:] + resume.stderr[-2000:]
    iters = [int(r.split()[0]) for r in log.read_text().splitlines()[1:]]
    first_resumed = iters[len(logged)]
    assert logged[-1] - first_resumed <= 0, (logged, iters)     # at most the iteration under way is lost
    print(f"dead rank drill: job ended {stop_seconds:.1f} s after SIGKILL; last logged iteration {logged[-1]}, "
          f"resume logged from iteration {first_resumed}")
