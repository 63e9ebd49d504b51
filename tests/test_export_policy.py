"""Policy export (scripts/export_policy.py): the ONNX model in onnxruntime and the numpy reader give
the agent's test-mode action (mean, un-normalised) to float32 rounding, for every registered actor
net, the wheel's pretrained walk (2018 layout), a freshly trained 2021 policy and a goal-conditioned
AMP task policy (gated net); the metadata; DeepMimic.py --policy_file; bad input as one line."""
import json
import re
import subprocess
import sys
from typing import NamedTuple

import numpy as np
import pytest

from app.build import build_world
from app.policy_export import actor_graph, entry_names, export_policy, policy_metadata, source_args
from app.rollout import update_world
from env.deepmimic_env import DeepMimicEnv
from DeepMimic_Optimizer import copy_run_inputs, train
from learning import checkpoint
from learning.agents.exported_policy_agent import use_exported_policy
from learning.nets.net import Net
from learning.nets.net_builder import register_net
from learning.policy_files import load_policy, write_policy
from learning.rl_world import RLWorld
from learning.tf_util import limit_tf_threads
from tests.toy_env import SMALL_NET, ShapedEnv, register_small_net, toy_args, write_agent_file
from util.arg_parser import load_args
from util.paths import project_root

limit_tf_threads()
register_small_net()

ROOT = project_root()
WALK_ARGS = ROOT / "args/run_humanoid3d_walk_wheel_args.txt"
TRAIN_WALK_ARGS = ROOT / "args/train_humanoid3d_walk_args.txt"
HEADING_ARGS = ROOT / "args/train_amp_heading_humanoid3d_locomotion_args.txt"
FORMATS = ("onnx", "npz")
# float32 rounding of the graph against the agent's float64 normalisation: a few float32 ulps of
# max(1, the largest action entry)
REL_TOL = 2e-6
TANH_NET = "tanh_trunk"


class TanhTrunk(Net):
    """A trunk with an op the export does not record."""

    def __init__(self, input_sizes, scope):
        super().__init__(scope)
        self.out_size = sum(input_sizes)

    def forward(self, ops, params, inputs):
        return ops.tanh(ops.concat(inputs))


register_net(TANH_NET, TanhTrunk)


def randomize(agent, rng):
    """Normalisers moved from their initial statistics (a tenth of a std, std x 0.8-1.25) and
    random actor weights (std 1 / sqrt(fan-in)); float32 values, as a checkpoint holds them."""
    for norm in (agent.s_norm, agent.g_norm):
        mean = norm.mean + 0.1 * norm.std * rng.normal(size=norm.size)
        norm.set_mean_std(mean.astype(np.float32), (norm.std * rng.uniform(0.8, 1.25, norm.size)).astype(np.float32))
    for var in agent.model.actor_vars:
        var.assign(rng.normal(0, 1 / np.sqrt(var.shape[0]), var.shape).astype(np.float32))
    agent._on_params_changed()


class Exported(NamedTuple):
    world: RLWorld          # built from the export's source: its agent 0 is the reference
    paths: dict             # format -> file
    policies: dict          # format -> loaded policy
    meta: dict


def export_files(world, graph, metadata, folder):
    paths = {fmt: folder / f"policy.{fmt}" for fmt in FORMATS}
    for path in paths.values():
        write_policy(path, graph, metadata)
    return Exported(world, paths, {fmt: load_policy(path) for fmt, path in paths.items()}, metadata)


def mean_actions(agent, states, goals):
    """The agent's own decisions in test mode (mean actions), float64."""
    agent.set_enable_training(False)
    return np.array([agent._decide_action(s, g)[0] for s, g in zip(states, goals)])


def max_diffs(agent, policies, states, goals):
    """({format: max |exported - agent action|} over the states, max(1, max |agent action|))."""
    want = mean_actions(agent, states, goals)
    goal_in = np.asarray(goals, np.float32) if agent.has_goal() else None
    diffs = {fmt: float(np.abs(p(np.asarray(states), goal_in) - want).max()) for fmt, p in policies.items()}
    return diffs, max(1.0, float(np.abs(want).max()))


def assert_close(diffs, scale):
    assert max(diffs.values()) < REL_TOL * scale, (diffs, scale)


def random_inputs(agent, rng, n=32):
    """States and goals around the normalisers' statistics, within a few std and well beyond."""
    spread = np.repeat([1.0, 5.0], n // 2)[:, None]
    states = agent.s_norm.mean + agent.s_norm.std * spread * rng.normal(size=(n, agent.s_norm.size))
    goals = agent.g_norm.mean + agent.g_norm.std * spread * rng.normal(size=(n, agent.g_norm.size))
    return states, goals


def rollout_inputs(world, frames=40):
    """States and goals of the agent's decisions over `frames` frames of test-mode episodes (a
    new episode after a fall goes on)."""
    world.set_enable_training(False)
    world.reset()
    path, states, goals, seen = world.agents[0].path, [], [], 0
    for _ in range(frames):
        update_world(world, 1 / 60)
        seen = 0 if len(path.states) < seen else seen       # an episode ended: its path was cleared
        states += path.states[seen:]
        goals += path.goals[seen:]
        seen = len(path.states)
    assert len(states) >= frames // 2 - 2
    return np.array(states), np.array(goals)


def check_exported(exported, rng, label):
    agent, policies = exported.world.agents[0], exported.policies
    for kind, (states, goals) in (("random", random_inputs(agent, rng)), ("rollout", rollout_inputs(exported.world))):
        diffs, scale = max_diffs(agent, policies, states, goals)
        print(f"{label}, {len(states)} {kind} states: max |exported - agent action| {json.dumps(diffs)}, "
              f"max |action| {scale:.3f}")
        assert_close(diffs, scale)


def reference_world(source):
    """The world the exported checkpoint runs in (seeded: the rollouts repeat)."""
    args = source_args(source)
    args.set("rand_seed", "7")
    return build_world(args)


@pytest.fixture(scope="module")
def walk(tmp_path_factory):
    """The wheel's walk (2018 layout) exported from its argument file, and the world that checkpoint runs in."""
    graph, meta = export_policy(WALK_ARGS, with_logstd=True)
    world = reference_world(WALK_ARGS)
    yield export_files(world, graph, meta, tmp_path_factory.mktemp("walk"))
    world.shutdown()


@pytest.fixture(scope="module")
def trained_2021(tmp_path_factory):
    """A 2021-layout PPO walk policy after one tiny training iteration, exported from its output
    directory (args.txt, the agent file's copy, agent0_model.ckpt)."""
    out = tmp_path_factory.mktemp("run")
    agent_file = out.parent / "tiny_ppo.txt"
    agent = json.loads((ROOT / "data/agents/ct_agent_humanoid_ppo.txt").read_text())
    agent.update(BatchSize=64, MiniBatchSize=32, TestEpisodes=0, OutputIters=1, IntOutputIters=1000)
    agent_file.write_text(json.dumps(agent))
    args = load_args(["--arg_file", str(TRAIN_WALK_ARGS), "--agent_files", str(agent_file), "--output_path",
                      str(out), "--int_output_path", "", "--tensorboard", "false", "--rand_seed", "1"])
    trainer = build_world(args)
    copy_run_inputs(args, str(out))
    train(trainer, max_iters=1)
    trainer.shutdown()
    agent_file.unlink()         # the export reads the copy in the output directory
    graph, meta = export_policy(out)
    world = reference_world(out)
    yield export_files(world, graph, meta, tmp_path_factory.mktemp("run_export"))
    world.shutdown()


def test_walk_2018_matches_agent(walk):
    check_exported(walk, np.random.default_rng(0), "walk 2018")
    log_std = walk.policies["onnx"].run(np.zeros((1, 197)))["log_std"]
    np.testing.assert_allclose(log_std, np.log(0.05 * walk.world.agents[0].a_norm.std), rtol=1e-6)
    np.testing.assert_array_equal(walk.policies["npz"].run(np.zeros((1, 197)))["log_std"], log_std)


def test_trained_2021_matches_agent(trained_2021):
    assert trained_2021.world.agents[0].s_norm.count > 0      # normalisers from the run's samples
    check_exported(trained_2021, np.random.default_rng(1), "trained 2021")
    assert set(trained_2021.policies["onnx"].run(np.zeros((2, 227)))) == {"action"}


def test_goal_conditioned_gated_amp_matches_agent(tmp_path):
    args = load_args(["--arg_file", str(HEADING_ARGS), "--output_path", str(tmp_path), "--tensorboard", "false",
                      "--rand_seed", "2"])
    src = build_world(args)
    randomize(src.agents[0], np.random.default_rng(2))
    src.agents[0].save_model(str(tmp_path / "agent0_model.ckpt"))
    copy_run_inputs(args, str(tmp_path))
    src.shutdown()
    graph, meta = export_policy(tmp_path)
    assert meta["actor_net"] == "fc_2layers_gated_1024units" and meta["goal_size"] == 3
    assert meta["goal_names"] == ["target_dir_x", "target_dir_z", "target_speed"]
    world = reference_world(tmp_path)
    try:
        check_exported(export_files(world, graph, meta, tmp_path / "export"), np.random.default_rng(3), "heading AMP")
    finally:
        world.shutdown()


@pytest.mark.parametrize("net", ["fc_2layers_1024units", "fc_2layers_gated_1024units", SMALL_NET, "fc_2layers_64units",
                                 "fc_2layers_512units"])
def test_every_registered_actor_net(tmp_path, net):
    world = RLWorld(ShapedEnv(12, 5, goal_size=3), toy_args(write_agent_file(tmp_path / "a.txt", ActorNet=net)))
    agent = world.agents[0]
    rng = np.random.default_rng(4)
    randomize(agent, rng)
    agent.a_norm.set_mean_std(rng.normal(size=5), rng.uniform(0.5, 2, 5))
    exported = export_files(world, actor_graph(agent), {}, tmp_path)
    assert_close(*max_diffs(agent, exported.policies, *random_inputs(agent, rng)))


def test_unsupported_net_is_named(tmp_path):
    world = RLWorld(ShapedEnv(4, 2), toy_args(write_agent_file(tmp_path / "a.txt", ActorNet=TANH_NET)))
    with pytest.raises(ValueError, match=f"actor net '{TANH_NET}' cannot be exported.*tanh"):
        actor_graph(world.agents[0])


def test_metadata_names_every_entry(walk, trained_2021):
    meta18, meta21 = walk.meta, trained_2021.meta
    assert trained_2021.policies["onnx"].metadata == trained_2021.policies["npz"].metadata == \
        {"format": "deepmimic-policy", "format_version": 1, **meta21}
    for meta in (meta18, meta21):
        assert len(meta["state_names"]) == meta["state_size"] and len(set(meta["state_names"])) == meta["state_size"]
        assert len(meta["action_names"]) == meta["action_size"] and len(set(meta["action_names"])) == meta["action_size"]
        assert meta["decision_rate_hz"] == 30 and meta["motion_file"] == "data/motions/humanoid3d_walk.txt"
        assert meta["character_file"] == "data/characters/humanoid3d.txt" and meta["project_version"]
        assert meta["action_relative_to_reference"] is False and meta["goal_size"] == 0
    assert (meta18["layout"], meta18["state_size"], meta18["action_size"]) == ("2018", 197, 36)
    assert meta18["controller_file"] == "data/controllers/humanoid3d_ctrl_2018.txt"
    assert meta18["state_names"][:4] == ["phase", "root_height", "root/pos_x", "root/pos_y"]
    assert meta18["state_names"][5:9] == ["root/rot_w", "root/rot_x", "root/rot_y", "root/rot_z"]
    assert meta18["action_names"][:5] == ["chest/angle", "chest/axis_x", "chest/axis_y", "chest/axis_z", "neck/angle"]
    assert (meta21["layout"], meta21["state_size"], meta21["action_size"]) == ("2021", 227, 28)
    assert meta21["state_names"][5:11] == [f"root/{v}_{c}" for v in ("normal", "tangent") for c in "xyz"]
    assert meta21["state_names"][-1] == "left_wrist/ang_vel_z"
    assert meta21["action_names"][:4] == ["chest/exp_map_x", "chest/exp_map_y", "chest/exp_map_z", "neck/exp_map_x"]
    assert "right_knee/angle" in meta21["action_names"]


@pytest.mark.parametrize("args_file", ["train_amp_dribble_humanoid3d_locomotion_args.txt",
                                       "train_amp_strike_humanoid3d_walk_punch_shipped_args.txt",
                                       "train_amp_heading_getup_humanoid3d_locomotion_getup_args.txt",
                                       "train_amp_target_humanoid3d_locomotion_args.txt", "train_dog3d_trot_args.txt"])
def test_task_scenes_name_every_entry(args_file):
    env = DeepMimicEnv(load_args(["--arg_file", str(ROOT / "args" / args_file)]))
    try:
        names = entry_names(env)
    finally:
        env.shutdown()
    for kind, size in (("state", env.get_state_size(0)), ("goal", env.get_goal_size(0)),
                       ("action", env.get_action_size(0))):
        assert len(names[f"{kind}_names"]) == len(set(names[f"{kind}_names"])) == size, kind


def test_ref_relative_actions_are_flagged():
    args = source_args(WALK_ARGS)
    args.set("ref_relative_actions", "true")
    world = build_world(args)
    try:
        assert policy_metadata(world, world.agents[0], WALK_ARGS)["action_relative_to_reference"] is True
    finally:
        world.shutdown()


@pytest.mark.parametrize("fmt", FORMATS)
def test_policy_files_are_checked(walk, tmp_path, fmt):
    world = RLWorld(ShapedEnv(5, 2), toy_args(write_agent_file(tmp_path / "a.txt")))
    with pytest.raises(ValueError, match=re.escape(f"{walk.paths[fmt]}: state_size 197 but the scene's is 5")):
        use_exported_policy(world, walk.paths[fmt])
    garbage = tmp_path / f"garbage.{fmt}"
    garbage.write_bytes(np.random.default_rng(6).bytes(300))
    with pytest.raises(ValueError, match=re.escape(f"{garbage}: not a readable exported policy")):
        load_policy(garbage)


def run(script, *args):
    """(exit status, stdout, the stderr lines holding `error:`)."""
    proc = subprocess.run([sys.executable, str(ROOT / script), *map(str, args)], capture_output=True, text=True,
                          timeout=300, cwd=ROOT)
    return proc.returncode, proc.stdout, [line for line in proc.stderr.splitlines() if "error:" in line]


def test_viewer_runs_an_exported_policy_like_its_checkpoint(tmp_path):
    policy = tmp_path / "walk.onnx"
    code, out, errors = run("scripts/export_policy.py", WALK_ARGS, "-o", policy)
    assert code == 0 and not errors and f"{policy}: onnx policy of the PPO agent" in out
    common = ["DeepMimic.py", "--arg_file", WALK_ARGS, "--headless", "--episodes", "1", "--rand_seed", "3",
              "--time_end_lim_min", "3", "--time_end_lim_max", "3"]
    summaries = []
    for extra in ((), ("--policy_file", policy)):
        code, out, errors = run(*common, *extra)
        assert code == 0 and not errors, out
        summaries.append(json.loads(out.split("summary:")[1].splitlines()[0]))
    print(f"viewer, checkpoint vs exported: {summaries}")
    ckpt, exported = summaries
    assert ckpt["falls"] == exported["falls"] == 0
    assert exported["mean_length_s"] == pytest.approx(ckpt["mean_length_s"], abs=1e-9)
    assert exported["mean_reward"] == pytest.approx(ckpt["mean_reward"], abs=1e-4)


@pytest.mark.parametrize("contents", ["garbage", "no_actor"])
def test_bad_checkpoint_is_one_line(tmp_path, contents):
    (tmp_path / "args.txt").write_text(TRAIN_WALK_ARGS.read_text())
    prefix = tmp_path / "agent0_model.ckpt"
    if contents == "garbage":
        for suffix in (checkpoint.INDEX_SUFFIX, checkpoint.DATA_SUFFIX):
            (tmp_path / f"agent0_model.ckpt{suffix}").write_bytes(np.random.default_rng(5).bytes(300))
        expected = f"{prefix}: unreadable checkpoint"
    else:
        checkpoint.write_checkpoint(prefix, {"agent/resource/s_norm/mean": np.zeros(227, np.float32)})
        expected = f"{prefix}: checkpoint lacks variable agent/main/actor/"
    code, _, errors = run("scripts/export_policy.py", tmp_path, "-o", tmp_path / "p.onnx")
    assert code == 2 and len(errors) == 1 and errors[0].startswith(f"export_policy.py: error: {expected}"), errors
    assert not (tmp_path / "p.onnx").exists()


def test_readme_shows_the_numpy_reader():
    """The export page's numpy example (docs/README_export.md, moved there from the README) is
    util/npz_policy.py's code (after its docstring), to the letter."""
    code = (ROOT / "util/npz_policy.py").read_text().split('"""\n', 2)[2].strip("\n")
    assert f"```python\n{code}\n```" in (ROOT / "docs/README_export.md").read_text()
