"""Returns of a path: TD(lambda) as DeepMimic computes it (deepmimic.md 5.3)."""
import numpy as np


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

