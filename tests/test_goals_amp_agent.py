"""GoalsAMPAgent on the toy AMP point mass: one schema takes both agents' keys; the action
policy's reward is stability + MotionPriorWeight x the style reward of the discriminator (not the
scene's reward); a training run steps all four networks, logs both agents' columns and writes
one checkpoint that loads back; with TrainActionPolicy false the discriminator stays as loaded."""
import numpy as np
import pytest
import tensorflow as tf

from app.rollout import update_world
from learning.agent_builder import load_agent_config
from learning.agents.goals_agent import LOG_COLUMNS
from learning.agents.goals_amp_agent import GoalsAMPAgent
from learning.checkpoint import read_checkpoint
from learning.configs.config import ConfigError
from learning.rl_world import RLWorld
from learning.tf_util import limit_tf_threads, seed_rank
from tests.test_amp_agent import AMP_COLUMNS, PointMassAMPEnv, write_amp_agent_file
from tests.test_goals_agent import captured_policy_batch, zero_critic_returns
from tests.test_learning_ppo import run_until
from tests.toy_env import SMALL_NET, register_small_net, toy_args

limit_tf_threads()
register_small_net()

GOALS_KEYS = {"AgentType": "GoalsAMP", "NumGoals": 3, "GoalSteps": 4, "GoalActorNet": SMALL_NET,
              "GoalCriticNet": SMALL_NET, "InverseModelNet": SMALL_NET, "GoalMiniBatchSize": 16,
              "MotionPriorWeight": 0.5, "TaskRewardLerp": None, "BatchSize": 256, "OutputIters": 1}


def make_world(tmp_path, *extra, **overrides):
    agent_file = write_amp_agent_file(tmp_path / "goals_amp_agent.txt", **{**GOALS_KEYS, **overrides})
    return RLWorld(PointMassAMPEnv(seed=3), toy_args(agent_file, "--output_path", tmp_path / "out", *extra))


def test_one_schema_for_both_agents_keys(tmp_path):
    cls, config, _ = load_agent_config(write_amp_agent_file(tmp_path / "a.txt", **GOALS_KEYS))
    assert cls is GoalsAMPAgent and config.num_goals == 3 and config.disc_net == SMALL_NET
    assert config.motion_prior_weight == 0.5 and config.reward_scale == 2
    for overrides, match in [({"DiscNett": SMALL_NET}, "DiscNett: unknown key"),
                             ({"DiscGradPenalty": -1}, "DiscGradPenalty: must be >= 0"),
                             ({"NumGoals": 1}, "NumGoals: must be >= 2"),
                             ({"GoalActorNet": None}, "GoalActorNet: required key missing")]:
        with pytest.raises(ConfigError, match=match):
            load_agent_config(write_amp_agent_file(tmp_path / "bad.txt", **{**GOALS_KEYS, **overrides}))


def test_action_reward_is_stability_plus_weighted_style_reward(tmp_path):
    """With the critic zeroed and TDLambda x Discount known, the PPO batch's returns are the
    discounted sums of stab_t + w style_t, style_t computed here from the discriminator's logits
    of the stored AMP observations; the scene's own rewards (overwritten with values far from
    any style reward) must not reach them."""
    seed_rank(5)
    w, discount, lam = 0.5, 0.9, 0.5
    world = make_world(tmp_path, Discount=discount, TDLambda=lam, BatchSize=100000, ReplayBufferSize=300000,
                       MotionPriorWeight=w)
    agent = world.agents[0]
    while agent.replay_buffer.num_paths < 3:
        update_world(world, 1 / 60)
    buf = agent.replay_buffer
    buf.data["rewards"][:] = 100.0
    agent._critic_tf = lambda inputs: tf.zeros(len(inputs[0]))
    stab_of = {}
    goals_fetch = agent._fetch_batch_rewards

    def remember_stability(idx):
        rewards = goals_fetch(idx)
        stab_of["stab"] = agent._batch_stability.copy()
        stab_of["idx"] = idx
        return rewards
    agent._fetch_batch_rewards = remember_stability
    batch = captured_policy_batch(agent)

    idx = stab_of["idx"]
    style = agent.style_reward_fn(agent.calc_disc_logits(buf.get("amp_obs_agent", idx)), agent.config.reward_scale)
    reward = stab_of["stab"] + w * style
    expected, start = [], 0
    for slots in buf.path_slots():
        n = len(slots) - 1
        expected.append(zero_critic_returns(reward[start:start + n], discount * lam))
        start += n + 1
    expected = np.concatenate(expected)
    assert np.ptp(style[~buf.is_path_end(idx)]) > 0.01       # the style rewards vary: the check has teeth
    np.testing.assert_allclose(batch.returns, expected, rtol=1e-5, atol=1e-6)
    assert agent._batch_info["motion_prior_mean"] == pytest.approx(np.mean(style[~buf.is_path_end(idx)]))
    world.shutdown()


def test_training_steps_every_network_logs_and_checkpoints(tmp_path):
    seed_rank(6)
    world = make_world(tmp_path)
    agent = world.agents[0]
    # values bound by stab in [-1, 1] plus w x the style reward's [0, RewardScale], over 1 - Discount
    assert (agent.val_min, agent.val_max) == pytest.approx((-1 / 0.1, (1 + 0.5 * 2) / 0.1))
    nets = {"disc": agent.disc, "goal": agent.goal_policy, "inverse": agent.inverse_model, "main": agent.model}
    before = {k: {n: v.numpy().copy() for n, v in net.variables.items()} for k, net in nets.items()}
    run_until(world, 2)
    for k, net in nets.items():
        assert any(not np.array_equal(v.numpy(), before[k][n]) for n, v in net.variables.items()), k
    world.save_outputs()
    header = (tmp_path / "out" / "agent0_log.txt").read_text().splitlines()[0].split()
    assert all(c in header for c in AMP_COLUMNS + list(LOG_COLUMNS) + ["Actor_Loss"])
    ckpt = read_checkpoint(str(tmp_path / "out" / "agent0_model.ckpt"))
    for prefix in ("agent/main/disc/", "agent/goal/", "agent/inverse/", "agent/main/actor/",
                   "agent/resource/amp_obs_norm/"):
        assert any(name.startswith(prefix) for name in ckpt), prefix
    world.shutdown()

    (tmp_path / "again").mkdir()
    again = make_world(tmp_path / "again", "--model_files", tmp_path / "out" / "agent0_model.ckpt")
    loaded = again.agents[0]
    for name, var in loaded.disc.variables.items():
        np.testing.assert_array_equal(var.numpy(), ckpt[name], err_msg=name)
    again.shutdown()


def test_frozen_action_policy_keeps_the_discriminator(tmp_path):
    seed_rank(9)
    (tmp_path / "pre").mkdir()
    pre = make_world(tmp_path / "pre")
    run_until(pre, 1)
    pre.save_outputs()
    pre.shutdown()
    world = make_world(tmp_path, "--model_files", tmp_path / "pre" / "out" / "agent0_model.ckpt",
                       TrainActionPolicy=False, MotionPriorWeight=0)
    agent = world.agents[0]
    frozen = {n: v.numpy().copy() for net in (agent.disc, agent.model, agent.inverse_model)
              for n, v in net.variables.items()}
    goal_before = {n: v.numpy().copy() for n, v in agent.goal_policy.variables.items()}
    run_until(world, 2)
    for net in (agent.disc, agent.model, agent.inverse_model):
        for n, v in net.variables.items():
            np.testing.assert_array_equal(v.numpy(), frozen[n], err_msg=n)
    assert all(not np.array_equal(v.numpy(), goal_before[n]) for n, v in agent.goal_policy.variables.items())
    world.shutdown()
