"""One episode of one agent as recorded by RLAgent: n decisions, n + 1 states (deepmimic.md 5.6).

states, goals: n + 1 (the last recorded when the episode ends); actions, logps, flags, rewards: n
(reward t is computed at decision t + 1, or at the end); `extras` holds per-action fields that a
subclass declares in its replay-buffer schema (e.g. AMP observations), n entries each.
"""
import numpy as np

from env.env import Terminate


class Path:
    def __init__(self, extra_fields=()):
        self.extra_fields = tuple(extra_fields)
        self.clear()

    def clear(self):
        self.states = []
        self.goals = []
        self.actions = []
        self.logps = []
        self.flags = []
        self.rewards = []
        self.extras = {name: [] for name in self.extra_fields}
        self.terminate = Terminate.Null

    def pathlength(self):
        return len(self.actions)

    def is_valid(self):
        n = self.pathlength()
        return (len(self.states) == len(self.goals) == n + 1
                and len(self.logps) == len(self.flags) == len(self.rewards) == n
                and all(len(v) == n for v in self.extras.values()))

    def check_vals(self):
        """True when every number is finite."""
        arrays = [self.states, self.goals, self.actions, self.logps, self.rewards, *self.extras.values()]
        return all(np.all(np.isfinite(np.asarray(a, dtype=np.float64))) for a in arrays if len(a))

    def calc_return(self):
        return float(np.sum(self.rewards))
