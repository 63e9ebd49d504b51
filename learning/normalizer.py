"""Running mean/std normalisers for states, goals, actions (and AMP observations): deepmimic.md 5.5.

Start at mean = -offset, std = 1/scale, count 0. record() accumulates local count, sum and sum
of squares; update() sums them over MPI ranks and blends them with the old statistics by count:
    mean    <- (count mean + n new_mean) / (count + n)        (same for mean_sq)
    std      = max(sqrt(max(mean_sq - mean^2, 0)), 0.02)
Groups: entries of group -1 (NormGroup.None_) never change; group 0 (NormGroup.Zero) keeps a
statistic per entry; every other id shares one statistic, the mean over its entries of the new
batch's means (and mean squares). No clipping.
"""
import numpy as np

import util.mpi_util as mpi_util
from env.env import NormGroup

STD_EPS = 0.02


class Normalizer:
    def __init__(self, size, groups=None, eps=STD_EPS):
        self.eps = eps
        self.mean = np.zeros(size)
        self.mean_sq = np.zeros(size)
        self.std = np.ones(size)
        self.count = 0
        group_ids = np.zeros(size, dtype=np.int64) if groups is None else np.asarray(groups, dtype=np.int64)
        if group_ids.shape != (size,):
            raise ValueError(f"normaliser of size {size} given {group_ids.size} group ids")
        self.groups = {int(g): np.nonzero(group_ids == g)[0] for g in np.unique(group_ids)}
        self._new_count = 0
        self._new_sum = np.zeros(size)
        self._new_sum_sq = np.zeros(size)

    @property
    def size(self):
        return self.mean.size

    def set_mean_std(self, mean, std):
        mean = np.asarray(mean, dtype=np.float64)
        std = np.asarray(std, dtype=np.float64)
        if mean.shape != (self.size,) or std.shape != (self.size,):
            raise ValueError(f"normaliser of size {self.size} given mean {mean.shape} and std {std.shape}")
        self.mean = mean.copy()
        self.std = std.copy()
        self.mean_sq = np.square(self.std) + np.square(self.mean)

    def load(self, count, mean, std, mean_sq=None):
        """Restores checkpointed statistics; mean_sq (from a resume state) makes it exact."""
        self.set_mean_std(mean, std)
        if mean_sq is not None:
            self.mean_sq = np.asarray(mean_sq, dtype=np.float64).copy()
        self.count = int(count)

    def record(self, x):
        x = np.reshape(np.asarray(x, dtype=np.float64), (-1, self.size))
        self._new_count += x.shape[0]
        self._new_sum += x.sum(axis=0)
        self._new_sum_sq += np.square(x).sum(axis=0)

    def update(self):
        """Blends in what every rank recorded since the last update (a collective call)."""
        sums = mpi_util.reduce_sum(np.concatenate([[self._new_count], self._new_sum, self._new_sum_sq]))
        new_count = int(round(sums[0]))
        self._new_count = 0
        self._new_sum.fill(0)
        self._new_sum_sq.fill(0)
        if new_count == 0:
            return
        new_mean = self._group_stats(sums[1:1 + self.size] / new_count, self.mean)
        new_mean_sq = self._group_stats(sums[1 + self.size:] / new_count, self.mean_sq)
        if not (np.isfinite(new_mean).all() and np.isfinite(new_mean_sq).all()):
            # the same sums on every rank, so every rank refuses
            print(f"warning: normaliser update refused: non-finite statistics in {new_count} new samples", flush=True)
            return
        total = self.count + new_count
        w_old, w_new = self.count / total, new_count / total
        self.mean = w_old * self.mean + w_new * new_mean
        self.mean_sq = w_old * self.mean_sq + w_new * new_mean_sq
        self.count = total
        self.std = np.maximum(np.sqrt(np.maximum(self.mean_sq - np.square(self.mean), 0)), self.eps)

    def _group_stats(self, new, old):
        out = new.copy()
        for gid, idx in self.groups.items():
            if gid == NormGroup.None_:
                out[idx] = old[idx]
            elif gid != NormGroup.Zero:
                out[idx] = new[idx].mean()
        return out

    def normalize(self, x):
        return (x - self.mean) / self.std

    def unnormalize(self, norm_x):
        return norm_x * self.std + self.mean
