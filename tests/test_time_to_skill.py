"""tests/bench/time_to_skill.py: the criterion, and a run killed (SIGKILL) mid-run and resumed:
the curve goes on without a gap or a repeat (tiny budgets: a 256-sample batch, 1 s episodes)."""
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from app.skill_training import CURVE_NAME, parse_args

ROOT = Path(__file__).resolve().parents[1]
FAST_ARGS = "args/train_humanoid3d_walk_fast_args.txt"
EVERY = 400


def tiny_agent(path):
    agent = json.loads((ROOT / "data/agents/ct_agent_humanoid_ppo_fast.txt").read_text())
    agent.update(BatchSize=256, MiniBatchSize=64, Epochs=1, OutputIters=1, IntOutputIters=1000, TestEpisodes=0,
                 ReplayBufferSize=5000)
    path.write_text(json.dumps(agent))
    return path


def bench_cmd(out, agent, *extra):
    return [sys.executable, "-m", "tests.bench.time_to_skill", "--arg_file", FAST_ARGS, "--output", str(out),
            "--num_workers", "1", "--eval_every", str(EVERY), "--max_samples", "1700", "--episodes", "1",
            "--episode_time", "0.5", *extra, "--train_args", "--agent_files", str(agent)]


def test_bad_arguments_are_one_line(capsys):
    with pytest.raises(SystemExit):
        parse_args(["--arg_file", "args/nope.txt", "--output", "x"])
    assert "--arg_file args/nope.txt: no such file" in capsys.readouterr().err


def test_killed_run_resumes_without_gap_or_repeat(tmp_path):
    out, agent = tmp_path / "run", tiny_agent(tmp_path / "agent.txt")
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    proc = subprocess.Popen(bench_cmd(out, agent), cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    curve_path = out / CURVE_NAME
    deadline = time.time() + 240
    while time.time() < deadline and proc.poll() is None:      # the first point, then a kill mid-training
        if curve_path.is_file() and json.loads(curve_path.read_text())["points"]:
            time.sleep(6)
            break
        time.sleep(0.5)
    assert proc.poll() is None, "the run ended before it could be killed"
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    before = json.loads(curve_path.read_text())["points"]
    assert before
    # the training child got SIGTERM from its dead parent and stops; its checkpoint is left as saved
    time.sleep(8)
    again = subprocess.run(bench_cmd(out, agent), cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    assert again.returncode != 0 and "pass --resume" in again.stderr
    resumed = subprocess.run(bench_cmd(out, agent, "--resume"), cwd=ROOT, env=env, capture_output=True, text=True,
                             timeout=300)
    assert resumed.returncode == 0, resumed.stdout[-2000:] + resumed.stderr[-2000:]
    points = json.loads(curve_path.read_text())["points"]
    iters = [p["iteration"] for p in points]
    samples = [p["samples"] for p in points]
    assert points[:len(before)] == before                                       # kept as they were
    assert iters == sorted(set(iters))                                          # no repeat
    assert samples == sorted(samples) and samples[-1] >= 1700
    assert all(b - a <= EVERY + 300 for a, b in zip(samples, samples[1:]))     # no gap (one batch of slack)
    assert samples[0] <= EVERY + 300


def test_compare_picks_each_curves_point_nearest_the_budget(tmp_path, capsys):
    from app.skill_training import compare

    def curve(label, samples):
        points = [{"iteration": i, "samples": s, "wall_hours": 0.1 * i, "criterion_met": False,
                   "evaluation": {"falls": 8, "episodes": 8, "mean_length_s": s / 1e5, "mean_reward": 0.5,
                                  "body_pos_err": 0.1, "lengths_s": [1.0] * 8}} for i, s in enumerate(samples)]
        path = tmp_path / f"{label}.json"
        path.write_text(json.dumps({"config": {"label": label, "arg_file": "x", "min_reward": 0.75,
                                               "episode_time": 20.0, "max_body_pos_err": 0.08}, "points": points}))
        return path

    compare([curve("a", [100000, 240000, 520000]), curve("b", [300000, 700000])], tmp_path / "cmp.png",
            [250000, 500000])
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| a") or line.startswith("| b")]
    assert rows == ["| a | 0.25M | 240,000 | 8/8 | 2.40 | 0.500 | 10.0 |",
                    "| a | 0.5M | 520,000 | 8/8 | 5.20 | 0.500 | 10.0 |"]       # b has no point within 10%
    assert (tmp_path / "cmp.png").stat().st_size > 0
