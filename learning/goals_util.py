"""Pure maths of the goal hierarchy: habituation rules, goal usage, the inverse model's loss and the
stability reward (the inverse model itself: learning/models/inverse_model.py).

Units: states enter normalised (s_norm), actions are in normalised action units (a_norm), goals
are one-hot vectors of NumGoals entries; the goal head gives a softmax distribution g_pred.

p(a) is the action's likelihood under the policy *relative to the policy's peak*:
    p(a) = exp(logp - logp_at_mean) = exp(-0.5 |z|^2),  z = (a - mean) / std,  in (0, 1]
(the raw density exp(logp) of a narrow Gaussian is far above 1, so it cannot weigh an error).

Loss (per sample, then averaged over the batch):
    action_error = a - a_pred                                         (action_size,)
    goal_error   = (g - g_pred) * (mean_i |action_error_i| * p(a) + InverseModelGoalErrorBase)
    loss = mean(action_error^2) + mean(goal_error^2)
The goal error's weight is a constant of the step (stop_gradient): the goal head is corrected more
where the action is badly predicted but likely, never less than the base, and the action head is
not pushed to change its error to shrink the goal term.

Stability reward of a transition (the action policy's reward; in [-1, 1]):
    e_g = 1 - g_pred[g]                              (goal error: 0 when the goal is identified)
    e_a = tanh(mean_i |action_error_i|) * p(a)       (action error, in [0, 1))
    penalty   = GoalErrorFactor * e_g * (1 - e_a) + ActionErrorFactor * e_a * (1 - e_g)
    stability = clip(1 - (1 - ActionErrorDiscount * e_a) * penalty, -1, 1)
With both factors 1 and no discount this is the reference code's S = 1 + 2 e_a e_g - e_a - e_g.
ActionErrorDiscount in [0, 1] shrinks the penalty where the action is poorly predicted (new
regions the policy explores).

Stability habituation (one factor per goal, each in [0, 1], initially 1), applied at each goal
choice; the chosen goal's attenuation is its factor *before* the update:
    h[chosen] <- max(h[chosen] - StabilityHabituationFactor, 0)
    h[other]  <- min(h[other] + StabilityRestorationFactor, 1)
Reward habituation (a scalar in [0, 1], initially 1) with the running mean m of the external
reward over the n steps seen so far (m = 0 before the first); per training step with reward r,
the step's attenuation is h before the update, then
    h <- max(h - RewardHabituationFactor, 0)   if r > m
    h <- min(h + RewardRestorationFactor, 1)   otherwise
    m <- m + (r - m) / (n + 1);  n <- n + 1
"""
from dataclasses import dataclass

import numpy as np
import tensorflow as tf


def stability_habituation_step(h, chosen, fall, restore):
    """The factors after choosing goal `chosen` (a new array)."""
    out = np.minimum(np.asarray(h, dtype=np.float64) + restore, 1.0)
    out[chosen] = max(float(h[chosen]) - fall, 0.0)
    return out


@dataclass
class RewardHabituation:
    fall: float
    restore: float
    value: float = 1.0
    mean: float = 0.0
    count: int = 0

    def step(self, reward):
        """Updates with one step's external reward; returns the factor that attenuates it."""
        used = self.value
        if reward > self.mean:
            self.value = max(self.value - self.fall, 0.0)
        else:
            self.value = min(self.value + self.restore, 1.0)
        self.count += 1
        self.mean += (reward - self.mean) / self.count
        return used


def goals_used(counts, min_fraction=0.05):
    """How many goals were chosen in at least min_fraction of the choices (counts per goal)."""
    counts = np.asarray(counts, dtype=np.float64)
    total = counts.sum()
    return int(np.count_nonzero(counts >= min_fraction * total)) if total > 0 else 0


def balanced_accuracy(hit, goal_ids):
    """The mean over the goals present of each goal's accuracy (hit: whether the inverse model's
    argmax was the goal, per transition); unlike the plain mean it does not rise when the goal
    policy favours a goal the model guesses by default. 0 for no transitions."""
    hit, goal_ids = np.asarray(hit, dtype=np.float64), np.asarray(goal_ids)
    present = np.unique(goal_ids)
    return float(np.mean([hit[goal_ids == k].mean() for k in present])) if present.size else 0.0


def softmax_np(logits):
    z = logits - logits.max(axis=-1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=-1, keepdims=True)


def relative_likelihood(logp, logp_at_mean):
    """p(a) = exp(logp - logp_at_mean), in (0, 1]."""
    return np.exp(np.minimum(np.asarray(logp, dtype=np.float64) - logp_at_mean, 0.0))


def inverse_model_loss(a, a_pred, g, g_pred, p_a, goal_error_base):
    """(loss, action_error, goal_error) of batches (TF or numpy-convertible tensors); see the module
    docstring. a, a_pred: (n, action_size); g (one-hot), g_pred (probabilities): (n, num_goals);
    p_a: (n,)."""
    action_error = a - a_pred
    weight = tf.stop_gradient(tf.reduce_mean(tf.abs(action_error), axis=-1) * p_a + goal_error_base)
    goal_error = (g - g_pred) * weight[:, None]
    loss = tf.reduce_mean(tf.square(action_error)) + tf.reduce_mean(tf.square(goal_error))
    return loss, action_error, goal_error


def stability_reward(a, a_pred, goal_ids, g_pred, p_a, goal_error_factor, action_error_factor,
                     action_error_discount):
    """Stability rewards (n,) of n transitions (numpy); see the module docstring."""
    a, a_pred, g_pred = (np.asarray(x, dtype=np.float64) for x in (a, a_pred, g_pred))
    goal_ids = np.asarray(goal_ids, dtype=np.int64)
    e_g = 1.0 - g_pred[np.arange(goal_ids.size), goal_ids]
    e_a = np.tanh(np.mean(np.abs(a - a_pred), axis=-1)) * np.asarray(p_a, dtype=np.float64)
    penalty = goal_error_factor * e_g * (1 - e_a) + action_error_factor * e_a * (1 - e_g)
    return np.clip(1.0 - (1.0 - action_error_discount * e_a) * penalty, -1.0, 1.0)
