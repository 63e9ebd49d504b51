"""Entry points: the optimizer's training loop and outputs, mpi_run's launch; a real-scene smoke
run through mpi_run with 2 workers and a resume (slow)."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

import mpi_run
from types import SimpleNamespace

from DeepMimic_Optimizer import copy_run_inputs, progress_line, train
from learning.rl_world import RLWorld
from learning.tf_util import limit_tf_threads
from tests.toy_env import PointMassEnv, register_small_net, toy_args, write_agent_file

limit_tf_threads()
register_small_net()
ROOT = Path(__file__).resolve().parent.parent


def test_progress_line_percent_and_time_left():
    """20,000 of 100,000 samples in 100 s since a start at 10,000: 100 samples/s, 20% done, 800 s
    left; with max_iters 10 too, after 2 iterations in 100 s: 40% by iterations and 300 s left,
    the budget the run reaches first, so that one is shown; no budget, no estimate."""
    agent = SimpleNamespace(id=0, iter=4, total_sample_count=20000,
                            logger=SimpleNamespace(last_row={"Train_Return": 1.5, "Test_Return": 2.0}))
    line = progress_line(agent, (10000, 2, 0.0), 100.0, max_samples=100000)
    assert "100.0 samples/s" in line and line.endswith("|  20.0% done, 13m20s left")
    assert progress_line(agent, (10000, 2, 0.0), 100.0, max_samples=100000, max_iters=10).endswith(
        "|  40.0% done, 5m00s left")
    assert "done" not in progress_line(agent, (10000, 2, 0.0), 100.0)
    assert "falls" not in line


def test_progress_line_shows_test_tracking():
    """An imitation scene's log row has the test phase's fall rate and body position error (m):
    0.25 and 0.0834 m read as 25% and 8.3 cm."""
    row = {"Train_Return": 1.5, "Test_Return": 2.0, "Test_Fall_Rate": 0.25, "Test_Body_Pos_Err": 0.0834}
    agent = SimpleNamespace(id=0, iter=4, total_sample_count=20000, logger=SimpleNamespace(last_row=row))
    line = progress_line(agent, (10000, 2, 0.0), 100.0, max_samples=100000)
    assert "| test falls  25%, body pos   8.3 cm |  20.0% done" in line


def test_progress_line_shows_test_style():
    """An AMP scene's log row has the test phase's fall rate, style error (m) and root speed:
    0.5, 0.0421 m and 1.234 m/s read as 50%, 4.2 cm and 1.23 m/s."""
    row = {"Train_Return": 1.5, "Test_Return": 2.0, "Test_Fall_Rate": 0.5, "Test_Style_Err": 0.0421,
           "Test_Root_Speed": 1.234}
    agent = SimpleNamespace(id=0, iter=4, total_sample_count=20000, logger=SimpleNamespace(last_row=row))
    line = progress_line(agent, (10000, 2, 0.0), 100.0, max_samples=100000)
    assert "| test falls  50%, style   4.2 cm, speed 1.23 m/s |  20.0% done" in line


def test_train_stops_and_saves(tmp_path):
    out = tmp_path / "out"
    agent_file = write_agent_file(tmp_path / "agent.txt", OutputIters=100, TestEpisodes=0)
    args = toy_args(agent_file, "--output_path", out)
    world = RLWorld(PointMassEnv(), args)
    copy_run_inputs(args, str(out))
    train(world, max_iters=2)
    agent = world.agents[0]
    assert agent.iter == 2
    assert (out / "agent0_model.ckpt.index").is_file() and (out / "agent0_model.ckpt.resume.npz").is_file()
    assert "--agent_files" in (out / "args.txt").read_text()
    assert (out / "agent.txt").read_text() == agent_file.read_text()
    world2 = RLWorld(PointMassEnv(), toy_args(agent_file, "--output_path", out, "--resume", "true"))
    start = world2.agents[0].total_sample_count
    train(world2, max_samples=start + 1)
    assert world2.agents[0].iter == 3 and world2.agents[0].total_sample_count > start


def test_train_needs_a_training_agent(tmp_path):
    world = RLWorld(PointMassEnv(), toy_args(write_agent_file(tmp_path / "a.txt"), "--train_agents", "false"))
    with pytest.raises(ValueError, match="no agent to train"):
        train(world, max_iters=1)


def test_mpi_run_command(monkeypatch):
    monkeypatch.delenv("OMPI_MCA_mpi_yield_when_idle", raising=False)
    assert mpi_run.split_num_workers(["--arg_file", "x", "--num_workers", "3"]) == (3, ["--arg_file", "x"])
    assert mpi_run.split_num_workers(["--arg_file", "x"]) == (1, ["--arg_file", "x"])
    with pytest.raises(SystemExit, match="--num_workers expects a positive integer"):
        mpi_run.split_num_workers(["--num_workers", "zero"])
    cmd = mpi_run.mpiexec_command(2, ["--arg_file", "x"])
    assert cmd[0] == str(Path(sys.executable).parent / "mpiexec")
    assert cmd[1:3] == ["-n", "2"] and "--oversubscribe" in cmd
    assert cmd[-3:] == [str(ROOT / "DeepMimic_Optimizer.py"), "--arg_file", "x"]
    env = mpi_run.mpiexec_env()
    assert env["OPENBLAS_NUM_THREADS"] == "1" and str(ROOT) in env["PYTHONPATH"]
    assert env["OMPI_MCA_mpi_yield_when_idle"] == "1"


def test_mpi_run_hostfile_and_mpiexec_options(tmp_path):
    hosts = tmp_path / "hosts"
    hosts.write_text("localhost slots=2\n")
    argv = ["--arg_file", "x", "--hostfile", str(hosts), "--max_iters", "1", "--", "--mca", "btl", "self,tcp"]
    hostfile, extra, rest = mpi_run.split_launch_options(argv)
    assert (hostfile, extra, rest) == (str(hosts), ["--mca", "btl", "self,tcp"], ["--arg_file", "x", "--max_iters", "1"])
    cmd = mpi_run.mpiexec_command(4, rest, hostfile=hostfile, extra=extra)
    python = cmd.index(sys.executable)
    assert cmd[python - 5:python] == ["--hostfile", str(hosts), "--mca", "btl", "self,tcp"]
    assert cmd[python + 2:] == ["--arg_file", "x", "--max_iters", "1"]
    with pytest.raises(SystemExit, match="--hostfile .*missing: no such file"):
        mpi_run.split_launch_options(["--hostfile", str(tmp_path / "missing")])
    with pytest.raises(SystemExit, match="--hostfile expects a file"):
        mpi_run.split_launch_options(["--hostfile"])


@pytest.mark.slow
@pytest.mark.mpi
def test_mpi_run_two_ranks_through_a_hostfile(tmp_path):
    """The multi-machine path on one machine: a host file naming this machine with 2 slots."""
    agent_file = tmp_path / "agent.txt"
    agent_file.write_text(SMOKE_AGENT)
    hosts = tmp_path / "hosts"
    hosts.write_text("localhost slots=2\n")
    out = tmp_path / "out"
    cmd = [sys.executable, "mpi_run.py", "--num_workers", "2", "--hostfile", str(hosts),
           "--arg_file", "args/train_humanoid3d_walk_args.txt", "--agent_files", str(agent_file),
           "--output_path", str(out), "--int_output_path", "", "--max_iters", "1", "--", "--mca", "btl", "self,tcp,vader"]
    run = subprocess.run(cmd, cwd=ROOT, env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2"), capture_output=True,
                         text=True, timeout=900)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    assert "DeepMimic optimizer: 2 worker(s)" in run.stdout
    assert len((out / "agent0_log.txt").read_text().splitlines()) == 2


SMOKE_AGENT = ('{"AgentType": "PPO", "ActorNet": "fc_2layers_1024units", "CriticNet": "fc_2layers_1024units", '
               '"ActorInitOutputScale": 0.01, "ActorStepsize": 0.000002, "CriticStepsize": 0.0005, '
               '"BatchSize": 128, "MiniBatchSize": 32, "ReplayBufferSize": 20000, "InitSamples": 1, '
               '"TestEpisodes": 0, "OutputIters": 1, "ExpParamsBeg": {"Rate": 1, "Noise": 0.05}, '
               '"ExpParamsEnd": {"Rate": 0.2, "Noise": 0.05}}')


@pytest.mark.slow
@pytest.mark.mpi
def test_mpi_run_walk_two_workers_and_resume(tmp_path):
    agent_file = tmp_path / "agent.txt"
    agent_file.write_text(SMOKE_AGENT)
    out = tmp_path / "out"
    base = [sys.executable, "mpi_run.py", "--num_workers", "2", "--arg_file", "args/train_humanoid3d_walk_args.txt",
            "--agent_files", str(agent_file), "--output_path", str(out), "--int_output_path", str(out / "int"),
            "--rand_seed", "3"]
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
    first = subprocess.run(base + ["--max_iters", "2"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
    assert first.returncode == 0, first.stdout[-2000:] + first.stderr[-2000:]
    assert "samples/s" in first.stdout
    rows = (out / "agent0_log.txt").read_text().splitlines()
    assert len(rows) == 3 and (out / "args.txt").is_file() and (out / "agent.txt").is_file()
    samples = int(rows[-1].split()[2])
    second = subprocess.run(base + ["--max_iters", "3", "--resume", "true"], cwd=ROOT, env=env,
                            capture_output=True, text=True, timeout=900)
    assert second.returncode == 0, second.stdout[-2000:] + second.stderr[-2000:]
    rows = (out / "agent0_log.txt").read_text().splitlines()
    assert [int(r.split()[0]) for r in rows[1:]] == [0, 1, 2]
    assert int(rows[-1].split()[2]) > samples
