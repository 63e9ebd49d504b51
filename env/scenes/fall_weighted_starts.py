"""Reference state initialisation with more training starts where episodes fall: the imitate
scene's `reset_fail_weight` w (DeepMimic draws every start uniformly over the clip: w = 0).

The clip's duration is cut into BINS equal bins; each keeps an exponential moving average, at rate
RATE per episode started in it, of whether training episodes started there ended in a fall. A
training reset draws its start uniformly with probability 1 - w; otherwise it picks a bin with
probability proportional to the bins' fall averages (uniformly while no bin has seen a fall) and
a time uniform within it. So starts from which the policy falls (a jump's take-off, say) come back
more often, while every other start keeps at least 1 - w of its uniform share. Test resets stay
uniform, so evaluations do not depend on it.
"""
import numpy as np

BINS = 20
RATE = 0.05


class FallWeightedStarts:
    def __init__(self, weight):
        self.weight = weight                # in (0, 1]: the scene checks the arg
        self.fall_rate = np.zeros(BINS)     # per bin: moving average of falls of episodes started there
        self.started_bin = None             # the running training episode's start bin

    def draw(self, rng, duration):
        """A training episode's start time in [0, duration); remembers its bin. Until a fall is
        counted it takes one draw, DeepMimic's uniform one, so a world built with the option (its
        first reset is a training one) leaves the seed's stream, and its test starts, as without."""
        falls = self.fall_rate.sum()
        if falls > 0.0 and rng.uniform() < self.weight:
            b = int(rng.choice(BINS, p=self.fall_rate / falls))
            t = (b + rng.uniform()) * duration / BINS
        else:
            t = rng.uniform(0.0, duration)
        self.started_bin = min(int(t / duration * BINS), BINS - 1)
        return t

    def end_episode(self, fell):
        """The running training episode ended (fell or not); a no-op when none runs."""
        if self.started_bin is not None:
            b = self.started_bin
            self.fall_rate[b] += RATE * (float(fell) - self.fall_rate[b])
            self.started_bin = None
