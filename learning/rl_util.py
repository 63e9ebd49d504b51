"""Returns and advantages of a path: TD(lambda) as DeepMimic computes it (deepmimic.md 5.3), GAE-lambda
with rewards-to-go, and the per-rank advantage normalisation of PPO's steps."""
import numpy as np

ADV_EPS = 1e-5      # added to the advantages' std before dividing by it


def compute_return(rewards, gamma, td_lambda, vals):
    """TD(lambda) returns of one path of n rewards, given n + 1 values.

    vals[t] is V(s_t); vals[n] is the value after the last step: 0 (or the failure value) after a
    Fail, the success value after a Succ, the critic's V(s_n) after a Null end (a time-limit cut
    bootstraps). Backwards: R_{n-1} = r_{n-1} + gamma vals[n];
    R_t = r_t + gamma ((1 - lambda) vals[t+1] + lambda R_{t+1}).
    """
    n = len(rewards)
    if len(vals) != n + 1:
        raise ValueError(f"compute_return needs {n + 1} values for {n} rewards, got {len(vals)}")
    returns = np.zeros(n)
    next_return = vals[n]
    next_weight = 1.0          # the last step bootstraps from vals[n] alone
    for t in reversed(range(n)):
        next_return = rewards[t] + gamma * ((1 - next_weight) * vals[t + 1] + next_weight * next_return)
        returns[t] = next_return
        next_weight = td_lambda
    return returns


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


def normalize_advantages(adv, clip, eps=ADV_EPS):
    """(clip((A - mean) / (std + eps), -clip, clip), mean, std) with this rank's mean and std (not
    MPI-reduced, as DeepMimic's PPO)."""
    mean, std = float(np.mean(adv)), float(np.std(adv))
    return np.clip((adv - mean) / (std + eps), -clip, clip), mean, std
