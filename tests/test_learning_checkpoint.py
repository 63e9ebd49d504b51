"""Checkpoints: TF1 format round trip, the wheel's 2018-layout walk policy, errors, resume state,
training started from another agent's checkpoint (--init_model_files)."""
import json

import numpy as np
import pybullet_data
import pytest
import tensorflow as tf

from learning import checkpoint
from learning.checkpoint import CheckpointError
from learning.configs.config import ConfigError
from learning.resume_state import read_resume_state
from learning.rl_world import RLWorld
from learning.tf_util import limit_tf_threads, seed_rank
from tests.toy_env import SMALL_NET, PointMassEnv, ShapedEnv, register_small_net, toy_args, write_agent_file
from util.paths import project_root

ROOT = project_root()

limit_tf_threads()
register_small_net()

WALK = f"{pybullet_data.getDataPath()}/data/policies/humanoid3d/humanoid3d_walk.ckpt"


def make_agent(tmp_path, env=None, name="a.txt", **overrides):
    world = RLWorld(env or PointMassEnv(), toy_args(write_agent_file(tmp_path / name, **overrides)))
    return world.agents[0]


def test_write_read_round_trip_is_tf1_readable(tmp_path):
    tensors = {"agent/main/actor/0/dense/kernel": np.arange(6, dtype=np.float32).reshape(2, 3),
               "agent/resource/s_norm/count": np.array([7], dtype=np.int32)}
    checkpoint.write_checkpoint(tmp_path / "out" / "m.ckpt", tensors)
    reader = tf.train.load_checkpoint(str(tmp_path / "out" / "m.ckpt"))
    assert reader.get_variable_to_shape_map() == {"agent/main/actor/0/dense/kernel": [2, 3],
                                                  "agent/resource/s_norm/count": [1]}
    assert reader.get_variable_to_dtype_map()["agent/resource/s_norm/count"] == tf.int32
    back = checkpoint.read_checkpoint(tmp_path / "out" / "m.ckpt")
    np.testing.assert_array_equal(back["agent/main/actor/0/dense/kernel"], tensors["agent/main/actor/0/dense/kernel"])
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["m.ckpt.data-00000-of-00001", "m.ckpt.index"]


def test_agent_save_load_round_trip(tmp_path):
    src = make_agent(tmp_path)
    src.s_norm.record(np.random.normal(2, 3, (100, 4)))
    src.s_norm.update()
    src.save_model(str(tmp_path / "agent0_model.ckpt"))
    names = set(checkpoint.read_checkpoint(tmp_path / "agent0_model.ckpt"))
    assert {"agent/main/actor/dist_gauss_diag/mean/kernel", "agent/main/actor/dist_gauss_diag/logstd/bias",
            "agent/main/critic/dense/bias", "agent/resource/s_norm/count", "agent/resource/g_norm/mean",
            "agent/resource/a_norm/std"} <= names
    dst = make_agent(tmp_path, name="b.txt")
    dst.load_model(str(tmp_path / "agent0_model.ckpt"))
    for name, var in src.model.variables.items():
        np.testing.assert_array_equal(dst.model.variables[name].numpy(), var.numpy())
    assert dst.s_norm.count == 100
    np.testing.assert_allclose(dst.s_norm.mean, src.s_norm.mean, rtol=1e-6)
    s = np.random.normal(size=(1, 4)).astype(np.float32)
    np.testing.assert_array_equal(dst.model.actor_mean_np([s]), src.model.actor_mean_np([s]))


def test_load_wheel_walk_checkpoint(tmp_path):
    raw = checkpoint.read_checkpoint(WALK)
    agent = make_agent(tmp_path, ShapedEnv(197, 36), ActorNet="fc_2layers_1024units",
                       CriticNet="fc_2layers_1024units", ExpParamsBeg={"Rate": 1, "Noise": 0.05},
                       ExpParamsEnd={"Rate": 0.2, "Noise": 0.05})
    agent.load_model(WALK)
    v = agent.model.variables
    assert v["agent/main/actor/0/dense/kernel"].shape == (197, 1024)
    np.testing.assert_array_equal(v["agent/main/actor/dist_gauss_diag/mean/kernel"].numpy(),
                                  raw["agent/main/actor/dense/kernel"])
    np.testing.assert_allclose(agent.model.logstd_np(), np.log(0.05), rtol=1e-6)   # not in the file
    assert agent.s_norm.count == 1000196
    np.testing.assert_allclose(agent.a_norm.mean, raw["agent/resource/a_norm/mean"], rtol=1e-6)

    # a state through the 2018 network by hand: normalise, two ReLU layers, heads; value via val_norm
    s = raw["agent/resource/s_norm/mean"] + raw["agent/resource/s_norm/std"] * np.random.RandomState(0).normal(size=197)
    x = ((s - raw["agent/resource/s_norm/mean"]) / raw["agent/resource/s_norm/std"]).astype(np.float64)

    def trunk(scope):
        h = np.maximum(x @ raw[f"{scope}/0/dense/kernel"] + raw[f"{scope}/0/dense/bias"], 0)
        return np.maximum(h @ raw[f"{scope}/1/dense/kernel"] + raw[f"{scope}/1/dense/bias"], 0)

    norm_mean = trunk("agent/main/actor") @ raw["agent/main/actor/dense/kernel"] + raw["agent/main/actor/dense/bias"]
    raw_val = trunk("agent/main/critic") @ raw["agent/main/critic/dense/kernel"] + raw["agent/main/critic/dense/bias"]
    value = raw["agent/resource/val_norm/mean"][0] + raw["agent/resource/val_norm/std"][0] * raw_val[0]
    inputs = agent._norm_inputs(s[None], np.zeros((1, 0)))
    np.testing.assert_allclose(agent.model.actor_mean_np(inputs)[0], norm_mean, rtol=1e-4, atol=1e-4)
    assert agent._eval_critic(s[None], np.zeros((1, 0)))[0] == pytest.approx(value, rel=1e-4)
    assert 0 < value < 20        # a value in [0, 1/(1-0.95)]
    agent.world.set_enable_training(False)      # mean actions
    action, _ = agent._decide_action(s, np.zeros(0))
    np.testing.assert_allclose(action, raw["agent/resource/a_norm/mean"] + raw["agent/resource/a_norm/std"] * norm_mean,
                               rtol=1e-4, atol=1e-4)


def test_shape_mismatch_is_one_clear_error(tmp_path):
    agent = make_agent(tmp_path, ShapedEnv(227, 28), ActorNet="fc_2layers_1024units",
                       CriticNet="fc_2layers_1024units")
    with pytest.raises(CheckpointError, match=r"humanoid3d_walk.ckpt: variable agent/main/actor/0/dense/kernel "
                                              r"has shape \[197, 1024\] in the checkpoint but \[227, 1024\] in the model"):
        agent.load_model(WALK)


def test_missing_checkpoint_and_variable(tmp_path):
    agent = make_agent(tmp_path)
    with pytest.raises(CheckpointError, match="checkpoint not found: nowhere/x.ckpt"):
        agent.load_model("nowhere/x.ckpt")
    checkpoint.write_checkpoint(tmp_path / "partial.ckpt", {"agent/resource/s_norm/mean": np.zeros(4, np.float32)})
    with pytest.raises(CheckpointError, match="lacks variable agent/main/actor/0/dense/kernel"):
        agent.load_model(str(tmp_path / "partial.ckpt"))


def test_resume_state_round_trip(tmp_path):
    src = make_agent(tmp_path)
    src.iter, src.total_sample_count, src.replay_buffer_initialized = 12, 3456, True
    src.actor_solver.update([np.ones(v.shape, np.float32) for v in src.model.actor_vars])
    src.save_model_and_resume_state(str(tmp_path / "m.ckpt"))
    dst = make_agent(tmp_path, name="b.txt")
    dst.load_model(str(tmp_path / "m.ckpt"))
    dst.load_resume_state(read_resume_state(tmp_path / "m.ckpt"))
    assert (dst.iter, dst.total_sample_count, dst.replay_buffer_initialized) == (12, 3456, True)
    assert dst.actor_solver.iter == 1
    for a, b in zip(src.actor_solver.slots, dst.actor_solver.slots):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    assert dst.env.sample_count == 3456
    with pytest.raises(CheckpointError, match="no resume state"):
        read_resume_state(tmp_path / "other.ckpt")


@pytest.mark.parametrize("skill", ["walk", "walk_COMenabled", "backflip", "jump", "spinkick"])
def test_every_wheel_checkpoint_loads(tmp_path, skill):
    agent = make_agent(tmp_path, ShapedEnv(197, 36), ActorNet="fc_2layers_1024units",
                       CriticNet="fc_2layers_1024units", ExpParamsBeg={"Rate": 1, "Noise": 0.05},
                       ExpParamsEnd={"Rate": 0.2, "Noise": 0.05})
    agent.load_model(f"data/policies/humanoid3d/humanoid3d_{skill}.ckpt")   # found in the wheel's data
    value = agent._eval_critic(agent.s_norm.mean[None], np.zeros((1, 0)))[0]
    assert agent.s_norm.count > 0 and -1 < value < 21


@pytest.mark.parametrize("renames_done", [0, 1])
def test_a_write_killed_between_the_renames_leaves_the_previous_checkpoint(tmp_path, monkeypatch, renames_done):
    """A run killed during write_checkpoint (simulated: the process 'dies' after 0 or 1 of the two
    renames) leaves a readable checkpoint: the new one, or the previous one kept beside it."""
    prefix = tmp_path / "m.ckpt"
    old = {"w": np.zeros((64, 64), dtype=np.float32)}
    new = {"w": np.ones((64, 64), dtype=np.float32), "extra": np.arange(100, dtype=np.float32)}
    checkpoint.write_checkpoint(prefix, old)
    real_replace, calls = checkpoint.os.replace, []

    def dying_replace(src, dst):
        if len(calls) == renames_done:
            raise SystemExit("killed")
        calls.append(dst)
        real_replace(src, dst)
    monkeypatch.setattr(checkpoint.os, "replace", dying_replace)
    with pytest.raises(SystemExit):
        checkpoint.write_checkpoint(prefix, new)
    monkeypatch.undo()
    back = checkpoint.read_checkpoint(prefix)
    np.testing.assert_array_equal(back["w"], old["w"])
    checkpoint.write_checkpoint(prefix, new)       # the next save replaces everything, leaves no .prev
    np.testing.assert_array_equal(checkpoint.read_checkpoint(prefix)["w"], new["w"])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.ckpt.data-00000-of-00001", "m.ckpt.index"]


def test_an_unreadable_checkpoint_without_a_previous_one_is_one_error(tmp_path):
    prefix = tmp_path / "m.ckpt"
    checkpoint.write_checkpoint(prefix, {"w": np.ones(1000, dtype=np.float32)})
    data = tmp_path / "m.ckpt.data-00000-of-00001"
    data.write_bytes(data.read_bytes()[:100])
    with pytest.raises(CheckpointError, match="m.ckpt: unreadable checkpoint"):
        checkpoint.read_checkpoint(prefix)


def _saved_state_policy(tmp_path):
    """A PPO agent on a 6-d state (no goal) with non-trivial weights and state statistics, saved."""
    src = make_agent(tmp_path, ShapedEnv(6, 2), name="src.txt", ActorInitOutputScale=1.0)
    src.s_norm.record(np.random.default_rng(1).normal(2, 3, (100, 6)))
    src.s_norm.update()
    src.save_model(str(tmp_path / "src.ckpt"))
    return src


def _goals_agent_keys(**overrides):
    keys = {k: v for k, v in json.loads((ROOT / "data/agents/ct_agent_goals.txt").read_text()).items()
            if k.startswith(("Goal", "Inverse", "NumGoals", "Stability", "Reward", "Action", "MotionPrior"))}
    return {**keys, "AgentType": "Goals", "GoalActorNet": SMALL_NET, "GoalCriticNet": SMALL_NET,
            "InverseModelNet": SMALL_NET, **overrides}


@pytest.mark.parametrize("agent_type", ["PPO", "Goals"])
def test_init_model_starts_a_goal_conditioned_policy_from_a_state_only_one(tmp_path, agent_type):
    """--init_model_files: a policy whose input adds the scene's goal to the same state starts
    acting as the saved one, whatever the goal holds, and its critic alike; the goal hierarchy's
    one-hot goal rows keep their own initial draw (the goals start apart), so with those rows set
    to zero it too acts as the saved one. The state normaliser comes with its count, the goal's
    stays fresh, and what the checkpoint lacks (the goal policy, the inverse model) is no error."""
    src = _saved_state_policy(tmp_path)
    keys = _goals_agent_keys() if agent_type == "Goals" else {"AgentType": agent_type}
    agent_file = write_agent_file(tmp_path / "dst.txt", **keys)
    world = RLWorld(ShapedEnv(6, 2, goal_size=3), toy_args(agent_file, "--init_model_files", tmp_path / "src.ckpt"))
    dst = world.agents[0]
    actor, critic = (dst.model.variables[f"agent/main/{net}/0/dense/kernel"] for net in ("actor", "critic"))
    assert actor.shape[0] == 6 + 3 + (4 if agent_type == "Goals" else 0) and not actor.numpy()[6:9].any()
    if agent_type == "Goals":
        rng = np.random.default_rng(2)
        s, g = rng.normal(size=6), rng.normal(size=3)
        actions = []
        for goal in range(4):
            dst.goal_id = goal
            actions.append(dst.calc_action(s, g))
        assert not np.allclose(actions[0], actions[1])          # the goals start apart
        for kernel in (actor, critic):
            assert np.abs(kernel.numpy()[9:]).min() > 0
            kernel.assign(np.concatenate([kernel.numpy()[:9], np.zeros_like(kernel.numpy()[9:])]))
        dst.model.refresh_mirror()
    rng = np.random.default_rng(0)
    for _ in range(3):
        s, g = rng.normal(size=6), rng.normal(size=3)
        if agent_type == "Goals":
            dst.goal_id = int(rng.integers(4))
        np.testing.assert_allclose(dst.calc_action(s, g), src.calc_action(s, np.zeros(0)), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(dst.model.critic_np(dst._decision_inputs(s, g)),
                                   src.model.critic_np(src._decision_inputs(s, np.zeros(0))), rtol=1e-5, atol=1e-6)
    assert dst.s_norm.count == 100 and dst.g_norm.count == 0


COMMANDS = [[1.0, 0.0, 1.0], [1.0, 0.0, 3.5], [0.5, -0.87, 1.5], [0.5, 0.87, 1.5]]


def _saved_goal_policy(tmp_path):
    """A PPO agent on a 6-d state and a 3-d goal, with non-trivial weights and statistics, saved."""
    src = make_agent(tmp_path, ShapedEnv(6, 2, goal_size=3), name="src.txt", ActorInitOutputScale=1.0)
    rng = np.random.default_rng(1)
    src.s_norm.record(rng.normal(2, 3, (100, 6)))
    src.g_norm.record(rng.normal([0.5, 0, 2.5], [0.3, 0.5, 1.2], (100, 3)))
    for norm in (src.s_norm, src.g_norm):
        norm.update()
    src.save_model(str(tmp_path / "src.ckpt"))
    return src


def test_init_goal_commands_start_each_goal_as_the_checkpoint_under_its_command(tmp_path):
    """InitGoalCommands: the hierarchy's action policy (state and one-hot goal, no scene goal)
    started from a goal-conditioned policy acts, under goal k, as that policy with its goal input
    held at command k, and its critic values alike, whatever GoalInputScale."""
    src = _saved_goal_policy(tmp_path)
    agent_file = write_agent_file(tmp_path / "dst.txt", **_goals_agent_keys(InitGoalCommands=COMMANDS, GoalInputScale=2.5))
    dst = RLWorld(ShapedEnv(6, 2), toy_args(agent_file, "--init_model_files", tmp_path / "src.ckpt")).agents[0]
    rng = np.random.default_rng(0)
    for _ in range(2):
        s = rng.normal(2, 3, size=6)
        actions = []
        for goal, command in enumerate(COMMANDS):
            dst.goal_id = goal
            actions.append(dst.calc_action(s, np.zeros(0)))
            np.testing.assert_allclose(actions[-1], src.calc_action(s, np.array(command)), rtol=1e-4, atol=1e-5)
            np.testing.assert_allclose(dst.model.critic_np(dst._decision_inputs(s, np.zeros(0))),
                                       src.model.critic_np(src._decision_inputs(s, np.array(command))),
                                       rtol=1e-4, atol=1e-5)
        assert not np.allclose(actions[0], actions[1])
    assert dst.s_norm.count == 100


def test_init_goal_commands_errors(tmp_path):
    """A command of another length than the checkpoint's goal, a checkpoint without a goal, and an
    action policy that also reads the scene's goal are each one error."""
    _saved_goal_policy(tmp_path)
    short = write_agent_file(tmp_path / "short.txt", **_goals_agent_keys(InitGoalCommands=[c[:2] for c in COMMANDS]))
    with pytest.raises(CheckpointError, match=r"src.ckpt: InitGoalCommands \[1.0, 0.0\] has 2 entries, the checkpoint's goal 3"):
        RLWorld(ShapedEnv(6, 2), toy_args(short, "--init_model_files", tmp_path / "src.ckpt"))
    both = write_agent_file(tmp_path / "both.txt", **_goals_agent_keys(InitGoalCommands=COMMANDS))
    with pytest.raises(ConfigError, match="InitGoalCommands: the action policy's input must be the state and the goal's one-hot alone"):
        RLWorld(ShapedEnv(6, 2, goal_size=3), toy_args(both, "--init_model_files", tmp_path / "src.ckpt"))
    _saved_state_policy(tmp_path)
    with pytest.raises(CheckpointError, match="InitGoalCommands needs a goal-conditioned policy's checkpoint"):
        RLWorld(ShapedEnv(6, 2), toy_args(both, "--init_model_files", tmp_path / "src.ckpt"))


def test_init_model_starts_a_task_hierarchy_from_a_goal_free_one(tmp_path):
    """A hierarchy trained on a scene without a goal, started (--init_model_files) on a task scene
    with a 3-d goal, the action policy frozen and not reading the task's goal: every goal acts as
    it did, and the goal policy, widened for the task's goal with zero rows, chooses as it did."""
    keys = _goals_agent_keys(GoalInputScale=2.0)
    src = RLWorld(ShapedEnv(6, 2), toy_args(write_agent_file(tmp_path / "src.txt", **keys))).agents[0]
    src.s_norm.record(np.random.default_rng(1).normal(2, 3, (100, 6)))
    src.s_norm.update()
    src.save_model(str(tmp_path / "src.ckpt"))
    task = write_agent_file(tmp_path / "task.txt", **{**keys, "TrainActionPolicy": False, "ActionPolicyEnvGoal": False,
                                                      "MotionPriorWeight": 0})
    dst = RLWorld(ShapedEnv(6, 2, goal_size=3), toy_args(task, "--init_model_files", tmp_path / "src.ckpt")).agents[0]
    assert not dst.goal_policy.variables["agent/goal/actor/0/dense/kernel"].numpy()[6:].any()
    rng = np.random.default_rng(0)
    for _ in range(2):
        s, g = rng.normal(2, 3, size=6), rng.normal(size=3)
        for goal in range(4):
            src.goal_id = dst.goal_id = goal
            np.testing.assert_allclose(dst.calc_action(s, g), src.calc_action(s, np.zeros(0)), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(dst.goal_policy.probs_np(dst._norm_inputs(s[None], g[None])),
                                   src.goal_policy.probs_np(src._norm_inputs(s[None], np.zeros((1, 0)))), rtol=1e-5)


def test_init_model_starts_a_goal_only_goal_policy_afresh(tmp_path):
    """GoalPolicyState false: started from a hierarchy whose goal policy saw the state, the goal
    policy (which sees the task's goal alone) keeps its own initial draw, and every goal still acts
    as it did."""
    keys = _goals_agent_keys(GoalInputScale=2.0)
    src = RLWorld(ShapedEnv(6, 2), toy_args(write_agent_file(tmp_path / "src.txt", **keys))).agents[0]
    src.save_model(str(tmp_path / "src.ckpt"))
    task_keys = {**keys, "TrainActionPolicy": False, "ActionPolicyEnvGoal": False, "MotionPriorWeight": 0,
                 "GoalPolicyState": False}
    task = write_agent_file(tmp_path / "task.txt", **task_keys)
    seed_rank(3)
    fresh = RLWorld(ShapedEnv(6, 2, goal_size=3), toy_args(task)).agents[0]
    seed_rank(3)
    dst = RLWorld(ShapedEnv(6, 2, goal_size=3), toy_args(task, "--init_model_files", tmp_path / "src.ckpt")).agents[0]
    assert dst.goal_policy.variables["agent/goal/actor/0/dense/kernel"].shape[0] == 3
    for name, var in dst.goal_policy.variables.items():
        np.testing.assert_array_equal(var.numpy(), fresh.goal_policy.variables[name].numpy(), err_msg=name)
    s = np.random.default_rng(0).normal(size=6)
    for goal in range(4):
        src.goal_id = dst.goal_id = goal
        np.testing.assert_allclose(dst.calc_action(s, np.ones(3)), src.calc_action(s, np.zeros(0)), rtol=1e-5, atol=1e-6)


def test_init_model_refuses_another_state(tmp_path):
    """A checkpoint of another state size is one error naming the file and the variable."""
    _saved_state_policy(tmp_path)
    agent = make_agent(tmp_path, ShapedEnv(7, 2), name="seven.txt")
    with pytest.raises(CheckpointError, match=r"src.ckpt: variable agent/main/actor/0/dense/kernel has shape "
                                              r"\[6, 32\] in the checkpoint but \[7, 32\] in the model"):
        agent.init_model(str(tmp_path / "src.ckpt"))
