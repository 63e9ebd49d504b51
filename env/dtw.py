"""Dynamic time warping as DeepMimic's cDynamicTimeWarper scores AMP test episodes.

Two sequences of samples (the simulated and the reference character, one sample per decision)
are aligned by the cheapest monotone path through the pairwise cost matrix c:
    D[0, 0] = 0;  D[i, 0] = D[0, j] = inf for i, j > 0
    D[i, j] = c[i, j] + min(D[i-1, j-1], D[i-1, j], D[i, j-1])
and the alignment cost is D[n-1, m-1] (the first pair only anchors the path; its cost is never
counted). The per-pair cost (cSceneImitateAMP::TimeWarpCost) is the mean Euclidean distance
between corresponding 3D points of the two samples.
"""
import numpy as np


def mean_point_distance(points0, points1):
    """Mean over points of |p0 - p1|: points0 (P, 3) against points1 (..., P, 3) -> (...)."""
    return np.mean(np.linalg.norm(points1 - points0, axis=-1), axis=-1)


def alignment_cost(samples0, samples1, cost_fn=mean_point_distance):
    """D[n-1, m-1] for samples0 (n, ...) and samples1 (m, ...); cost_fn(sample0, samples1) gives
    one row of the cost matrix.

    Each row is solved in one pass: with a_j = min(D[i-1, j-1], D[i-1, j]) and S_j the running
    sum of the row's costs, D[i, j] - S_j = min(a_j - S_{j-1}, D[i, j-1] - S_{j-1}), a running
    minimum.
    """
    n, m = len(samples0), len(samples1)
    prev = np.full(m, np.inf)
    prev[0] = 0.0
    for i in range(1, n):
        costs = cost_fn(samples0[i], samples1[1:])
        best_prev = np.minimum(prev[:-1], prev[1:])
        sums = np.cumsum(costs)
        row = np.full(m, np.inf)
        row[1:] = np.minimum.accumulate(best_prev - (sums - costs)) + sums
        prev = row
    return float(prev[-1])


class TimeWarper:
    """Collects the two sequences of one episode; capacity is the episode's most samples."""

    def __init__(self, capacity):
        self.capacity = capacity
        self.samples0 = []
        self.samples1 = []

    def reset(self):
        self.samples0.clear()
        self.samples1.clear()

    def add(self, sample0, sample1):
        self.samples0.append(np.array(sample0, dtype=float))
        self.samples1.append(np.array(sample1, dtype=float))

    @property
    def sample_count(self):
        return len(self.samples0)

    def calc_alignment(self):
        return alignment_cost(np.array(self.samples0), np.array(self.samples1))
