"""Pure maths of the goal hierarchy: habituation rules, GAE-lambda and rewards-to-go, goal usage.

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


def gae_lambda(rewards, vals, gamma, lam):
    """(advantages, rewards_to_go) of one path of n rewards and n + 1 values.

    vals[n] is the value after the last step (0 at a true terminal, V(s_n) at a cut-off).
    delta_t = r_t + gamma vals[t+1] - vals[t];  A_t = sum_k (gamma lam)^k delta_{t+k};
    rewards-to-go G_t = sum_k gamma^k r_{t+k} + gamma^(n-t) vals[n].
    """
    rewards = np.asarray(rewards, dtype=np.float64)
    vals = np.asarray(vals, dtype=np.float64)
    n = rewards.size
    if vals.size != n + 1:
        raise ValueError(f"gae_lambda needs {n + 1} values for {n} rewards, got {vals.size}")
    deltas = rewards + gamma * vals[1:] - vals[:-1]
    adv = np.zeros(n)
    rtg = np.zeros(n)
    next_adv, next_rtg = 0.0, vals[n]
    for t in reversed(range(n)):
        next_adv = deltas[t] + gamma * lam * next_adv
        next_rtg = rewards[t] + gamma * next_rtg
        adv[t], rtg[t] = next_adv, next_rtg
    return adv, rtg


def goals_used(counts, min_fraction=0.05):
    """How many goals were chosen in at least min_fraction of the choices (counts per goal)."""
    counts = np.asarray(counts, dtype=np.float64)
    total = counts.sum()
    return int(np.count_nonzero(counts >= min_fraction * total)) if total > 0 else 0
