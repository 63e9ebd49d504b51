"""Normaliser: count-weighted merges, groups, the std floor (one process; MPI in test_mpi_ppo)."""
import numpy as np
import pytest

from learning.normalizer import Normalizer


def test_initial_values_from_offset_and_scale():
    norm = Normalizer(2)
    norm.set_mean_std(np.array([1.0, -2.0]), np.array([0.5, 4.0]))
    np.testing.assert_allclose(norm.normalize(np.array([2.0, 2.0])), [2.0, 1.0])
    np.testing.assert_allclose(norm.unnormalize(np.array([2.0, 1.0])), [2.0, 2.0])
    assert norm.count == 0


def test_first_update_replaces_then_updates_merge_by_count():
    rng = np.random.RandomState(0)
    a, b = rng.normal(3, 2, (50, 3)), rng.normal(-1, 0.5, (150, 3))
    norm = Normalizer(3)
    norm.set_mean_std(np.zeros(3), np.ones(3))
    norm.record(a)
    norm.update()
    np.testing.assert_allclose(norm.mean, a.mean(0))
    np.testing.assert_allclose(norm.std, a.std(0))
    norm.record(b[:100])       # two records before one update are pooled
    norm.record(b[100:])
    norm.update()
    pooled = np.concatenate([a, b])
    assert norm.count == 200
    np.testing.assert_allclose(norm.mean, pooled.mean(0), rtol=1e-12)
    np.testing.assert_allclose(norm.std, pooled.std(0), rtol=1e-10)


def test_groups_none_single_and_shared():
    groups = np.array([-1, 0, 0, 3, 3, 3])
    norm = Normalizer(6, groups)
    norm.set_mean_std(np.full(6, 0.5), np.full(6, 0.25))
    x = np.array([[1.0, 2.0, 3.0, 1.0, 2.0, 6.0],
                  [3.0, 4.0, 7.0, 3.0, 2.0, 10.0]])
    norm.record(x)
    norm.update()
    assert norm.mean[0] == 0.5 and norm.std[0] == 0.25                  # None: unchanged
    np.testing.assert_allclose(norm.mean[1:3], [3.0, 5.0])              # Zero: per entry
    np.testing.assert_allclose(norm.std[1:3], [1.0, 2.0])
    shared_mean = np.mean(x[:, 3:])                                      # id 3: one statistic
    shared_std = np.sqrt(np.mean(np.square(x[:, 3:])) - shared_mean ** 2)
    np.testing.assert_allclose(norm.mean[3:], shared_mean)
    np.testing.assert_allclose(norm.std[3:], shared_std)


def test_std_floor_and_empty_update():
    norm = Normalizer(1)
    norm.record(np.full((10, 1), 7.0))
    norm.update()
    assert norm.mean[0] == 7.0 and norm.std[0] == pytest.approx(0.02)
    norm.update()       # nothing recorded: no change
    assert norm.count == 10 and norm.mean[0] == 7.0


def test_bad_sizes_are_errors():
    with pytest.raises(ValueError, match="size 3"):
        Normalizer(3, np.zeros(2))
    with pytest.raises(ValueError, match="size 2"):
        Normalizer(2).set_mean_std(np.zeros(3), np.ones(3))
