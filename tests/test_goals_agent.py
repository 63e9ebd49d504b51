"""GoalsAgent on the goals_point scene: config errors name their key; goals are chosen every
GoalSteps decisions and kept between; a short training run logs every column; its checkpoint
holds the three networks in TF1 names and loads into a fresh agent; --resume continues the run
with its habituation state; the action policy's reward is stability + MotionPriorWeight x the
scene's reward; with TrainActionPolicy false a loaded action policy, inverse model and
normalisers stay bitwise as loaded while the goal policy learns from the scene's reward."""
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
    """The point-mass file, made faster, with the original hierarchy's stability-only action reward
    (the file's MotionPriorWeight is 1) unless a test sets it."""
    path.write_text(json.dumps({**AGENT, **FAST, "MotionPriorWeight": 0.0, **overrides}))
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
    ({"MotionPriorWeight": -0.5}, "MotionPriorWeight: must be >= 0, got -0.5"),
    ({"MotionPriorWeight": "high"}, "MotionPriorWeight: expects a number"),
    ({"MotionPriorWeigth": 0.5}, "MotionPriorWeigth: unknown key"),
    ({"TrainActionPolicy": "false"}, "TrainActionPolicy: expects true or false"),
    ({"TrainActionPolicy": 0}, "TrainActionPolicy: expects true or false"),
    ({"TrainActionPolicys": False}, "TrainActionPolicys: unknown key"),
    ({"ActionPolicyEnvGoal": "no"}, "ActionPolicyEnvGoal: expects true or false"),
    ({"GoalPolicyState": 0}, "GoalPolicyState: expects true or false"),
    ({"GoalInputScale": 0}, "GoalInputScale: must be > 0"),
    ({"TrainActionPolicy": False, "MotionPriorWeight": 0.5},
     "MotionPriorWeight: must be 0 when TrainActionPolicy is false"),
    ({"InverseModelGoalInputs": "root/vel_x"}, "InverseModelGoalInputs: expects a list"),
    ({"InverseModelGoalInputs": ["root/vel_x", 3]}, r"InverseModelGoalInputs\[1\]: expects a string"),
    ({"InverseModelGoalInputs": ["root/vel_x", "root/vel_x"]}, "InverseModelGoalInputs: names an entry twice"),
    ({"InitGoalCommands": [[1, 0, 1]] * 3}, r"InitGoalCommands: needs one command per goal \(NumGoals 4\), got 3"),
    ({"InitGoalCommands": [[1, 0, 1]] * 3 + [[1, 0]]}, "InitGoalCommands: commands must be non-empty and of one length"),
    ({"InitGoalCommands": [[]] * 4}, "InitGoalCommands: commands must be non-empty and of one length"),
    ({"InitGoalCommands": [[1, 0, "fast"]] * 4}, r"InitGoalCommands\[0\]\[2\]: expects a number"),
])
def test_config_errors_name_the_key(tmp_path, overrides, match):
    path = write_agent(tmp_path / "agent.txt", **overrides)
    with pytest.raises(ConfigError, match=match) as err:
        load_agent_config(str(path))
    assert "\n" not in str(err.value)


def test_config_missing_required_net(tmp_path):
    data = {k: v for k, v in {**AGENT, **FAST}.items() if k != "GoalActorNet"}
    path = tmp_path / "agent.txt"
    path.write_text(json.dumps(data))
    with pytest.raises(ConfigError, match="GoalActorNet: required key missing"):
        load_agent_config(str(path))


def test_defaults_and_registry(tmp_path):
    data = {k: v for k, v in {**AGENT, **FAST}.items()
            if k not in ("GoalSteps", "InverseModelGoalErrorBase", "MotionPriorWeight")}
    (tmp_path / "agent.txt").write_text(json.dumps(data))
    cls, config, _ = load_agent_config(str(tmp_path / "agent.txt"))
    assert cls is GoalsAgent and config.num_goals == 4 and config.goal_steps == 10
    assert config.inverse_model_goal_error_base == 0.9
    assert config.motion_prior_weight == 0.0 and config.train_action_policy is True
    assert config.action_policy_env_goal is True and config.goal_input_scale == 1.0
    assert config.inverse_model_goal_inputs == ()


def test_goal_input_scale_is_the_goal_entry_in_acting_and_training(tmp_path):
    """GoalInputScale: the action policy's goal input holds it at the chosen goal's entry, 0
    elsewhere, when it acts and in the batches it trains on."""
    seed_rank(5)
    world = make_world(tmp_path, GoalInputScale=3.0)
    agent = world.agents[0]
    while len(agent.path.actions) < 12:
        update_world(world, 1 / 60)
    s, g = agent.path.states[-1], agent.path.goals[-1]
    agent.goal_id = 2
    assert np.array_equal(agent._decision_inputs(s, g)[-1], [[0.0, 0.0, 3.0, 0.0]])
    ids = np.array([0, 3, 1])
    assert np.array_equal(agent._main_inputs(np.stack([s] * 3), np.stack([g] * 3), ids)[-1],
                          3.0 * np.eye(4, dtype=np.float32)[ids])
    world.shutdown()


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
    hab = {"RewardHabituationFactor": 0.001, "RewardRestorationFactor": 0.0}    # the file's factor is 0: one that moves
    world = make_world(tmp_path, **hab)
    agent = world.agents[0]
    run_until(world, 4)
    world.save_outputs()
    out = tmp_path / "out"
    header, rows = read_log(out / "agent0_log.txt")
    for column in REQUIRED_COLUMNS + list(LOG_COLUMNS) + ["Actor_Loss", "Critic_Loss"]:
        assert column in header, column
    assert len(rows) == 4 and np.all(np.isfinite(rows))
    col = {name: rows[:, i] for i, name in enumerate(header)}
    for acc in ("InvModel_Goal_Acc", "InvModel_Goal_Acc_Balanced"):
        assert np.all((col[acc] >= 0) & (col[acc] <= 1)), acc
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
    assert reward_hab < 1.0
    world.shutdown()
    resumed = make_world(tmp_path, "--resume", "true", seed=5, **hab)
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


@pytest.mark.parametrize("train_action_policy", [True, False])
def test_goal_batch_sums_habituated_rewards_per_goal_segment(tmp_path, train_action_policy):
    """The goal policy's return per goal decision: within each segment of GoalSteps decisions the
    sum of reward_hab x reward + stab_hab x stability (TrainActionPolicy false: of the reward
    alone), then discounted over segments (GoalDiscount). Distinct known factors are written into
    the buffer, so a swapped or missing factor changes the result; the goal critic is zeroed so
    rewards-to-go are plain sums."""
    seed_rank(5)
    world = make_world(tmp_path, GoalSteps=3, GoalDiscount=0.8, BatchSize=100000, ReplayBufferSize=300000,
                       TrainActionPolicy=train_action_policy)
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
        if not train_action_policy:
            step_r = buf.data["rewards"][steps]
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
    chosen = agent.goal_id
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


def zero_critic_returns(rewards, discount_lambda):
    """A path's lambda-returns when every value is 0: sum_j (discount lambda)^j r_{t+j}, then 0 at
    the path's end slot (n + 1 entries)."""
    ret, returns = 0.0, np.zeros(len(rewards) + 1)
    for k in reversed(range(len(rewards))):
        ret = rewards[k] + discount_lambda * ret
        returns[k] = ret
    return returns


def captured_policy_batch(agent):
    """The batch the action policy's PPO step would train on (the step itself does not run)."""
    captured = {}

    def capture(batch, iteration):
        captured["batch"] = batch
        raise _BatchCaptured

    agent.policy_step.step = capture
    with pytest.raises(_BatchCaptured):
        agent._train_step()
    return captured["batch"]


@pytest.mark.parametrize("prior_weight", [0.0, 0.5])
def test_action_policy_reward_is_stability_plus_motion_prior(tmp_path, prior_weight):
    """The PPO step of the action policy gets, per decision, the stability reward of the inverse
    model's prediction (written out here by hand with distinct GoalErrorFactor, ActionErrorFactor
    and ActionErrorDiscount) plus MotionPriorWeight x the env's reward (distinct known values
    written into the buffer; with weight 0 PPO must not see them): with the critic zeroed the
    batch's returns are these rewards discounted by Discount x TDLambda within each path. The
    log's Motion_Prior_Mean is the env reward's mean over the decisions."""
    seed_rank(7)
    gef, aef, aed, discount, lam = 1.7, 0.6, 0.3, 0.9, 0.5
    world = make_world(tmp_path, GoalErrorFactor=gef, ActionErrorFactor=aef, ActionErrorDiscount=aed,
                       Discount=discount, TDLambda=lam, BatchSize=100000, ReplayBufferSize=300000,
                       MotionPriorWeight=prior_weight)
    agent = fill_buffer(world, 3)
    buf = agent.replay_buffer
    buf.data["rewards"][:] = np.random.default_rng(1).uniform(0.0, 1.0, buf.data["rewards"].shape)
    agent._critic_tf = lambda inputs: tf.zeros(len(inputs[0]))

    paths = buf.path_slots()
    expected, priors = [], []
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
        reward = stab + prior_weight * buf.data["rewards"][steps]
        expected.append(zero_critic_returns(reward, discount * lam))
        priors.append(buf.data["rewards"][steps])
    expected = np.concatenate(expected)
    assert np.ptp(expected) > 0.05                   # the stability rewards vary: the check has teeth

    batch = captured_policy_batch(agent)
    np.testing.assert_allclose(batch.returns, expected, rtol=1e-5, atol=1e-6)
    assert agent._batch_info["motion_prior_mean"] == pytest.approx(np.mean(np.concatenate(priors)), rel=1e-12)
    world.shutdown()


def model_state(agent, networks):
    """{name: array} of the networks' variables and of the normalisers' statistics."""
    state = {name: var.numpy().copy() for net in networks for name, var in net.variables.items()}
    for scope, norm in agent._normalizers().items():
        for field in ("mean", "std", "mean_sq", "count"):
            state[f"{scope}/{field}"] = np.array(getattr(norm, field), copy=True)
    return state


def one_iteration_checkpoint(folder):
    """The checkpoint of a hierarchy trained for one iteration (its normalisers have samples)."""
    folder.mkdir()
    pre = make_world(folder)
    run_until(pre, 1)
    pre.save_outputs()
    pre.shutdown()
    return folder / "out" / "agent0_model.ckpt"


def test_frozen_action_policy_keeps_weights_and_normalisers(tmp_path):
    """TrainActionPolicy false, the hierarchy's checkpoint loaded with --model_files: after three
    training iterations the action policy (actor, critic), the inverse model and the normalisers
    are bitwise as loaded, and so are they in the run's own checkpoint, while the goal policy's
    weights changed. The log has the goal policy's columns and no action-policy step columns."""
    seed_rank(8)
    loaded_ckpt = one_iteration_checkpoint(tmp_path / "pre")

    world = make_world(tmp_path, "--model_files", loaded_ckpt, TrainActionPolicy=False)
    agent = world.agents[0]
    frozen = model_state(agent, [agent.model, agent.inverse_model])
    goal_before = model_state(agent, [agent.goal_policy])
    run_until(world, 3)
    after = model_state(agent, [agent.model, agent.inverse_model])
    for name, val in frozen.items():
        np.testing.assert_array_equal(after[name], val, err_msg=name)
    goal_after = model_state(agent, [agent.goal_policy])
    changed = [name for name in agent.goal_policy.variables if not np.array_equal(goal_after[name], goal_before[name])]
    assert len(changed) == len(agent.goal_policy.variables)

    world.save_outputs()
    loaded, saved = read_checkpoint(str(loaded_ckpt)), read_checkpoint(str(tmp_path / "out" / "agent0_model.ckpt"))
    kept = [name for name in loaded if name.startswith(("agent/main/", "agent/inverse/", "agent/resource/"))]
    assert len(kept) > 10 and any(name.startswith("agent/goal/") for name in saved)
    for name in kept:
        np.testing.assert_array_equal(saved[name], loaded[name], err_msg=name)
    header, rows = read_log(tmp_path / "out" / "agent0_log.txt")
    assert len(rows) == 3 and np.all(np.isfinite(rows))
    assert all(column in header for column in LOG_COLUMNS) and "Actor_Loss" not in header
    world.shutdown()


def test_frozen_skills_without_exploration_still_train_the_goal_policy(tmp_path):
    """TrainActionPolicy false with ExpParams Rate 0 (the frozen skills act with their mean
    actions, as in test episodes): no step is exploratory, yet training steps come after each
    batch and only the goal policy's weights change (PPO's rule, a minibatch of exploratory
    actions before a step, would wait forever)."""
    seed_rank(9)
    no_exploration = {"Rate": 0, "Noise": 0.3}
    world = make_world(tmp_path, "--model_files", one_iteration_checkpoint(tmp_path / "pre"),
                       TrainActionPolicy=False, ExpParamsBeg=no_exploration, ExpParamsEnd=no_exploration)
    agent = world.agents[0]
    frozen, goal_before = model_state(agent, [agent.model]), model_state(agent, [agent.goal_policy])
    updates, explored = 0, 0
    while agent.iter < 2 and updates < 20 * FAST["BatchSize"]:
        update_world(world, 1 / 60)
        updates += 1
        explored = max(explored, agent.replay_buffer.count_filtered(agent.EXP_ACTION_FLAG))
    assert agent.iter == 2, f"no training step in {updates} updates without exploratory actions"
    assert explored == 0                             # the buffer is cleared after each step: checked before
    after, goal_after = model_state(agent, [agent.model]), model_state(agent, [agent.goal_policy])
    for name, val in frozen.items():
        np.testing.assert_array_equal(after[name], val, err_msg=name)
    assert all(not np.array_equal(goal_after[name], goal_before[name]) for name in agent.goal_policy.variables)
    world.shutdown()


@pytest.mark.parametrize("env_goal", [True, False])
def test_the_action_policy_sees_the_scenes_goal_unless_told_not(tmp_path, env_goal):
    """ActionPolicyEnvGoal false: the action policy's action no longer depends on the scene's goal
    (a task's target), the goal policy's choice still does; true (the default): both do."""
    from tests.toy_env import ShapedEnv, toy_args
    agent_file = write_agent(tmp_path / "agent.txt", ActionPolicyEnvGoal=env_goal, ActorInitOutputScale=1.0)
    world = RLWorld(ShapedEnv(6, 2, goal_size=3), toy_args(agent_file, "--output_path", tmp_path / "out"))
    agent = world.agents[0]
    assert agent.config.action_policy_env_goal is env_goal
    for _ in range(20):                              # decisions through the agent's own inputs
        update_world(world, 1 / 60)
    rng = np.random.default_rng(0)
    s, g1, g2 = rng.normal(size=6), rng.normal(size=3), rng.normal(size=3)
    a1, a2 = agent.calc_action(s, g1), agent.calc_action(s, g2)
    assert np.allclose(a1, a2) is not env_goal
    inputs = [agent._norm_inputs(np.asarray(s)[None], np.asarray(g)[None]) for g in (g1, g2)]
    p1, p2 = (agent.goal_policy.probs_np(x) for x in inputs)
    assert not np.allclose(p1, p2)
    world.shutdown()


@pytest.mark.parametrize("sees_state", [True, False])
def test_the_goal_policy_sees_the_state_unless_told_not(tmp_path, sees_state):
    """GoalPolicyState false: the goal policy's choice (actor and critic) depends on the scene's
    goal alone, in acting and in its training batch; true (the default): on the state too."""
    from tests.toy_env import ShapedEnv, toy_args
    agent_file = write_agent(tmp_path / "agent.txt", GoalPolicyState=sees_state)
    world = RLWorld(ShapedEnv(6, 2, goal_size=3), toy_args(agent_file, "--output_path", tmp_path / "out"))
    agent = world.agents[0]
    first_rows = [v.shape[0] for k, v in agent.goal_policy.variables.items() if k.endswith("0/dense/kernel")]
    assert first_rows == ([9, 9] if sees_state else [3, 3])
    rng = np.random.default_rng(0)
    s1, s2, g1, g2 = rng.normal(size=6), rng.normal(size=6), rng.normal(size=3), rng.normal(size=3)

    def probs_and_value(s, g):
        inputs = agent._goal_policy_inputs(np.asarray(s)[None], np.asarray(g)[None])
        return agent.goal_policy.probs_np(inputs), agent._goal_critic_tf(tuple(inputs)).numpy()

    for a, b in zip(probs_and_value(s1, g1), probs_and_value(s2, g1)):
        assert np.allclose(a, b) is not sees_state
    for a, b in zip(probs_and_value(s1, g1), probs_and_value(s1, g2)):
        assert not np.allclose(a, b)
    before = {k: v.numpy().copy() for k, v in agent.goal_policy.variables.items()}
    run_until(world, 1)                              # a training step builds and learns from its goal batch
    assert all(not np.array_equal(before[k], v.numpy()) for k, v in agent.goal_policy.variables.items())
    world.shutdown()


def test_a_goal_only_goal_policy_needs_a_scene_goal(tmp_path):
    """GoalPolicyState false on a scene without a goal is one error naming the key and the scene."""
    with pytest.raises(ConfigError, match="GoalPolicyState false: scene goals_point has no goal"):
        make_world(tmp_path, GoalPolicyState=False)


HUMANOID_ARGS = str(ROOT / "args/train_goals_humanoid3d_walk_args.txt")
HUMANOID_AGENT = json.loads((ROOT / "data/agents/ct_agent_goals_humanoid.txt").read_text())
ROOT_MOTION = ["root/vel_x", "root/vel_z", "root/ang_vel_y"]
SMALL_NETS = {k: "fc_2layers_64units" for k in ("ActorNet", "CriticNet", "GoalActorNet", "GoalCriticNet",
                                                  "InverseModelNet")}


def test_unknown_goal_input_is_a_config_error_naming_it(tmp_path):
    """InverseModelGoalInputs names state entries; the point mass names none, so any name is an error."""
    with pytest.raises(ConfigError, match="InverseModelGoalInputs: root/vel_x not a state entry of scene "
                                          "goals_point .the scene names no state entries") as err:
        make_world(tmp_path, InverseModelGoalInputs=["root/vel_x"])
    assert "agent.txt" in str(err.value) and "\n" not in str(err.value)


def test_inverse_model_goal_head_reads_only_its_goal_inputs(tmp_path):
    """With InverseModelGoalInputs the goal head has its own trunk over those entries of s_t and
    s_t+1 (by the scene's state names): its logits change with them and with nothing else, the
    action head still reads the whole transition, the inverse step trains both trunks, and the
    checkpoint holds the goal trunk under agent/inverse_goal."""
    agent_file = tmp_path / "agent.txt"
    agent_file.write_text(json.dumps({**HUMANOID_AGENT, **SMALL_NETS, "InverseModelGoalInputs": ROOT_MOTION}))
    args = load_args(["--arg_file", HUMANOID_ARGS, "--agent_files", str(agent_file), "--output_path",
                      str(tmp_path / "out"), "--int_output_path", "", "--tensorboard", "false"])
    world = RLWorld(DeepMimicEnv(args, seed=0), args)
    agent = world.agents[0]
    names = world.env.state_names(0)
    assert len(names) == agent.get_state_size()
    entries = [names.index(name) for name in ROOT_MOTION]
    assert agent.inverse_model.goal_entries.numpy().tolist() == entries
    rng = np.random.default_rng(0)
    size = agent.get_state_size()
    s0, s1 = (rng.normal(size=(6, size)).astype(np.float32) for _ in range(2))
    a_pred, logits = (x.numpy() for x in agent._inverse_tf(s0, s1))
    others = np.setdiff1d(np.arange(size), entries)
    moved0, moved1 = s0.copy(), s1.copy()
    moved0[:, others] += 1.0
    moved1[:, others] -= 1.0
    a_moved, logits_same = (x.numpy() for x in agent._inverse_tf(moved0, moved1))
    assert np.array_equal(logits_same, logits)
    assert np.abs(a_moved - a_pred).max() > 1e-4
    for s in (s0, s1):                      # each goal entry, in s_t and in s_t+1, moves the logits
        for k in entries:
            moved = s.copy()
            moved[:, k] += 1.0
            pair = (moved, s1) if s is s0 else (s0, moved)
            assert np.abs(agent._inverse_tf(*pair)[1].numpy() - logits).max() > 1e-5
    norm_a = rng.normal(size=(6, agent.get_action_size())).astype(np.float32)
    _, grads = agent._inverse_step(s0, s1, norm_a, np.arange(6, dtype=np.int32) % 4,
                                   np.full(6, 0.5, np.float32))
    trained = {v.name.split(":")[0]: g for v, g in zip(agent.inverse_model.trainable_variables, grads)}
    assert np.abs(trained["agent/inverse_goal/goal_logits/kernel"].numpy()).max() > 0
    assert np.abs(trained["agent/inverse/action/kernel"].numpy()).max() > 0
    assert "agent/inverse/goal_logits/kernel" not in trained
    agent.save_model(str(tmp_path / "model.ckpt"))
    saved = read_checkpoint(str(tmp_path / "model.ckpt"))
    assert saved["agent/inverse_goal/goal_logits/kernel"].shape == (64, 4)
    assert saved["agent/inverse_goal/0/dense/kernel"].shape == (2 * len(ROOT_MOTION), 64)
    world.shutdown()
