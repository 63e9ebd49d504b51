"""The goal hierarchy's maths against hand-computed numbers: both habituation rules over a run of
steps, the stability reward, the inverse model's loss (and that its goal weight passes no
gradient), GAE-lambda and rewards-to-go against direct sums, goal usage, balanced accuracy."""
import math

import numpy as np
import pytest
import tensorflow as tf

from learning.goals_util import (RewardHabituation, balanced_accuracy, goals_used, inverse_model_loss,
                                 relative_likelihood, stability_habituation_step, stability_reward)
from learning.rl_util import compute_return, gae_lambda


def test_stability_habituation_sequence():
    """3 goals, fall 0.3, restore 0.1; the factor used is the chosen goal's before the update."""
    choices = [0, 0, 1, 0, 2, 2, 2, 2]
    expected_h = [[0.7, 1, 1], [0.4, 1, 1], [0.5, 0.7, 1], [0.2, 0.8, 1], [0.3, 0.9, 0.7],
                  [0.4, 1.0, 0.4], [0.5, 1.0, 0.1], [0.6, 1.0, 0.0]]
    expected_used = [1, 0.7, 1, 0.5, 1, 0.7, 0.4, 0.1]
    h = np.ones(3)
    for goal, want_h, want_used in zip(choices, expected_h, expected_used):
        assert h[goal] == pytest.approx(want_used)
        h = stability_habituation_step(h, goal, 0.3, 0.1)
        np.testing.assert_allclose(h, want_h, atol=1e-12)
    assert np.all((h >= 0) & (h <= 1))


def test_reward_habituation_sequence():
    """fall 0.25, restore 0.1: falls when the reward is above the running mean of the earlier
    rewards (0 before the first), recovers otherwise, stays in [0, 1]."""
    rewards = [-1, 1, 1, 0, 2, 0.5, 3, 10, 100]
    # h before each step (the factor used), by hand:
    # -1 > 0? no -> 1 (capped); m=-1 | 1 > -1 -> .75; m=0 | 1 > 0 -> .5; m=2/3 | 0 no -> .6; m=.5
    # 2 > .5 -> .35; m=.8 | .5 no -> .45; m=.75 | 3 yes -> .2; m=7.5/7 | 10 yes -> 0 | 100 yes -> 0
    expected_used = [1, 1, 0.75, 0.5, 0.6, 0.35, 0.45, 0.2, 0.0]
    hab = RewardHabituation(fall=0.25, restore=0.1)
    used = [hab.step(r) for r in rewards]
    np.testing.assert_allclose(used, expected_used, atol=1e-12)
    assert hab.value == 0.0 and hab.count == 9
    assert hab.mean == pytest.approx(116.5 / 9)


def test_stability_reward_hand_values():
    a, a_pred = np.array([[0.5, -0.5]]), np.zeros((1, 2))
    g_pred = np.array([[0.6, 0.3, 0.1]])
    e_a = math.tanh(0.5) * 0.8                  # mean |a - a_pred| = 0.5, p(a) = 0.8
    e_g = 0.4                                   # 1 - g_pred[chosen goal 0]
    penalty = 2.0 * e_g * (1 - e_a) + 1.0 * e_a * (1 - e_g)
    want = 1 - (1 - 0.5 * e_a) * penalty
    got = stability_reward(a, a_pred, [0], g_pred, [0.8], goal_error_factor=2.0, action_error_factor=1.0,
                           action_error_discount=0.5)
    assert got[0] == pytest.approx(want, abs=1e-12)
    assert want == pytest.approx(0.40814882, abs=1e-7)
    # factors 1, no discount: the reference code's S = 1 + 2 a g - a - g
    got = stability_reward(a, a_pred, [0], g_pred, [0.8], 1.0, 1.0, 0.0)
    assert got[0] == pytest.approx(1 + 2 * e_a * e_g - e_a - e_g, abs=1e-12)
    # perfectly predicted: 1; a large goal penalty clips at -1
    assert stability_reward(a, a, [0], [[1.0, 0, 0]], [1.0], 1, 1, 0)[0] == 1.0
    assert stability_reward(a, a, [1], [[1.0, 0, 0]], [1.0], 10, 1, 0)[0] == -1.0


def test_relative_likelihood():
    np.testing.assert_allclose(relative_likelihood([2.0, 2.0 - 0.5 * 4], 2.0), [1.0, math.exp(-2)])


def test_inverse_model_loss_hand_values():
    a = tf.constant([[1.0, 0.0]])
    a_pred = tf.Variable([[0.5, 0.5]])
    g = tf.constant([[1.0, 0.0, 0.0]])
    g_pred = tf.constant([[0.5, 0.25, 0.25]])
    p_a = tf.constant([0.5])
    with tf.GradientTape() as tape:
        loss, action_error, goal_error = inverse_model_loss(a, a_pred, g, g_pred, p_a, 0.1)
    # action error (0.5, -0.5): MSE 0.25; goal weight 0.5 * 0.5 + 0.1 = 0.35
    # goal error (0.5, -0.25, -0.25) * 0.35 = (0.175, -0.0875, -0.0875): MSE 0.0153125
    np.testing.assert_allclose(action_error.numpy(), [[0.5, -0.5]])
    np.testing.assert_allclose(goal_error.numpy(), [[0.175, -0.0875, -0.0875]], rtol=1e-6)
    assert float(loss) == pytest.approx(0.25 + 0.0153125, rel=1e-6)
    # the goal weight is a constant: d loss / d a_pred is MSE(action error)'s alone, -(a - a_pred)
    np.testing.assert_allclose(tape.gradient(loss, a_pred).numpy(), [[-0.5, 0.5]], rtol=1e-6)


@pytest.mark.parametrize("gamma,lam", [(0.9, 0.8), (0.99, 1.0), (0.5, 0.0), (0.95, 0.95)])
def test_gae_and_rewards_to_go_against_direct_sums(gamma, lam):
    rewards = np.array([1.0, 0.0, 2.0, -0.5])
    vals = np.array([0.5, 1.0, -0.5, 0.25, 2.0])
    n = rewards.size
    deltas = [rewards[t] + gamma * vals[t + 1] - vals[t] for t in range(n)]
    want_adv = [sum((gamma * lam) ** k * deltas[t + k] for k in range(n - t)) for t in range(n)]
    want_rtg = [sum(gamma ** k * rewards[t + k] for k in range(n - t)) + gamma ** (n - t) * vals[n]
                for t in range(n)]
    adv, rtg = gae_lambda(rewards, vals, gamma, lam)
    np.testing.assert_allclose(adv, want_adv, atol=1e-12)
    np.testing.assert_allclose(rtg, want_rtg, atol=1e-12)
    # the lambda-return adv + V is DeepMimic's TD(lambda) return; with lambda 1, adv = rtg - V
    np.testing.assert_allclose(adv + vals[:-1], compute_return(rewards, gamma, lam, vals), atol=1e-12)
    if lam == 1.0:
        np.testing.assert_allclose(adv, rtg - vals[:-1], atol=1e-12)


def test_gae_needs_n_plus_one_values():
    with pytest.raises(ValueError, match="needs 3 values"):
        gae_lambda([1.0, 2.0], [0.0, 0.0], 0.9, 0.9)


def test_goals_used_counts_goals_above_five_percent():
    assert goals_used([50, 45, 4, 1]) == 2          # 4% and 1% are below 5%
    assert goals_used([5, 95, 0, 0]) == 2           # exactly 5% counts
    assert goals_used([0, 0, 0]) == 0


def test_balanced_accuracy_weighs_each_present_goal_alike():
    # a model that always says goal 3, with goal 3 chosen 8 times in 10: plain accuracy 0.8
    goal_ids = np.array([3] * 8 + [0, 1])
    hit = goal_ids == 3
    assert hit.mean() == pytest.approx(0.8)
    assert balanced_accuracy(hit, goal_ids) == pytest.approx((1 + 0 + 0) / 3)   # goals 0, 1, 3 present
    assert balanced_accuracy([True, False, True, True], [0, 0, 1, 2]) == pytest.approx((0.5 + 1 + 1) / 3)
    assert balanced_accuracy([], []) == 0.0
