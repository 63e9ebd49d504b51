"""reset_fail_weight: training starts drawn more often where training episodes fell
(env/scenes/fall_weighted_starts.py), test starts as DeepMimic draws them."""
import numpy as np
import pytest

from env.deepmimic_env import DeepMimicEnv
from env.env import Mode
from env.scenes.fall_weighted_starts import BINS, RATE, FallWeightedStarts
from util.arg_parser import ArgError, load_args

WALK_ARGS = "args/train_humanoid3d_walk_args.txt"


def make_env(*extra, seed=0):
    return DeepMimicEnv(load_args(["--arg_file", WALK_ARGS, *extra]), seed=seed)


def bin_of(t, duration):
    return min(int(t / duration * BINS), BINS - 1)


def test_falls_move_the_starts_to_their_bin():
    starts, rng, duration = FallWeightedStarts(0.5), np.random.default_rng(0), 2.0
    first = [bin_of(starts.draw(rng, duration), duration) for _ in range(2000)]   # no fall yet: uniform
    assert np.bincount(first, minlength=BINS).min() > 0.5 * 2000 / BINS
    starts.end_episode(False)
    while True:                                   # episodes from bin 7 fall, the others do not
        b = bin_of(starts.draw(rng, duration), duration)
        if b == 7:
            starts.end_episode(True)
            break
        starts.end_episode(False)
    assert starts.fall_rate[7] == pytest.approx(RATE) and starts.fall_rate.sum() == pytest.approx(RATE)
    draws = [bin_of(starts.draw(rng, duration), duration) for _ in range(4000)]
    share = np.mean(np.array(draws) == 7)
    assert share == pytest.approx(0.5 + 0.5 / BINS, abs=0.03)   # w to the falling bin, 1 - w uniform
    starts.started_bin = None
    starts.end_episode(True)                     # no episode running: nothing counted
    assert starts.fall_rate[7] == pytest.approx(RATE)


def test_the_scene_counts_training_falls_and_keeps_test_starts_uniform():
    plain, weighted = make_env(), make_env("--reset_fail_weight", "1")
    assert plain.fall_starts is None
    duration = weighted.motion.duration
    weighted.has_fallen = lambda: True           # every training episode falls
    first_bin = bin_of(weighted.kin_char.time, duration)
    assert weighted.fall_starts.started_bin == first_bin
    weighted.reset()
    assert weighted.fall_starts.fall_rate[first_bin] == pytest.approx(RATE)
    assert np.count_nonzero(weighted.fall_starts.fall_rate) == 1
    for _ in range(5):                           # with weight 1 every start is in the one falling bin
        assert bin_of(weighted.kin_char.time, duration) == first_bin
        weighted.reset()
    rates = weighted.fall_starts.fall_rate.copy()
    for env in (plain, weighted):
        env.rng = np.random.default_rng(3)
        env.set_mode(Mode.TEST)
    times = []
    for env in (plain, weighted):
        env_times = []
        for _ in range(6):
            env.reset()
            env_times.append(env.kin_char.time)
        times.append(env_times)
    assert times[0] == times[1]                  # test starts: DeepMimic's uniform draws
    assert len({bin_of(t, duration) for t in times[1]}) > 1
    # the training episode that ended at the first test reset was counted; test episodes are not
    assert weighted.fall_starts.fall_rate[first_bin] > rates[first_bin]
    assert np.count_nonzero(weighted.fall_starts.fall_rate) == 1 and weighted.fall_starts.started_bin is None
    plain.shutdown()
    weighted.shutdown()


def test_without_a_fall_the_draw_is_deepmimics():
    """Until a fall is counted a training start takes the one uniform draw DeepMimic's does: built
    with or without the option, the same seed gives the same first (training) start and the same
    test starts after it."""
    plain, weighted = make_env(seed=5), make_env("--reset_fail_weight", "0.5", seed=5)
    assert weighted.kin_char.time == plain.kin_char.time
    times = []
    for env in (plain, weighted):
        env.set_mode(Mode.TEST)
        env_times = []
        for _ in range(4):
            env.reset()
            env_times.append(env.kin_char.time)
        times.append(env_times)
        env.shutdown()
    assert times[0] == times[1]


@pytest.mark.parametrize("value,match", [("1.5", "--reset_fail_weight 1.5: must be at most 1"),
                                         ("-0.1", "--reset_fail_weight")])
def test_reset_fail_weight_out_of_range(value, match):
    with pytest.raises(ArgError, match=match):
        make_env("--reset_fail_weight", value)
