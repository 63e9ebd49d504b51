"""Demonstration datasets (learning/demos.py, recorded by app/record_demos.py): the 2018 -> 2021
action conversion is exact, the recorded states are what a 2021 scene records in the same physical
state, a short recording
round-trips through the file, mismatched or broken files are refused with one line naming the file
and the field, and the shipped dataset matches the GAIL training scene. The project's trained walk
(actions relative to the reference, reference poses in the state) records in its own layout, or
in the plain training layout through its PD targets."""
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from app.build import build_world
from app.record_demos import TargetLayout, record_demos
from env.deepmimic_env import DeepMimicEnv
from learning.demos import check_against, dataset_layout, load_demos, load_demos_for, save_demos, scene_layout
from util.arg_parser import load_args

ROOT = Path(__file__).resolve().parent.parent
RUN_2018 = str(ROOT / "args/run_humanoid3d_walk_wheel_args.txt")
TRAIN_GAIL = str(ROOT / "args/train_gail_humanoid3d_walk_args.txt")
RUN_TRAINED = str(ROOT / "args/run_humanoid3d_walk_args.txt")
SHIPPED = ROOT / "data/demos/humanoid3d_walk_demos.npz"


@pytest.fixture(scope="module")
def expert_world():
    world = build_world(load_args(["--arg_file", RUN_2018, "--rand_seed", "2"]))
    yield world
    world.shutdown()


@pytest.fixture(scope="module")
def train_env():
    env = DeepMimicEnv(load_args(["--arg_file", TRAIN_GAIL]), seed=0)
    yield env
    env.shutdown()


def same_rotations(q1, q2):
    """|<q1, q2>| = 1 per row: the same rotation (q and -q)."""
    return np.abs(np.sum(q1 * q2, axis=-1))


def test_2018_actions_convert_exactly(expert_world):
    scene = expert_world.env
    target = TargetLayout(scene, "data/controllers/humanoid3d_ctrl.txt")
    src, dst = scene.ctrl.action_layout, target.action_layout
    assert (src.size, dst.size) == (36, 28)
    rng = np.random.default_rng(0)
    for _ in range(50):
        action = rng.uniform(src.bound_min, src.bound_max)
        converted = target.convert(action)
        q_src, rev_src = src.to_targets(action)
        q_dst, rev_dst = dst.to_targets(converted)
        np.testing.assert_allclose(same_rotations(q_src, q_dst), 1.0, atol=1e-12)
        np.testing.assert_array_equal(rev_src, rev_dst)
        assert np.all(np.linalg.norm(converted[dst.sph_cols], axis=1) <= np.pi + 1e-12)


def test_recorded_states_are_the_training_scenes(expert_world, train_env):
    """The 2021 scene placed in the 2018 scene's physical state (pose, velocity, controller time)
    records the state the recorder writes for it."""
    scene = expert_world.env
    target = TargetLayout(scene, "data/controllers/humanoid3d_ctrl.txt")
    for _ in range(3):
        for _ in range(7):
            expert_world.env.update(1 / 240)
        pose, vel = scene.sim_char.get_state()
        other = train_env
        other.sim_char.set_state(pose, vel)
        other.ctrl.time = scene.ctrl.time
        other._touch()
        np.testing.assert_allclose(target.record_state(scene.record_state(0)), train_env.record_state(0),
                                   rtol=1e-9, atol=1e-9)


def test_short_recording_round_trip(expert_world, train_env, tmp_path):
    data = record_demos(expert_world, 2, episode_time=0.5, log=lambda line: None)
    assert data.num_episodes == 2 and data.states.shape == (30, 227) and data.actions.shape == (30, 28)
    np.testing.assert_array_equal(data.episode_starts, [0, 15])
    np.testing.assert_allclose(data.times[:15], np.arange(15) / 30, atol=1e-9)
    path = tmp_path / "demos.npz"
    save_demos(path, data)
    meta = json.loads(path.with_suffix(".json").read_text())
    assert meta["layout"] == "2021" and meta["expert"]["layout"] == "2018"
    assert meta["expert"]["model_file"] == "data/policies/humanoid3d/humanoid3d_walk.ckpt"
    loaded = load_demos_for(path, train_env)
    np.testing.assert_array_equal(loaded.states, data.states.astype(np.float32))
    np.testing.assert_array_equal(loaded.actions, data.actions)
    assert loaded.metadata == meta
    with pytest.raises(ValueError) as err:
        load_demos_for(path, expert_world.env)
    assert str(err.value) == (f"{path}: state_size: 227 in the demonstrations, 197 in the scene "
                              "(record them in the training scene's layout)")


def test_broken_files_name_the_field(tmp_path):
    data = load_demos(SHIPPED)
    path = tmp_path / "bad.npz"
    with np.load(SHIPPED) as npz:
        arrays = {k: npz[k] for k in npz.files}
    np.savez(path, **{**arrays, "actions": arrays["actions"][:-1]})
    with pytest.raises(ValueError, match=r"bad.npz: actions: 1499 rows for 1500 states"):
        load_demos(path)
    np.savez(path, **{k: v for k, v in arrays.items() if k != "times"})
    with pytest.raises(ValueError, match=r"bad.npz: times: missing from the demonstration file"):
        load_demos(path)
    with pytest.raises(ValueError, match="nothing.npz: demonstration file not found"):
        load_demos(tmp_path / "nothing.npz")
    with pytest.raises(ValueError, match=r"x.npz: record_world_root_rot: True in the demonstrations, False"):
        check_against(data, {**data.metadata, "record_world_root_rot": False}, "x.npz")


def test_a_dataset_of_another_clip_is_refused_by_name():
    """The phase and the reference's poses in a state are the clip's: the backflip's demonstrations
    do not train the spinkick's scene, though every size and option matches. A dataset without
    "motion" is judged by its motion_file's name; one naming no clip is not judged on it."""
    env = DeepMimicEnv(load_args(["--arg_file", str(ROOT / "args/train_humanoid3d_spinkick_fast_args.txt")]), seed=0)
    try:
        path = ROOT / "data/demos/humanoid3d_backflip_trained_demos_fast.npz"
        with pytest.raises(ValueError) as err:
            load_demos_for(path, env)
        assert str(err.value) == (f"{path}: motion: 'humanoid3d_backflip.txt' in the demonstrations, "
                                  "'humanoid3d_spinkick.txt' in the scene (record them in the training scene's layout)")
        expected = scene_layout(env)
    finally:
        env.shutdown()
    data = load_demos(path)
    meta = {k: v for k, v in data.metadata.items() if k != "motion"}
    assert dataset_layout(meta)["motion"] == "humanoid3d_backflip.txt"
    data.metadata = {**meta, "motion_file": "elsewhere/humanoid3d_spinkick.txt"}
    check_against(data, expected, "x.npz")
    data.metadata = {k: v for k, v in meta.items() if k != "motion_file"}
    check_against(data, expected, "x.npz")


# run_args: the command as recorded, under the run_ files' names then (the wheel's walk is now
# run_humanoid3d_walk_wheel_args.txt, the project's walk run_humanoid3d_walk_args.txt)
@pytest.mark.parametrize("name, run_args, steps, reward", [
    ("humanoid3d_walk_demos", "run_humanoid3d_walk_args.txt", 1500, 0.8),
    ("humanoid3d_walk_trained_demos", "run_humanoid3d_walk_trained_args.txt", 3000, 0.9)])
def test_shipped_datasets_match_the_gail_scene(train_env, name, run_args, steps, reward):
    """The wheel's walk (10 episodes of 5 s) and the project's trained walk (5 of 20 s)."""
    path = ROOT / "data/demos" / f"{name}.npz"
    assert path.stat().st_size < 3_500_000
    data = load_demos_for(path, train_env)
    meta = data.metadata
    assert data.num_steps == steps
    assert {k: dataset_layout(meta)[k] for k in scene_layout(train_env)} == scene_layout(train_env)
    assert meta["command"].startswith(f".venv/bin/python DeepMimic.py --arg_file args/{run_args}")
    assert f"--record_demos data/demos/{name}.npz" in meta["command"]
    assert meta["falls"] == 0 and meta["mean_env_reward"] > reward
    assert json.loads(path.with_suffix(".json").read_text()) == meta


@pytest.mark.parametrize("clip, arg_file, reward", [
    ("walk", "train_gail_humanoid3d_walk_fast_args.txt", 0.9),
    ("run", "train_humanoid3d_run_fast_args.txt", 0.85),
    ("spinkick", "train_humanoid3d_spinkick_fast_args.txt", 0.79),
    ("backflip", "train_humanoid3d_backflip_fast_args.txt", 0.78),
    ("cartwheel", "train_humanoid3d_cartwheel_fast_args.txt", 0.85)])
def test_trained_skill_datasets_match_their_fast_scenes(clip, arg_file, reward):
    """The skills trained here, recorded in the fast recipe's layout (5 episodes of 20 s, mean
    actions): each matches its clip's fast scene (the walk's: the fast GAIL walk's), names its
    policy's metadata and its clean commit, and keeps its expert's quality (no fall)."""
    env = DeepMimicEnv(load_args(["--arg_file", str(ROOT / "args" / arg_file)]), seed=0)
    try:
        path = ROOT / f"data/demos/humanoid3d_{clip}_trained_demos_fast.npz"
        data = load_demos_for(path, env)
    finally:
        env.shutdown()
    meta = data.metadata
    assert path.stat().st_size < 4_500_000
    assert data.num_steps == 3000 and data.num_episodes == 5 and meta["falls"] == 0
    assert meta["action_conversion"] == "none" and meta["tar_obs_steps"] == [1, 2, 3]
    assert meta["action_relative_to_reference"] is True
    assert meta["mean_env_reward"] > reward and meta["motion_file"] == f"data/motions/humanoid3d_{clip}.txt"
    assert meta["expert"]["policy_metadata"] == f"data/policies/humanoid3d_{clip}_trained/metadata.json"
    assert meta["commit"] and meta["commit_dirty"] is False
    assert meta["command"].startswith(f".venv/bin/python DeepMimic.py --arg_file args/run_humanoid3d_{clip}_trained_args.txt")
    assert json.loads(path.with_suffix(".json").read_text()) == meta


def test_the_recorder_names_a_shipped_policys_metadata():
    """policy_metadata: the metadata.json beside a checkpoint of data/policies/<name>/, none for
    the wheel's checkpoints (no metadata beside them) or no model."""
    from app.record_demos import policy_metadata
    assert policy_metadata("data/policies/humanoid3d_walk_trained/agent0_model.ckpt") == \
        "data/policies/humanoid3d_walk_trained/metadata.json"
    assert policy_metadata("data/policies/humanoid3d/humanoid3d_walk.ckpt") is None
    assert policy_metadata("none") is None


def test_trained_walk_dataset_names_its_policy():
    meta = load_demos(ROOT / "data/demos/humanoid3d_walk_trained_demos.npz").metadata
    assert meta["expert"]["policy_metadata"] == "data/policies/humanoid3d_walk_trained/metadata.json"
    assert meta["commit"] and meta["commit_dirty"] is False
    assert meta["expert"]["action_relative_to_reference"] is True and meta["action_relative_to_reference"] is False


def test_record_demos_command_line(tmp_path):
    """The DeepMimic.py entry point writes a dataset; a bad --demo_actions is one line."""
    out = tmp_path / "cli.npz"
    cmd = [sys.executable, "DeepMimic.py", "--arg_file", RUN_2018, "--headless", "--episodes", "1",
           "--demo_episode_time", "0.2", "--record_demos", str(out)]
    result = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-2000:]
    assert load_demos(out).num_steps == 6 and "written to" in result.stdout
    bad = subprocess.run(cmd[:-2] + ["--record_demos", str(out), "--demo_actions", "best"], cwd=ROOT,
                         capture_output=True, text=True, timeout=300)
    assert bad.returncode == 2
    assert bad.stderr.strip().splitlines() == ["DeepMimic.py: error: --demo_actions: expected mean or sample, got 'best'"]


@pytest.fixture(scope="module")
def trained_world():
    world = build_world(load_args(["--arg_file", RUN_TRAINED, "--rand_seed", "3"]))
    yield world
    world.shutdown()


def test_trained_walk_records_in_its_own_layout(trained_world, tmp_path):
    """Without --demo_ctrl_file the project's walk is recorded as its policy saw and acted: the
    states it decided on and its relative actions, the scene's options in the metadata; a scene
    with the same args takes the file, the plain GAIL scene and one without relative actions are
    refused naming the field."""
    agent, scene = trained_world.agents[0], trained_world.env
    seen = []
    calc_action = agent.calc_action

    def spy(s, g, noise=None):
        a = calc_action(s, g, noise)
        seen.append((np.array(s), np.array(a)))
        return a

    agent.calc_action = spy
    try:
        data = record_demos(trained_world, 1, episode_time=0.3, log=lambda line: None)
    finally:
        agent.calc_action = calc_action
    assert data.states.shape == (9, scene.get_state_size(0)) and scene.get_state_size(0) > 227
    np.testing.assert_array_equal(data.states, np.array([s for s, _ in seen], np.float32))
    np.testing.assert_array_equal(data.actions, np.array([a for _, a in seen]))
    meta = data.metadata
    assert meta["action_relative_to_reference"] is True and meta["tar_obs_steps"] == [1, 2, 3]
    assert meta["action_conversion"] == "none" and meta["expert"]["action_relative_to_reference"] is True
    path = tmp_path / "own.npz"
    save_demos(path, data)
    load_demos_for(path, scene)
    with pytest.raises(ValueError, match=r"own.npz: state_size: \d+ in the demonstrations, 227 in the scene"):
        check_against(load_demos(path), {**scene_layout(scene), "state_size": 227}, path)
    with pytest.raises(ValueError, match=r"own.npz: action_relative_to_reference: True in the demonstrations, "
                                         r"False in the scene"):
        check_against(load_demos(path), {**scene_layout(scene), "action_relative_to_reference": False}, path)


def test_trained_walk_converts_through_its_targets(trained_world, train_env, tmp_path):
    """With the plain training controller, a relative action is recorded as the absolute action
    whose PD targets are the ones the relative action set about the reference; the dataset loads
    in the plain GAIL scene."""
    scene = trained_world.env
    target = TargetLayout(scene, "data/controllers/humanoid3d_ctrl.txt")
    assert scene.ref_relative and not target.native
    rng = np.random.default_rng(4)
    for _ in range(5):
        trained_world.env.update(1 / 30)
        action = rng.normal(0.0, 0.3, scene.get_action_size(0))
        q_rel, rev_rel = scene.action_targets(action)
        q_abs, rev_abs = target.action_layout.to_targets(target.convert(action))
        np.testing.assert_allclose(same_rotations(q_rel, q_abs), 1.0, atol=1e-12)
        np.testing.assert_allclose(rev_rel, rev_abs, atol=1e-12)
        plain_q, _ = target.action_layout.to_targets(action)
        assert np.min(same_rotations(plain_q, q_abs)) < 0.99      # the reference is not left out
    data = record_demos(trained_world, 1, target_ctrl_file="data/controllers/humanoid3d_ctrl.txt",
                        episode_time=0.2, log=lambda line: None)
    assert data.metadata["action_relative_to_reference"] is False and data.metadata["tar_obs_steps"] == []
    save_demos(tmp_path / "plain.npz", data)
    assert load_demos_for(tmp_path / "plain.npz", train_env).actions.shape == (6, 28)
