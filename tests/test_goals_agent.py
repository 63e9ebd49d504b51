"""GoalsAgent on the goals_point scene: config errors name their key; goals are chosen every
GoalSteps decisions and kept between; a short training run logs every column; its checkpoint
holds the three networks in TF1 names and loads into a fresh agent; --resume continues the run
with its habituation state."""
import json

import numpy as np
import pytest
import tensorflow as tf

from tests.mpi_helpers import read_log
from tests.test_learning_ppo import run_until

from app.rollout import update_world
from env.deepmimic_env import DeepMimicEnv
from learning.agent_builder import load_agent_config
from learning.agents.goals_agent import LOG_COLUMNS, GoalsAgent
from learning.checkpoint import read_checkpoint
from learning.configs.config import ConfigError
from learning.rl_world import RLWorld
from learning.tf_util import limit_tf_threads, seed_rank
from util.arg_parser import load_args
from util.paths import project_root

limit_tf_threads()

ROOT = project_root()
ARGS = str(ROOT / "args/train_goals_goals_point_args.txt")
AGENT = json.loads((ROOT / "data/agents/ct_agent_goals.txt").read_text())
FAST = {"BatchSize": 512, "MiniBatchSize": 64, "GoalMiniBatchSize": 16, "Epochs": 1, "OutputIters": 2}
REQUIRED_COLUMNS = ["InvModel_Action_Err", "InvModel_Goal_Acc", "Stability_Reward_Mean",
                    "Stability_Habituation_Min", "Reward_Habituation", "Goals_Used"]


def write_agent(path, **overrides):
    path.write_text(json.dumps({**AGENT, **FAST, **overrides}))
    return path


def make_world(tmp_path, *extra, seed=0, **overrides):
    agent_file = write_agent(tmp_path / "agent.txt", **overrides)
    args = load_args(["--arg_file", ARGS, "--agent_files", str(agent_file), "--output_path", str(tmp_path / "out"),
                      "--int_output_path", "", "--tensorboard", "false", *map(str, extra)])
    return RLWorld(DeepMimicEnv(args, seed=seed), args)




@pytest.mark.parametrize("overrides,match", [
    ({"NumGoals": 1}, "NumGoals: must be >= 2"),
    ({"GoalSteps": 0}, "GoalSteps: must be >= 1"),
    ({"GoalStep": 3}, "GoalStep: unknown key"),
    ({"InverseModelGoalErrorBase": 1.5}, r"InverseModelGoalErrorBase: must be in \(0, 1\)"),
    ({"StabilityRestorationFactor": -0.1}, r"StabilityRestorationFactor: must be in \[0, 1\]"),
    ({"ActionErrorFactor": -1}, "ActionErrorFactor: must be >= 0"),
    ({"GoalDiscount": 1.0}, r"GoalDiscount: must be in \[0, 1\)"),
    ({"InverseModelNet": "nope"}, "InverseModelNet: unknown net 'nope'"),
    ({"NumGoals": "four"}, "NumGoals: expects an integer"),
])
def test_config_errors_name_the_key(tmp_path, overrides, match):
    path = write_agent(tmp_path / "agent.txt", **overrides)
    with pytest.raises(ConfigError, match=match):
        load_agent_config(str(path))


def test_config_missing_required_net(tmp_path):
    data = {k: v for k, v in {**AGENT, **FAST}.items() if k != "GoalActorNet"}
    path = tmp_path / "agent.txt"
    path.write_text(json.dumps(data))
    with pytest.raises(ConfigError, match="GoalActorNet: required key missing"):
        load_agent_config(str(path))


def test_defaults_and_registry(tmp_path):
    cls, config, _ = load_agent_config(str(write_agent(tmp_path / "agent.txt")))
    assert cls is GoalsAgent and config.num_goals == 4 and config.goal_steps == 10


def test_goals_chosen_every_goal_steps(tmp_path):
    seed_rank(3)
    world = make_world(tmp_path, GoalSteps=4)
    agent = world.agents[0]
    while len(agent.path.actions) < 13:
        update_world(world, 1 / 60)
    flags = np.array(agent.path.flags)
    starts = np.nonzero(flags & GoalsAgent.GOAL_START_FLAG)[0]
    assert list(starts[starts < 13]) == [0, 4, 8, 12]
    goal_ids = np.array(agent.path.extras["goal_ids"])
    for s in (0, 4, 8):
        assert np.all(goal_ids[s:s + 4] == goal_ids[s])
    logps = np.array(agent.path.extras["goal_logps"])
    assert np.all(logps[starts] < 0) and np.all(np.delete(logps, starts) == 0)
    assert len(agent.path.extras["reward_habs"]) == len(agent.path.rewards)
    world.shutdown()


def test_training_logs_checkpoints_and_resume(tmp_path):
    seed_rank(4)
    world = make_world(tmp_path)
    agent = world.agents[0]
    run_until(world, 4)
    world.save_outputs()
    out = tmp_path / "out"
    header, rows = read_log(out / "agent0_log.txt")
    for column in REQUIRED_COLUMNS + list(LOG_COLUMNS) + ["Actor_Loss", "Critic_Loss"]:
        assert column in header, column
    assert len(rows) == 4 and np.all(np.isfinite(rows))
    col = {name: rows[:, i] for i, name in enumerate(header)}
    assert np.all((col["InvModel_Goal_Acc"] >= 0) & (col["InvModel_Goal_Acc"] <= 1))
    assert np.all((col["Stability_Reward_Mean"] >= -1) & (col["Stability_Reward_Mean"] <= 1))
    assert np.all((col["Stability_Habituation_Min"] >= 0) & (col["Stability_Habituation_Min"] <= 1))
    assert np.all((col["Reward_Habituation"] >= 0) & (col["Reward_Habituation"] <= 1))
    assert np.all((col["Goals_Used"] >= 1) & (col["Goals_Used"] <= 4))

    tensors = read_checkpoint(str(out / "agent0_model.ckpt"))
    for prefix in ("agent/goal/actor/", "agent/goal/critic/", "agent/main/actor/", "agent/main/critic/",
                   "agent/inverse/", "agent/resource/s_norm/"):
        assert any(name.startswith(prefix) for name in tensors), prefix
    assert "agent/goal/actor/logits/kernel" in tensors and "agent/inverse/goal_logits/kernel" in tensors
    assert tensors["agent/main/actor/0/dense/kernel"].shape == (4 + 4, 64)   # state + one-hot goal

    # a fresh agent loads the model: identical variables and goal probabilities
    (tmp_path / "fresh").mkdir()
    fresh = make_world(tmp_path / "fresh", seed=9)
    other = fresh.agents[0]
    other.load_model(str(out / "agent0_model.ckpt"))
    for name, var in agent._checkpoint_variables().items():
        np.testing.assert_array_equal(var.numpy(), other._checkpoint_variables()[name].numpy(), err_msg=name)
    s = np.array([0.3, -0.2, 0.1, 0.0])
    np.testing.assert_allclose(other.goal_policy.probs_np(other._norm_inputs(s[None], np.zeros((1, 0)))),
                               agent.goal_policy.probs_np(agent._norm_inputs(s[None], np.zeros((1, 0)))), rtol=1e-6)
    fresh.shutdown()

    # --resume: iteration, habituation and solver state continue
    stab_hab, reward_hab = agent.stab_hab.copy(), agent.reward_hab.value
    world.shutdown()
    resumed = make_world(tmp_path, "--resume", "true", seed=5)
    ragent = resumed.agents[0]
    assert ragent.iter == agent.iter and ragent.total_sample_count == agent.total_sample_count
    np.testing.assert_array_equal(ragent.stab_hab, stab_hab)
    assert ragent.reward_hab.value == reward_hab
    assert ragent.inverse_solver.iter == agent.inverse_solver.iter
    np.testing.assert_array_equal(ragent.goal_actor_solver.slots[0].numpy(), agent.goal_actor_solver.slots[0].numpy())
    run_until(resumed, agent.iter + 1)
    header, rows = read_log(out / "agent0_log.txt")
    assert len(rows) == 5
    resumed.shutdown()


def fill_buffer(world, paths):
    """Samples in training mode until the replay buffer holds `paths` paths (no train step: the
    batch is larger than what is stored)."""
    agent = world.agents[0]
    while agent.replay_buffer.num_paths < paths:
        update_world(world, 1 / 60)
    return agent


def test_goal_batch_sums_habituated_rewards_per_goal_segment(tmp_path):
    """The goal policy's return per goal decision: within each segment of GoalSteps decisions the
    sum of reward_hab x reward + stab_hab x stability, then discounted over segments
    (GoalDiscount). Distinct known factors are written into the buffer, so a swapped or missing
    factor changes the result; the goal critic is zeroed so rewards-to-go are plain sums."""
    seed_rank(5)
    world = make_world(tmp_path, GoalSteps=3, GoalDiscount=0.8, BatchSize=100000, ReplayBufferSize=300000)
    agent = fill_buffer(world, 3)
    buf = agent.replay_buffer
    rng = np.random.default_rng(0)
    for name, low, high in (("rewards", 0.0, 1.0), ("reward_habs", 0.1, 0.4), ("stab_habs", 0.6, 0.9)):
        buf.data[name][:] = rng.uniform(low, high, buf.data[name].shape)
    idx = np.concatenate(buf.path_slots())
    stab = agent._fetch_batch_rewards(idx)
    agent._goal_critic_tf = lambda inputs: tf.zeros(len(inputs[0]))
    batch, counts = agent._build_goal_batch()
    expected, start = [], 0
    for slots in buf.path_slots():
        n = len(slots) - 1
        steps = slots[:-1]
        step_r = buf.data["reward_habs"][steps] * buf.data["rewards"][steps] + \
            buf.data["stab_habs"][steps] * stab[start:start + n]
        start += n + 1
        seg = [step_r[k:k + 3].sum() for k in range(0, n, 3)]
        expected += [sum(0.8 ** j * r for j, r in enumerate(seg[k:])) for k in range(len(seg))]
    np.testing.assert_allclose(batch.rewards_to_go, expected, rtol=1e-9)
    assert counts.sum() == len(expected)
    world.shutdown()


def test_choosing_a_goal_habituates_it_and_restores_the_others(tmp_path):
    """A training-mode goal choice lowers that goal's stability factor by StabilityHabituationFactor
    (floor 0) and raises every other one by StabilityRestorationFactor (cap 1); the decision keeps
    the chosen goal's factor from before the choice. Test mode changes nothing."""
    seed_rank(6)
    world = make_world(tmp_path, StabilityHabituationFactor=0.25, StabilityRestorationFactor=0.1)
    agent = world.agents[0]
    agent.stab_hab = np.array([0.2, 0.5, 0.95, 1.0])
    s, g = world.env.record_state(0), world.env.record_goal(0)
    before = agent.stab_hab.copy()
    agent._choose_goal(s, g)
    chosen = agent._goal
    expected = np.minimum(before + 0.1, 1.0)
    expected[chosen] = max(before[chosen] - 0.25, 0.0)
    np.testing.assert_allclose(agent.stab_hab, expected)
    assert agent._stab_factor == before[chosen]
    agent.enable_training = False
    kept = agent.stab_hab.copy()
    agent._choose_goal(s, g)
    np.testing.assert_array_equal(agent.stab_hab, kept)
    world.shutdown()


class _BatchCaptured(Exception):
    pass


def test_action_policy_is_trained_on_the_stability_reward(tmp_path):
    """The PPO step of the action policy gets, per decision, the stability reward of the inverse
    model's prediction (written out here by hand with distinct GoalErrorFactor, ActionErrorFactor
    and ActionErrorDiscount), not the env's reward: with the critic zeroed the batch's returns are
    the stability rewards discounted by Discount x TDLambda within each path."""
    seed_rank(7)
    gef, aef, aed, discount, lam = 1.7, 0.6, 0.3, 0.9, 0.5
    world = make_world(tmp_path, GoalErrorFactor=gef, ActionErrorFactor=aef, ActionErrorDiscount=aed,
                       Discount=discount, TDLambda=lam, BatchSize=100000, ReplayBufferSize=300000)
    agent = fill_buffer(world, 3)
    buf = agent.replay_buffer
    buf.data["rewards"][:] = 5.0                   # the env's reward, which PPO must not see
    agent._critic_tf = lambda inputs: tf.zeros(len(inputs[0]))

    paths = buf.path_slots()
    expected = []
    for slots in paths:
        steps = np.asarray(slots[:-1])
        a_pred, logits = agent._inverse_tf(agent._norm_states(buf.data["states"][steps]),
                                           agent._norm_states(buf.data["states"][steps + 1]))
        a_pred = a_pred.numpy().astype(np.float64)
        logits = logits.numpy().astype(np.float64)
        g_pred = np.exp(logits - logits.max(axis=1, keepdims=True))
        g_pred /= g_pred.sum(axis=1, keepdims=True)
        goals = buf.data["goal_ids"][steps]
        e_g = 1.0 - g_pred[np.arange(len(steps)), goals]
        p_a = np.exp(np.minimum(buf.data["logps"][steps] - agent.model.logp_at_mean_np, 0.0))
        norm_a = agent.a_norm.normalize(buf.data["actions"][steps])
        e_a = np.tanh(np.abs(norm_a - a_pred).mean(axis=1)) * p_a
        stab = 1.0 - (1.0 - aed * e_a) * (gef * e_g * (1.0 - e_a) + aef * e_a * (1.0 - e_g))
        stab = np.clip(stab, -1.0, 1.0)
        ret, returns = 0.0, np.zeros(len(steps) + 1)
        for k in reversed(range(len(steps))):
            ret = stab[k] + discount * lam * ret
            returns[k] = ret
        expected.append(returns)
    expected = np.concatenate(expected)
    assert np.ptp(expected) > 0.05                   # the stability rewards vary: the check has teeth

    captured = {}

    def capture(batch, iteration):
        captured["batch"] = batch
        raise _BatchCaptured

    agent.policy_step.step = capture
    with pytest.raises(_BatchCaptured):
        agent._train_step()
    batch = captured["batch"]
    np.testing.assert_allclose(batch.returns, expected, rtol=1e-5, atol=1e-6)
    world.shutdown()
