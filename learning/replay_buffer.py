"""Ring buffer of whole paths with an explicit schema (deepmimic.md 5.6).

A path of n decisions takes n + 1 consecutive slots (wrapping around the end): per-state fields
(states, goals) fill all n + 1, per-action fields (actions, logps, rewards, flags, extras) the
first n; the last slot is the path's end. Every slot of a stored path knows its path's start and
end slots and the terminate flag. Storing over old slots frees each overlapped old path whole.
For every filter flag (e.g. the exploration bit) a mask marks the non-end slots whose flags
have it. total_count counts every slot ever stored (n + 1 per path) and is never reset. The
occupied slots and each mask's set slots are counted as paths come and go (the agents ask at
every episode end; counting a million-slot buffer each time cost ~1.5 ms).
"""
from dataclasses import dataclass

import numpy as np

INVALID_IDX = -1


@dataclass(frozen=True)
class Field:
    name: str
    shape: tuple
    dtype: type = np.float64
    per_state: bool = False   # n + 1 entries (states, goals) instead of n


def pg_fields(state_size, goal_size, action_size):
    """The schema RLAgent stores: what Path records."""
    return [
        Field("states", (state_size,), np.float32, per_state=True),
        Field("goals", (goal_size,), np.float32, per_state=True),
        Field("actions", (action_size,), np.float64),
        Field("logps", (), np.float64),
        Field("rewards", (), np.float64),
        Field("flags", (), np.int32),
    ]


class ReplayBuffer:
    def __init__(self, capacity, fields, filter_flags=()):
        self.capacity = int(capacity)
        self.fields = {f.name: f for f in fields}
        self.data = {f.name: np.zeros((self.capacity,) + tuple(f.shape), dtype=f.dtype) for f in fields}
        self.path_start = np.full(self.capacity, INVALID_IDX, dtype=np.int64)
        self.path_end = np.full(self.capacity, INVALID_IDX, dtype=np.int64)
        self.terminate = np.zeros(self.capacity, dtype=np.int32)
        self.filter_masks = {flag: np.zeros(self.capacity, dtype=bool) for flag in filter_flags}
        self.total_count = 0
        self.clear()

    def clear(self):
        """Frees every path (total_count keeps counting)."""
        self.path_start.fill(INVALID_IDX)
        self.path_end.fill(INVALID_IDX)
        for mask in self.filter_masks.values():
            mask.fill(False)
        self.head = 0
        self.num_paths = 0
        self._size = 0
        self._filtered_counts = dict.fromkeys(self.filter_masks, 0)

    def current_size(self):
        """Slots held by stored paths."""
        return self._size

    def store(self, path):
        """Stores a valid, finite path; returns its start slot, or INVALID_IDX if it is rejected."""
        n = path.pathlength()
        if n == 0 or not path.check_vals():
            return INVALID_IDX
        if not path.is_valid():
            raise ValueError(f"inconsistent path: {n} actions, {len(path.states)} states, "
                             f"{len(path.rewards)} rewards")
        if n + 1 > self.capacity:
            raise ValueError(f"a path of {n + 1} samples does not fit a replay buffer of {self.capacity}")
        idx = (self.head + np.arange(n + 1)) % self.capacity
        self._free_paths(idx)
        per_step = {"states": path.states, "goals": path.goals, "actions": path.actions,
                    "logps": path.logps, "flags": path.flags, "rewards": path.rewards, **path.extras}
        for name, field in self.fields.items():
            values = np.asarray(per_step[name], dtype=field.dtype).reshape((len(per_step[name]),) + tuple(field.shape))
            target = idx if field.per_state else idx[:-1]
            self.data[name][target] = values
            if not field.per_state:
                self.data[name][idx[-1]] = 0
        self.path_start[idx] = idx[0]
        self.path_end[idx] = idx[-1]
        self.terminate[idx] = int(path.terminate)
        flags = np.asarray(path.flags, dtype=np.int64)
        for flag, mask in self.filter_masks.items():
            flagged = (flags & flag) != 0
            mask[idx[:-1]] = flagged
            mask[idx[-1]] = False
            self._filtered_counts[flag] += int(np.count_nonzero(flagged))
        self.head = int((idx[-1] + 1) % self.capacity)
        self.num_paths += 1
        self._size += n + 1
        self.total_count += n + 1
        return int(idx[0])

    def _path_slots(self, start):
        end = self.path_end[start]
        return (start + np.arange((end - start) % self.capacity + 1)) % self.capacity

    def _free_paths(self, idx):
        starts = np.unique(self.path_start[idx])
        for start in starts[starts != INVALID_IDX]:
            slots = self._path_slots(start)
            self.path_start[slots] = INVALID_IDX
            self.path_end[slots] = INVALID_IDX
            for flag, mask in self.filter_masks.items():
                self._filtered_counts[flag] -= int(np.count_nonzero(mask[slots]))
                mask[slots] = False
            self.num_paths -= 1
            self._size -= slots.size

    def get(self, name, idx):
        return self.data[name][idx]

    def is_path_end(self, idx):
        return self.path_end[idx] == idx

    def check_terminate(self, idx, flag):
        return self.terminate[idx] == int(flag)

    def get_idx_filtered(self, flag):
        return np.nonzero(self.filter_masks[flag])[0]

    def count_filtered(self, flag):
        return self._filtered_counts[flag]

    def path_slots(self):
        """Slots of every stored path (each ending with its end slot), in storage order from the
        oldest path to the newest."""
        starts = np.nonzero((self.path_start == np.arange(self.capacity)))[0]
        order = np.argsort((starts - self.head) % self.capacity)
        return [self._path_slots(s) for s in starts[order]]
