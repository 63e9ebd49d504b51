"""The discriminator's observation buffers (DeepMimic's ReplayBufferRandStorage).

A fixed-capacity array of observations: stores fill the free slots in order; once full, every
new observation overwrites a slot chosen at random (without repeats within one store), so the
buffer keeps a random subset of everything seen. Sampling draws slots uniformly with replacement.
"""
import numpy as np


class AMPObsBuffer:
    def __init__(self, capacity, obs_size):
        if capacity < 1:
            raise ValueError(f"AMP observation buffer capacity must be >= 1, got {capacity}")
        self.capacity = int(capacity)
        self.data = np.zeros((self.capacity, obs_size), dtype=np.float32)
        self.size = 0
        self.total_count = 0

    def store(self, obs):
        obs = np.asarray(obs, dtype=np.float32)
        n = len(obs)
        if n >= self.capacity:
            raise ValueError(f"storing {n} observations in a buffer of {self.capacity}: a path must be "
                             "shorter than the discriminator's buffers (per rank)")
        fill = np.arange(self.size, min(self.size + n, self.capacity))
        rand = self._random_slots(n - len(fill))
        self.data[np.concatenate([fill, rand]).astype(int)] = obs
        self.size = min(self.size + n, self.capacity)
        self.total_count += n

    def _random_slots(self, k):
        """k distinct slots of the filled part, each k-subset equally likely, in random order.
        Few against the size (the usual path end into a full buffer): draws with replacement and
        tops up the repeats, O(k) where np.random.choice without replacement permutes every slot."""
        if 2 * k > self.size:
            return np.random.choice(self.size, k, replace=False)
        slots = np.unique(np.random.randint(0, self.size, size=k))
        while len(slots) < k:
            slots = np.unique(np.concatenate([slots, np.random.randint(0, self.size, size=k - len(slots))]))
        return np.random.permutation(slots)

    def sample(self, n):
        if self.size == 0:
            raise ValueError("sampling an empty AMP observation buffer")
        return self.data[np.random.randint(0, self.size, size=n)]
