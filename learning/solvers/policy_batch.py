"""PolicyBatch: an iteration's on-policy samples as a policy step takes them.

A policy step (ppo_step.PPOStep, trpo_step.TRPOStep) updates an actor-critic model with the
agent's actor and critic solvers: step(batch, iteration) returns the iteration's log columns.

One row per replay-buffer slot of the stored paths, in path order, path ends included (a path of
n decisions has n + 1 rows; its last is the end state). Inputs are normalised float32 arrays, one
per network input; actions and log-probabilities are in normalised action units.
"""
from typing import NamedTuple

import numpy as np


class PolicyBatch(NamedTuple):
    inputs: tuple               # the actor's inputs
    critic_inputs: tuple        # the critic's (the actor's, or more: GAIL's TRPO adds a time feature)
    norm_actions: np.ndarray    # (n, A) float64
    logps: np.ndarray           # (n,) the behaviour policy's log-probabilities of the actions
    vals: np.ndarray            # (n,) float64 critic values; at path ends the end's value
    returns: np.ndarray         # (n,) float64 TD(lambda) returns (value targets), 0 at path ends
    valid_pos: np.ndarray       # rows of decisions (not path ends)
    exp_pos: np.ndarray         # rows of exploratory decisions (sampled, not mean, actions)
    norm_bound_min: np.ndarray  # (A,) float32 action bounds, normalised
    norm_bound_max: np.ndarray


def take_rows(arrays, pos):
    """The rows `pos` of each array of a tuple of network inputs."""
    return tuple(x[pos] for x in arrays)
