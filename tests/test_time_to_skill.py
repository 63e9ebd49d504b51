"""The time-to-skill loop (app/skill_training.py, run by tests/bench/time_to_skill.py): a run killed at chosen points (in training,
between a save's checkpoint and resume state, in an evaluation) and resumed, with a stand-in
trainer and evaluation: the curve goes on without a gap or a repeat and every point evaluates the
checkpoint of its iteration; and (slow) a real run killed by SIGKILL mid-run and resumed (tiny
budgets: a 256-sample batch, 1 s episodes)."""
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import app.skill_training as time_to_skill
from app.skill_config import RunConfig
from app.skill_training import CURVE_NAME, MODEL_NAME, load_or_start, parse_args, run
from learning import checkpoint, resume_state
from learning.resume_state import paired_checkpoint, write_checkpoint_and_resume_state

ROOT = Path(__file__).resolve().parents[1]
FAST_ARGS = "args/train_humanoid3d_walk_fast_args.txt"
EVERY = 400
MAX_SAMPLES = 1700


def tiny_agent(path):
    agent = json.loads((ROOT / "data/agents/ct_agent_humanoid_ppo_fast.txt").read_text())
    agent.update(BatchSize=256, MiniBatchSize=64, Epochs=1, OutputIters=1, IntOutputIters=1000, TestEpisodes=0,
                 ReplayBufferSize=5000)
    path.write_text(json.dumps(agent))
    return path


def bench_cmd(out, agent, *extra):
    return [sys.executable, "-m", "tests.bench.time_to_skill", "--arg_file", FAST_ARGS, "--output", str(out),
            "--num_workers", "1", "--eval_every", str(EVERY), "--max_samples", str(MAX_SAMPLES), "--episodes", "1",
            "--episode_time", "0.5", *extra, "--train_args", "--agent_files", str(agent)]


def test_bad_arguments_are_one_line(capsys):
    with pytest.raises(SystemExit):
        parse_args(["--arg_file", "args/nope.txt", "--output", "x"])
    assert "--arg_file args/nope.txt: no such file" in capsys.readouterr().err


@pytest.mark.parametrize("given", [["--episodes", "0"], ["--episode_time", "0"]])
def test_an_empty_evaluation_is_refused(capsys, given):
    with pytest.raises(SystemExit):
        parse_args(["--arg_file", FAST_ARGS, "--output", "x", *given])
    assert "--episodes and --episode_time must be > 0" in capsys.readouterr().err


class Killed(BaseException):
    """The benchmark and its training died here (SIGKILL: nothing runs after it)."""


class KillAt:
    """Raises Killed at the `at`-th call (1-based) of `kill`, once."""

    def __init__(self, at=0):
        self.at, self.calls = at, 0

    def kill(self):
        self.calls += 1
        if self.calls == self.at:
            raise Killed


BATCH, OUTPUT_ITERS = 128, 2


class FakeTrainer:
    """Stands for mpi_run.py + DeepMimic_Optimizer.py as train_fn: resumes from DIR's pair as
    RLWorld does, runs iterations of BATCH samples, saves the pair every OUTPUT_ITERS iterations
    and at the end (the model's one tensor is its iteration); `iteration_kill` is called after
    every iteration."""

    def __init__(self, iteration_kill=None, workers=1):
        self.iteration_kill = iteration_kill or KillAt()
        self.workers = workers

    def __call__(self, cfg, target):
        prefix = Path(cfg.output) / MODEL_NAME
        prefix.parent.mkdir(parents=True, exist_ok=True)
        (prefix.parent / "args.txt").write_text(f"--max_samples {target}\n--scene imitate\n")
        it = samples = 0
        if Path(f"{prefix}.resume.npz").is_file():
            model, state = paired_checkpoint(prefix)
            it, samples = int(state["iter"]), int(state["total_sample_count"])
            assert int(checkpoint.read_checkpoint(model)["iter"][0]) == it
        while samples < target:
            it, samples = it + 1, samples + BATCH
            self.iteration_kill.kill()
            if it % OUTPUT_ITERS == 0 or samples >= target:
                write_checkpoint_and_resume_state(prefix, {"iter": np.array([it], np.int32)},
                                                  {"iter": it, "total_sample_count": samples, "wall_time": it / 1e3,
                                                   "num_workers": self.workers})
        return 0


def fake_evaluation(evaluation_kill):
    """Stands for evaluate_checkpoint: the evaluation records the iteration of the model it read."""
    def evaluate(cfg, model):
        evaluation_kill.kill()
        return {"falls": 1, "episodes": 1, "mean_length_s": 0.3, "lengths_s": [0.3], "mean_reward": 0.5,
                "body_pos_err": 0.2, "model_iter": int(checkpoint.read_checkpoint(model)["iter"][0])}
    return evaluate


def bench_args(out, *extra):
    return parse_args(["--arg_file", FAST_ARGS, "--output", str(out), "--num_workers", "1", "--eval_every",
                       str(EVERY), "--max_samples", str(MAX_SAMPLES), "--episodes", "1", "--episode_time", "0.5",
                       *extra])


def assert_curve_without_gap_or_repeat(points, batch):
    iters = [p["iteration"] for p in points]
    samples = [p["samples"] for p in points]
    assert iters == sorted(set(iters))                                          # no repeat
    assert samples == sorted(samples) and samples[-1] >= MAX_SAMPLES
    assert all(b - a <= EVERY + batch for a, b in zip(samples, samples[1:]))   # no gap (one batch of slack)
    assert samples[0] <= EVERY + batch


@pytest.mark.parametrize("where, at", [("training", 6), ("resume_state", 3), ("resume_state", 4), ("evaluation", 3)])
def test_a_run_killed_and_resumed_evaluates_each_iterations_checkpoint_once(tmp_path, monkeypatch, where, at):
    """Killed at the `at`-th iteration of training, write of a resume state (the checkpoint of that
    save is written: the 3rd save is one every OUTPUT_ITERS, the 4th the end of a round) or
    evaluation; then rerun: without --resume it refuses, with it the curve goes on."""
    out = tmp_path / "run"
    monkeypatch.setattr(time_to_skill, "criterion_met", lambda cfg, ev: False)
    kills = {name: KillAt(at if name == where else 0) for name in ("training", "resume_state", "evaluation")}
    write_state = resume_state.write_resume_state

    def killable_write(prefix, state):
        kills["resume_state"].kill()
        write_state(prefix, state)
    monkeypatch.setattr(resume_state, "write_resume_state", killable_write)
    monkeypatch.setattr(time_to_skill, "evaluate_checkpoint", fake_evaluation(kills["evaluation"]))
    with pytest.raises(Killed):
        run(*load_or_start(bench_args(out)), train_fn=FakeTrainer(kills["training"]))
    before = json.loads((out / CURVE_NAME).read_text())["points"]
    assert before

    with pytest.raises(SystemExit, match="pass --resume"):
        load_or_start(bench_args(out))
    curve = run(*load_or_start(bench_args(out, "--resume")), train_fn=FakeTrainer())
    points = json.loads((out / CURVE_NAME).read_text())["points"]
    assert points == curve["points"] and points[:len(before)] == before        # kept as they were
    assert_curve_without_gap_or_repeat(points, BATCH)
    assert [p["evaluation"]["model_iter"] for p in points] == [p["iteration"] for p in points]


def test_a_point_evaluated_on_resume_names_the_workers_that_trained_it(tmp_path, monkeypatch):
    """A 1-worker leg killed in its first evaluation, resumed with --num_workers 2: the point of the
    1-worker checkpoint, evaluated by the 2-worker invocation, says 1 worker; the later ones 2."""
    out = tmp_path / "run"
    monkeypatch.setattr(time_to_skill, "criterion_met", lambda cfg, ev: False)
    monkeypatch.setattr(time_to_skill, "evaluate_checkpoint", fake_evaluation(KillAt(1)))
    with pytest.raises(Killed):
        run(*load_or_start(bench_args(out)), train_fn=FakeTrainer(workers=1))
    monkeypatch.setattr(time_to_skill, "evaluate_checkpoint", fake_evaluation(KillAt()))
    run(*load_or_start(bench_args(out, "--num_workers", "2", "--resume")), train_fn=FakeTrainer(workers=2))
    points = json.loads((out / CURVE_NAME).read_text())["points"]
    assert len(points) > 2 and [p["workers"] for p in points] == [1] + [2] * (len(points) - 1)


def test_each_point_counts_its_successes_under_the_runs_criterion(tmp_path, monkeypatch, capsys):
    """Under the style criterion 7 of 8 episodes succeed (one 1 cm over the bound): the point and
    its progress line say 7, and the criterion is not met."""
    def style_evaluation(cfg, model):
        return {"falls": 0, "episodes": 8, "mean_length_s": 20.0, "lengths_s": [20.0] * 8, "mean_reward": 0.0,
                "body_pos_err": None, "body_pos_errs": [None] * 8, "style_err": 0.05, "root_speed": 1.0,
                "style_errs": [0.05] * 7 + [0.071], "root_speeds": [1.0] * 8, "clip_speed": 1.0}
    monkeypatch.setattr(time_to_skill, "evaluate_checkpoint", style_evaluation)
    out = tmp_path / "run"
    run(*load_or_start(bench_args(out, "--criterion", "style")), train_fn=FakeTrainer())
    points = json.loads((out / CURVE_NAME).read_text())["points"]
    assert points and all(p["successes"] == 7 and not p["criterion_met"] for p in points)
    assert capsys.readouterr().out.count("| successes 7") == len(points)


def test_a_checkpoint_not_paired_with_the_resume_state_stops_the_benchmark_in_one_line(tmp_path):
    out = tmp_path / "run"
    FakeTrainer()(RunConfig(arg_file=FAST_ARGS, output=str(out)), 2 * BATCH)
    checkpoint.write_checkpoint(out / MODEL_NAME, {"iter": np.array([9], np.int32)})    # saved over the pair
    with pytest.raises(SystemExit, match=f"^time_to_skill: {out}/{MODEL_NAME} is not the checkpoint saved with "
                                         f"the resume state {out}/{MODEL_NAME}.resume.npz \\(iteration 2\\)"):
        run(*load_or_start(bench_args(out, "--resume")), train_fn=FakeTrainer())


def test_an_agent_schedule_starts_each_leg_at_its_entry(tmp_path, monkeypatch):
    """--agent_schedule 500:A 1000:B: rounds end at 500 and 1000 samples as well as at each
    evaluation; a round trains with the file of the last entry at or below its first sample (the
    base file before 500), put first on the command line so it wins; a resumed run keeps the
    schedule unless given a new one."""
    out = tmp_path / "run"
    gamma99, fast = (str(ROOT / f"data/agents/ct_agent_humanoid_ppo_fast{s}.txt") for s in ("_gamma99", ""))
    monkeypatch.setattr(time_to_skill, "criterion_met", lambda cfg, ev: False)
    monkeypatch.setattr(time_to_skill, "evaluate_checkpoint", fake_evaluation(KillAt()))
    calls, trainer = [], FakeTrainer()

    def recording(cfg, target):
        state = time_to_skill.read_resume(out)
        args = cfg.train_args
        calls.append((int(state["total_sample_count"]) if state else 0, target,
                      Path(args[args.index("--agent_files") + 1]).name))
        return trainer(cfg, target)
    schedule = ["--agent_schedule", f"500:{gamma99}", f"1e3:{fast}"]
    run(*load_or_start(bench_args(out, *schedule, "--train_args", "--agent_files", "base.txt")), train_fn=recording)
    a, b = "ct_agent_humanoid_ppo_fast_gamma99.txt", "ct_agent_humanoid_ppo_fast.txt"
    assert calls == [(0, 400, "base.txt"), (512, 800, a), (896, 1000, a), (1024, 1200, b), (1280, 1600, b),
                     (1664, 1700, b)]
    assert load_or_start(bench_args(out, "--resume"))[0].agent_schedule == [[500, gamma99], [1000, fast]]
    assert load_or_start(bench_args(out, "--resume", "--agent_schedule", f"700:{fast}"))[0].agent_schedule == \
        [[700, fast]]


def test_a_resume_with_other_train_args_is_one_line(tmp_path, monkeypatch):
    """A run keeps the training arguments it began with: the same ones (or none) go on, other ones
    stop in one line naming both, rather than being dropped without a word."""
    out = tmp_path / "run"
    monkeypatch.setattr(time_to_skill, "criterion_met", lambda cfg, ev: False)
    monkeypatch.setattr(time_to_skill, "evaluate_checkpoint", fake_evaluation(KillAt()))
    run(*load_or_start(bench_args(out, "--train_args", "--agent_files", "base.txt")), train_fn=FakeTrainer())
    for same in ([], ["--train_args", "--agent_files", "base.txt"]):
        assert load_or_start(bench_args(out, "--resume", *same))[0].train_args == ["--agent_files", "base.txt"]
    with pytest.raises(SystemExit) as e:
        load_or_start(bench_args(out, "--resume", "--train_args", "--agent_files", "other.txt"))
    assert str(e.value) == (f"time_to_skill: {out / CURVE_NAME} was trained with --train_args --agent_files base.txt, "
                            "not --agent_files other.txt: a run keeps its training arguments "
                            "(--agent_schedule changes the agent file)")


@pytest.mark.parametrize("given, same, other, saved", [
    (["--seed", "3"], ["--seed", "3"], ["--seed", "4"], "--seed 3, not 4"),
    ([], ["--eval_seed", "1000"], ["--eval_seed", "7"], "--eval_seed 1000, not 7"),
    ([], ["--episodes", "1"], ["--episodes", "8"], "--episodes 1, not 8"),
    ([], ["--episode_time", "0.5"], ["--episode_time", "20"], "--episode_time 0.5, not 20.0"),
    (["--max_body_pos_err", "0.1"], [], ["--max_body_pos_err", "0.08"], "--max_body_pos_err 0.1, not 0.08"),
    ([], ["--criterion", "tracking"], ["--criterion", "style"], "--criterion tracking, not style"),
    ([], [], ["--speed_tol", "0.3"], "--speed_tol 0.2, not 0.3"),
])
def test_a_resume_given_another_evaluation_setting_is_one_line(tmp_path, monkeypatch, given, same, other, saved):
    """What a run's evaluations measure (seeds, episodes, thresholds) stays as it began: a resume
    given the saved value, its default or nothing goes on; another value stops in one line naming
    both, rather than being dropped without a word."""
    out = tmp_path / "run"
    monkeypatch.setattr(time_to_skill, "criterion_met", lambda cfg, ev: False)
    monkeypatch.setattr(time_to_skill, "evaluate_checkpoint", fake_evaluation(KillAt()))
    run(*load_or_start(bench_args(out, *given)), train_fn=FakeTrainer())
    key = other[0][2:]
    expected = load_or_start(bench_args(out, "--resume"))[0].fixed()[key]
    assert load_or_start(bench_args(out, "--resume", *same))[0].fixed()[key] == expected
    with pytest.raises(SystemExit) as e:
        load_or_start(bench_args(out, "--resume", *other))
    assert str(e.value) == f"time_to_skill: {out / CURVE_NAME} was trained with {saved}: " \
                           "a run keeps what its evaluations measure"


@pytest.mark.parametrize("items, message", [
    (["500"], "--agent_schedule 500: expected SAMPLES:AGENT_FILE with SAMPLES > 0"),
    (["0:data/agents/ct_agent_humanoid_ppo_fast.txt"], "with SAMPLES > 0"),
    (["inf:data/agents/ct_agent_humanoid_ppo_fast.txt"], "with SAMPLES > 0"),
    (["500:data/agents/nope.txt"], "--agent_schedule 500:data/agents/nope.txt: no such agent file data/agents/nope.txt"),
    (["500:data/agents/ct_agent_humanoid_ppo_fast.txt", "400:data/agents/ct_agent_humanoid_ppo_fast.txt"],
     "--agent_schedule 400:data/agents/ct_agent_humanoid_ppo_fast.txt: samples must increase (500 before)")])
def test_a_bad_agent_schedule_is_one_line(tmp_path, capsys, items, message):
    with pytest.raises(SystemExit):
        bench_args(tmp_path / "run", "--agent_schedule", *items)
    assert message in capsys.readouterr().err.strip().splitlines()[-1]


@pytest.mark.slow
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
    assert points[:len(before)] == before                                       # kept as they were
    assert_curve_without_gap_or_repeat(points, 300)


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


def test_push_training_pushes_the_training_not_the_evaluations(tmp_path, monkeypatch):
    """--push_training: each round of training gets the recipe's random pushes after the run's own
    arguments (which so may override them), the evaluations none; a resumed run keeps the setting."""
    from app.skill_recipes import PUSH_TRAINING_ARGS
    out = tmp_path / "run"
    commands, specs = [], []
    monkeypatch.setattr(time_to_skill, "run_logged", lambda cmd, log, echo: commands.append(cmd) or 0)
    monkeypatch.setattr(time_to_skill, "run_worker", lambda module, spec, **kw: specs.append(spec) or {})
    for given, pushed in (([], False), (["--push_training"], True)):
        cfg, _ = load_or_start(bench_args(out / str(pushed), *given, "--train_args", "--max_perturb", "800"))
        assert cfg.push_training is pushed
        time_to_skill.train_chunk(cfg, 400)
        time_to_skill.evaluate_checkpoint(cfg, "model")
        cmd, spec = commands[-1], specs[-1]
        assert cmd[cmd.index("--output_path") + 2:] == ["--int_output_path", str(out / str(pushed) / "intermediate"),
                                                       "--max_perturb", "800", *(PUSH_TRAINING_ARGS if pushed else ())]
        assert "--enable_rand_perturbs" not in spec["extra_args"]
    monkeypatch.setattr(time_to_skill, "criterion_met", lambda cfg, ev: False)
    monkeypatch.setattr(time_to_skill, "evaluate_checkpoint", fake_evaluation(KillAt()))
    run(*load_or_start(bench_args(out / "True", "--push_training")), train_fn=FakeTrainer())
    assert load_or_start(bench_args(out / "True", "--resume"))[0].push_training is True
