"""app/skill_training.py and app/skill_package.py: the per-episode skill criterion, the provenance
every curve point records, and the skill command end to end on a tiny budget (train, evaluate,
meet a loose criterion, ship, play the shipped policy, rerun without retraining)."""
import json
import subprocess
import sys
from pathlib import Path

import pytest

from app.skill_package import args_sha256, git_commit, provenance, read_run_args
from app.skill_config import Criterion, criterion_met, episode_successes, parse_args
from tests.test_time_to_skill import tiny_agent

ROOT = Path(__file__).resolve().parents[1]
CFG = Criterion()


def evaluation(errs, lengths=None, falls=0, reward=0.8):
    lengths = lengths or [20.0] * len(errs)
    return {"episodes": len(errs), "falls": falls, "lengths_s": lengths, "body_pos_errs": errs,
            "body_pos_err": sum(errs) / len(errs), "mean_reward": reward}


def test_criterion_gates_each_episode_not_the_mean():
    assert criterion_met(CFG, evaluation([0.05] * 8))
    one_far = evaluation([0.05] * 7 + [0.097])                  # mean 0.056 cm: under the bound
    assert one_far["body_pos_err"] <= 0.08
    assert episode_successes(CFG, one_far) == [True] * 7 + [False]
    assert not criterion_met(CFG, one_far)
    assert criterion_met(CFG, evaluation([0.08] * 8))            # at the bound: a success
    assert not criterion_met(CFG, evaluation([0.05] * 8, lengths=[20.0] * 7 + [12.0]))   # cut short
    assert not criterion_met(CFG, evaluation([0.05] * 8, lengths=[20.0] * 7 + [12.0], falls=1))
    assert criterion_met(CFG, evaluation([0.05] * 8, reward=0.3))    # the reward is reported, not gated on


def test_criterion_needs_every_episode_evaluated():
    ev = evaluation([0.05] * 8)
    assert not criterion_met(CFG, {**ev, "episodes": 9})
    assert not criterion_met(CFG, {**ev, "body_pos_errs": None})    # no tracking: nothing to judge by


STYLE_CFG = Criterion(kind="style")


def style_evaluation(errs, speeds, lengths=None, clip_speed=1.0):
    lengths = lengths or [20.0] * len(errs)
    return {"episodes": len(errs), "falls": 0, "lengths_s": lengths, "body_pos_errs": [None] * len(errs),
            "style_errs": errs, "root_speeds": speeds, "clip_speed": clip_speed}


def test_style_criterion_gates_style_error_and_speed_per_episode():
    """AMP's criterion: each episode full length, its style error <= 6.1 cm, its speed within 20%."""
    assert criterion_met(STYLE_CFG, style_evaluation([0.05] * 8, [1.0] * 8))
    assert criterion_met(STYLE_CFG, style_evaluation([0.061] * 8, [0.8] * 4 + [1.2] * 4))    # at the bounds
    assert episode_successes(STYLE_CFG, style_evaluation([0.05] * 7 + [0.07], [1.0] * 8)) == [True] * 7 + [False]
    assert episode_successes(STYLE_CFG, style_evaluation([0.05] * 8, [1.0] * 6 + [0.79, 1.21])) == \
        [True] * 6 + [False, False]
    assert episode_successes(STYLE_CFG, style_evaluation([0.05] * 8, [0.4] * 8, clip_speed=0.5)) == [True] * 8
    assert not criterion_met(STYLE_CFG, style_evaluation([0.05] * 8, [1.0] * 8, lengths=[20.0] * 7 + [3.0]))
    assert not criterion_met(STYLE_CFG, style_evaluation([0.05] * 8, [1.0] * 8, clip_speed=None))
    # standing still in the clip's poses is not a walk; the tracking bound does not apply
    assert not criterion_met(STYLE_CFG, style_evaluation([0.0] * 8, [0.0] * 8))
    assert not criterion_met(CFG, style_evaluation([0.05] * 8, [1.0] * 8))


TASK_CFG = Criterion(kind="task")


def test_task_criterion_gates_each_episode_task_reward():
    """An AMP task's criterion: each episode full length and its own mean task reward >= 0.7;
    the style error is reported, not gated on."""
    ev = {**style_evaluation([0.2] * 8, [3.0] * 8), "rewards": [0.75] * 8}
    assert criterion_met(TASK_CFG, ev)
    assert criterion_met(TASK_CFG, {**ev, "rewards": [0.7] * 8})                  # at the bound
    assert episode_successes(TASK_CFG, {**ev, "rewards": [0.75] * 7 + [0.69]}) == [True] * 7 + [False]
    assert not criterion_met(TASK_CFG, {**ev, "rewards": [0.75] * 7 + [0.69]})    # mean 0.743: gated per episode
    assert not criterion_met(TASK_CFG, {**ev, "lengths_s": [20.0] * 7 + [4.0], "falls": 1})
    assert not criterion_met(STYLE_CFG, ev)


def test_task_evaluation_of_the_heading_scene(tmp_path):
    """The worker of the heading task reports each episode's task reward per decision (in [0, 1])
    and its style error against the locomotion data (the run and walk clips)."""
    from app.skill_training import eval_worker
    spec = {"arg_file": "args/train_amp_heading_humanoid3d_locomotion_fast_args.txt", "seed": 1000,
            "model": "none", "scratch": str(tmp_path), "agent_args": [], "extra_args": [], "episodes": 2,
            "episode_time": 0.5, "max_body_pos_err": 0.08}
    ev = eval_worker(spec)
    assert len(ev["rewards"]) == len(ev["style_errs"]) == 2
    assert all(0.0 <= r <= 1.0 for r in ev["rewards"]) and all(0.0 < e < 0.5 for e in ev["style_errs"])


def test_style_evaluation_of_an_amp_checkpoint(tmp_path):
    """The worker of an AMP scene reports each episode's style error and speed and the motion
    data's speed (the walk clip's, from its frame velocities)."""
    from app.skill_training import eval_worker
    spec = {"arg_file": "args/train_amp_humanoid3d_walk_args.txt", "seed": 1000, "model": "none",
            "scratch": str(tmp_path), "agent_args": [], "extra_args": [], "episodes": 2, "episode_time": 0.5,
            "max_body_pos_err": 0.08}
    ev = eval_worker(spec)
    assert len(ev["style_errs"]) == len(ev["root_speeds"]) == 2 and ev["body_pos_errs"] == [None, None]
    assert ev["clip_speed"] == pytest.approx(0.98, abs=0.01)
    assert all(0.0 < err < 0.5 for err in ev["style_errs"])


def write_run(run_dir, seed=1, samples=1000, stepsize=1e-5, motion="humanoid3d_walk.txt"):
    run_dir.mkdir(parents=True, exist_ok=True)
    agent = json.loads((ROOT / "data/agents/ct_agent_humanoid_ppo_fast.txt").read_text())
    agent["ActorStepsize"] = stepsize
    (run_dir / "my_agent.txt").write_text(json.dumps(agent))
    (run_dir / "args.txt").write_text(
        f"--max_samples {samples}\n--rand_seed {seed}\n--output_path {run_dir}\n--resume true\n"
        f"--scene imitate\n--motion_file data/motions/{motion}\n--agent_files /elsewhere/my_agent.txt\n")
    return run_dir


def write_checkpoint_stub(run_dir):
    """The checkpoint files write_package copies (their contents are not read)."""
    for suffix in (".index", ".data-00000-of-00001"):
        (run_dir / f"agent0_model.ckpt{suffix}").write_bytes(b"x")


def test_args_hash_names_the_experiment_not_the_chunk(tmp_path):
    def digest(**kw):
        run = write_run(tmp_path / json.dumps(kw).replace('"', "").replace(" ", ""), **kw)
        return provenance(run)["args_sha256"]

    base = digest()
    assert digest(seed=8, samples=250000) == base                 # another chunk of the same run
    assert digest(stepsize=2e-5) != base                          # the agent file's copy is hashed
    assert digest(motion="humanoid3d_run.txt") != base
    run_args = read_run_args(write_run(tmp_path / "x"))
    assert ("scene", ["imitate"]) in run_args and args_sha256(run_args, []) != args_sha256(run_args, ["{}"])


def test_commit_is_the_checkouts():
    head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    assert git_commit(ROOT)["commit"] == head
    assert git_commit("/")["commit"] is None


def skill_cmd(tmp_path, *extra, output="run"):
    """The walk's recipe on a tiny budget and agent, with a loose criterion (extra options win)."""
    return [sys.executable, "scripts/train_skill.py", "--clip", "walk", "--output", str(tmp_path / output),
            "--ship_dir", str(tmp_path / "policies"), "--ship_args_dir", str(tmp_path / "args"),
            "--num_workers", "1", "--eval_every", "300", "--max_samples", "1200", "--episodes", "2",
            "--episode_time", "0.4", "--max_body_pos_err", "10", *extra,
            "--train_args", "--agent_files", str(tiny_agent(tmp_path / "tiny_agent.txt"))]


@pytest.fixture(scope="module")
def shipped_walk(tmp_path_factory):
    """(folder, the skill command's output): the walk's recipe on a tiny budget and a loose
    criterion, trained and shipped into the folder."""
    tmp_path = tmp_path_factory.mktemp("skill")
    first = subprocess.run(skill_cmd(tmp_path), cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert first.returncode == 0, first.stdout[-2000:] + first.stderr[-2000:]
    return tmp_path, first


def test_skill_command_trains_ships_and_goes_on(shipped_walk):
    """A loose criterion (0.4 s episodes, 10 m) that the first checkpoint meets, within the ship
    margin and robust: the command trains one round, evaluates (the fixed seed, then the
    robustness episodes), ships under DeepMimic's run_ file name, and the shipped policy plays;
    the same command again trains nothing more."""
    tmp_path, first = shipped_walk
    assert "shipped:" in first.stdout
    assert "agent 0 iter" in first.stdout                                      # training's progress, here too
    curve = json.loads((tmp_path / "run/time_to_skill.json").read_text())
    point = curve["points"][-1]
    assert curve["reached"]["iteration"] == point["iteration"] == curve["ship"]["iteration"] and curve["shipped"]
    assert point["robustness"]["episodes"] == 16 and point["robustness"]["successes"] == 16
    package = tmp_path / "policies/humanoid3d_walk_trained"
    meta = json.loads((package / "metadata.json").read_text())
    assert meta["skill"] == meta["clip"] == "walk" and meta["samples"] == point["samples"] >= 256
    assert meta["commit"] == git_commit(ROOT)["commit"] and len(meta["args_sha256"]) == 64
    assert meta["args_sha256"] == point["args_sha256"]
    assert meta["evaluation"]["lengths_s"] == point["evaluation"]["lengths_s"]
    assert meta["criterion"] == {"kind": "tracking", "episodes": 2, "episode_time": 0.4, "max_body_pos_err": 10.0,
                                 "eval_seed": 1000}
    assert meta["agent_files"]["tiny_agent.txt"]["BatchSize"] == 256
    assert meta["robustness"] == point["robustness"] and meta["ship"] == curve["ship"]
    assert "--motion_file data/motions/humanoid3d_walk.txt" in meta["args"]
    assert sorted(p.name for p in package.iterdir()) == [
        "agent0_model.ckpt.data-00000-of-00001", "agent0_model.ckpt.index", "metadata.json", "tiny_agent.txt"]

    run_args = tmp_path / "args/run_humanoid3d_walk_args.txt"
    text = run_args.read_text()
    assert "--train_agents false" in text and f"--model_files {package}/agent0_model.ckpt" in text
    assert "--output_path" not in text and "--rand_seed" not in text
    played = subprocess.run([sys.executable, "DeepMimic.py", "--arg_file", str(run_args), "--headless",
                             "--episodes", "1", "--time_lim_min", "0.4", "--time_lim_max", "0.4"],
                            cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert played.returncode == 0, played.stderr[-2000:]
    assert "episode 0:" in played.stdout

    log_before = (tmp_path / "run/train_stdout.txt").read_text()
    again = subprocess.run(skill_cmd(tmp_path), cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert again.returncode == 0, again.stderr[-2000:]
    assert "criterion met" in again.stdout and "training to" not in again.stdout
    assert (tmp_path / "run/train_stdout.txt").read_text() == log_before


def test_a_run_goes_on_from_a_shipped_skill(shipped_walk, tmp_path):
    """--train_on: the run starts where the package's stood (the package's own evaluation is its
    first point: same weights and normalisers, same seed, same numbers; its iteration, samples and
    hours), trains on from there, and a point that meets the criterion ships over the package,
    which its metadata then names."""
    import shutil

    package = tmp_path / "policies/humanoid3d_walk_trained"
    shutil.copytree(shipped_walk[0] / "policies/humanoid3d_walk_trained", package)
    shutil.copytree(shipped_walk[0] / "args", tmp_path / "args")
    meta = json.loads((package / "metadata.json").read_text())
    strict = subprocess.run(skill_cmd(tmp_path, "--train_on", str(package), "--max_body_pos_err", "0.001",
                                      "--max_samples", str(meta["samples"] + 300), output="strict"),
                            cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert strict.returncode == 0, strict.stdout[-2000:] + strict.stderr[-2000:]
    curve = json.loads((tmp_path / "strict/time_to_skill.json").read_text())
    start, trained = curve["points"][:2]
    assert (start["iteration"], start["samples"]) == (meta["iteration"], meta["samples"])
    assert start["wall_hours"] == pytest.approx(meta["training_hours"], abs=1e-3)
    assert start["evaluation"]["body_pos_errs"] == meta["evaluation"]["body_pos_errs"]
    assert trained["iteration"] > start["iteration"] and trained["samples"] > start["samples"]
    assert curve["trained_on"]["samples"] == meta["samples"] and not curve.get("reached")
    assert json.loads((package / "metadata.json").read_text()) == meta              # nothing shipped

    loose = subprocess.run(skill_cmd(tmp_path, "--train_on", str(package), output="loose"),
                           cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert loose.returncode == 0, loose.stdout[-2000:] + loose.stderr[-2000:]
    assert "training to" not in loose.stdout and "shipped:" in loose.stdout
    shipped = json.loads((package / "metadata.json").read_text())
    assert shipped["trained_on"]["samples"] == meta["samples"] and shipped["samples"] == meta["samples"]
    assert Path(shipped["trained_on"]["package"]) == package
    assert not any(p.name.startswith(".") for p in package.parent.iterdir())


@pytest.mark.parametrize("left", ["time_to_skill.json", "agent0_model.ckpt.resume.npz"])
def test_the_skill_command_goes_on_with_a_run_it_finds(tmp_path, left):
    """A run stopped after an evaluation (a curve) or before its first one (only a resume state)."""
    assert not parse_args(["--clip", "walk", "--output", str(tmp_path)]).resume
    (tmp_path / left).write_text("")
    assert parse_args(["--clip", "walk", "--output", str(tmp_path)]).resume
    assert not parse_args(["--arg_file", "args/train_humanoid3d_walk_fast_args.txt", "--output", str(tmp_path)]).resume


def test_a_skill_ships_under_its_own_name(tmp_path):
    """--ship_name: another learner's walk ships as humanoid3d_<name>_trained with the clip of its
    motion file, the style criterion's bounds and its agent schedule; --ship without a name is refused."""
    from app.skill_package import write_package
    run_dir = write_run(tmp_path / "run")
    write_checkpoint_stub(run_dir)
    cfg = parse_args(["--arg_file", "args/train_amp_humanoid3d_walk_fast_args.txt", "--output", str(run_dir),
                      "--ship", "--ship_name", "amp_walk", "--criterion", "style"])
    assert cfg.ship_name == "amp_walk"
    curve_cfg = {"seed": 1, "episodes": 8, "episode_time": 20.0, "eval_seed": 1000, "criterion": "style",
                 "max_style_err": 0.061, "speed_tol": 0.2, "max_body_pos_err": 0.08,
                 "agent_schedule": [[500, "data/agents/ct_agent_humanoid_amp_fast.txt"]]}
    point = {"samples": 10, "iteration": 1, "wall_hours": 0.1, "workers": 1, "evaluation": {}}
    package = write_package("amp_walk", run_dir, point, run_dir / "agent0_model.ckpt", curve_cfg,
                            tmp_path / "policies", tmp_path / "args", ROOT)
    assert package.name == "humanoid3d_amp_walk_trained"
    meta = json.loads((package / "metadata.json").read_text())
    assert (meta["skill"], meta["clip"]) == ("amp_walk", "walk")
    assert meta["criterion"] == {"kind": "style", "episodes": 8, "episode_time": 20.0, "max_style_err": 0.061,
                                 "speed_tol": 0.2, "eval_seed": 1000}
    assert meta["agent_schedule"] == [[500, "data/agents/ct_agent_humanoid_amp_fast.txt"]]
    assert (tmp_path / "args/run_humanoid3d_amp_walk_trained_args.txt").is_file()
    with pytest.raises(SystemExit):
        parse_args(["--arg_file", "args/train_amp_humanoid3d_walk_fast_args.txt", "--output", str(run_dir), "--ship"])


def test_a_task_skill_ships_with_its_criterion_and_dataset(tmp_path):
    """An AMP task trained on a dataset of clips ships under the task criterion's bound, its
    `clip` the dataset's name."""
    from app.skill_package import write_package
    run_dir = write_run(tmp_path / "run")
    args = run_dir / "args.txt"
    args.write_text(args.read_text().replace("data/motions/humanoid3d_walk.txt", "data/datasets/dataset_locomotion.txt"))
    write_checkpoint_stub(run_dir)
    curve_cfg = {"seed": 1, "episodes": 8, "episode_time": 20.0, "eval_seed": 1000, "criterion": "task",
                 "min_task_reward": 0.7, "max_style_err": 0.061, "speed_tol": 0.2, "max_body_pos_err": 0.08}
    point = {"samples": 10, "iteration": 1, "wall_hours": 0.1, "workers": 2, "evaluation": {}}
    package = write_package("amp_heading", run_dir, point, run_dir / "agent0_model.ckpt", curve_cfg,
                            tmp_path / "policies", tmp_path / "args", ROOT)
    meta = json.loads((package / "metadata.json").read_text())
    assert (meta["skill"], meta["clip"]) == ("amp_heading", "dataset_locomotion")
    assert meta["criterion"] == {"kind": "task", "episodes": 8, "episode_time": 20.0, "min_task_reward": 0.7,
                                 "eval_seed": 1000}


@pytest.mark.parametrize("episodes, used", [(None, 5), ("2", 2)])
def test_a_skill_learned_from_demonstrations_names_them(tmp_path, episodes, used):
    """A GAIL walk's metadata names its dataset: the file, its hash, the episodes and steps it
    learned from (--demo_episodes keeps the first N) and the expert that recorded it."""
    import hashlib

    from app.skill_package import write_package
    from learning.demos import load_demos
    demo_file = "data/demos/humanoid3d_walk_trained_demos_fast.npz"
    run_dir = write_run(tmp_path / "run")
    with open(run_dir / "args.txt", "a") as f:
        f.write(f"--demo_file {demo_file}\n" + (f"--demo_episodes {episodes}\n" if episodes else ""))
    write_checkpoint_stub(run_dir)
    point = {"samples": 10, "iteration": 1, "wall_hours": 0.1, "workers": 1, "evaluation": {}}
    package = write_package("gail_walk", run_dir, point, run_dir / "agent0_model.ckpt", {"seed": 1},
                            tmp_path / "policies", tmp_path / "args", ROOT)
    demos = json.loads((package / "metadata.json").read_text())["demonstrations"]
    data = load_demos(demo_file)
    assert data.num_episodes == 5
    assert demos == {"file": demo_file, "sha256": hashlib.sha256((ROOT / demo_file).read_bytes()).hexdigest(),
                     "episodes": used, "steps": int(data.episode_starts[used]) if used < 5 else data.num_steps,
                     "file_episodes": 5, "expert_model_file": "data/policies/humanoid3d_walk_trained/agent0_model.ckpt"}


def test_shipping_over_a_package_is_refused_before_training(tmp_path):
    (tmp_path / "policies/humanoid3d_walk_trained").mkdir(parents=True)
    result = subprocess.run(skill_cmd(tmp_path), cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert result.returncode != 0
    assert "humanoid3d_walk_trained exists" in result.stderr.strip().splitlines()[-1]
    assert not (tmp_path / "run/train_stdout.txt").exists()


def test_a_skill_started_from_other_runs_records_each_stage(tmp_path):
    """--init_model_files: the package records the checkpoint it began from (its hash), the run
    folder that left it (samples and hours at its log's last row) and the shipped package that run
    began from, and the samples and hours of all three stages together."""
    import hashlib

    from app.skill_package import write_package
    walk = tmp_path / "policies_in/humanoid3d_walk_trained"
    walk.mkdir(parents=True)
    write_checkpoint_stub(walk)
    (walk / "metadata.json").write_text(json.dumps({"skill": "amp_walk", "samples": 2000, "training_hours": 2.0,
                                                     "commit": "abc"}))
    middle = write_run(tmp_path / "middle")
    (middle / "agent0_model.ckpt.data-00000-of-00001").write_bytes(b"middle weights")
    (middle / "agent0_model.ckpt.index").write_bytes(b"x")
    (middle / "agent0_log.txt").write_text("Iteration Wall_Time Samples Train_Return\n"
                                           "0 0.1 100 1.0\n1 0.5 300 2.0\n")
    with open(middle / "args.txt", "a") as f:
        f.write(f"--init_model_files {walk / 'agent0_model.ckpt'}\n")
    run_dir = write_run(tmp_path / "run")
    write_checkpoint_stub(run_dir)
    with open(run_dir / "args.txt", "a") as f:
        f.write(f"--init_model_files {middle / 'agent0_model.ckpt'}\n")
    point = {"samples": 10, "iteration": 1, "wall_hours": 0.25, "workers": 1, "evaluation": {}}
    package = write_package("amp_heading", run_dir, point, run_dir / "agent0_model.ckpt", {"seed": 1},
                            tmp_path / "policies", tmp_path / "args", ROOT)
    meta = json.loads((package / "metadata.json").read_text())
    source = meta["started_from"]
    assert source["model_files"] == str(middle / "agent0_model.ckpt")
    assert source["sha256"] == hashlib.sha256(b"middle weights").hexdigest()
    assert (source["run"], source["samples"], source["training_hours"]) == (str(middle), 300, 0.5)
    assert {k: source["started_from"][k] for k in ("package", "samples", "training_hours", "commit")} == {
        "package": "amp_walk", "samples": 2000, "training_hours": 2.0, "commit": "abc"}
    assert meta["samples_in_all"] == 2310 and meta["training_hours_in_all"] == pytest.approx(2.75)
    (middle / "agent0_log.txt").unlink()                    # a checkpoint whose training is unknown
    again = write_package("amp_heading", run_dir, point, run_dir / "agent0_model.ckpt", {"seed": 1},
                          tmp_path / "p2", tmp_path / "a2", ROOT)
    meta = json.loads((again / "metadata.json").read_text())
    assert set(meta["started_from"]) == {"model_files", "sha256"} and "samples_in_all" not in meta


def test_a_push_trained_skill_plays_without_pushes(tmp_path):
    """A run trained with --push_training ships a run_ file without the random pushes (it plays as
    it is evaluated) and metadata that say so and keep the pushes' arguments."""
    from app.skill_package import write_package
    from app.skill_recipes import PUSH_TRAINING_ARGS
    run_dir = write_run(tmp_path / "run")
    with (run_dir / "args.txt").open("a") as f:
        f.write(" ".join(PUSH_TRAINING_ARGS).replace(" --", "\n--") + "\n")
    write_checkpoint_stub(run_dir)
    point = {"samples": 10, "iteration": 1, "wall_hours": 0.1, "workers": 1, "evaluation": {}}
    package = write_package("walk", run_dir, point, run_dir / "agent0_model.ckpt", {"seed": 1, "push_training": True},
                            tmp_path / "policies", tmp_path / "args", ROOT)
    meta = json.loads((package / "metadata.json").read_text())
    assert meta["push_training"] is True and "--max_perturb 500" in meta["args"]
    played = (tmp_path / "args/run_humanoid3d_walk_trained_args.txt").read_text()
    assert "--scene imitate" in played and "perturb" not in played
