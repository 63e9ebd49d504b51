"""Replay buffer bookkeeping: slots per path, wrap-around, whole-path overwrite, filters, counts."""
import numpy as np
import pytest

from env.env import Terminate
from learning.path import Path
from learning.replay_buffer import INVALID_IDX, Field, ReplayBuffer, pg_fields

EXP = 1


def make_path(n, first=0.0, flags=None, terminate=Terminate.Null, amp=False):
    path = Path(["amp_obs"] if amp else [])
    for t in range(n + 1):
        path.states.append(np.array([first + t, 0.0]))
        path.goals.append(np.zeros(0))
    for t in range(n):
        path.actions.append(np.array([first + t]))
        path.logps.append(-float(t))
        path.flags.append(EXP if flags is None else flags[t])
        path.rewards.append(first + 0.5 * t)
        if amp:
            path.extras["amp_obs"].append(np.array([first + t, 1.0, 2.0]))
    path.terminate = terminate
    return path


def make_buffer(capacity, amp=False):
    fields = pg_fields(2, 0, 1) + ([Field("amp_obs", (3,))] if amp else [])
    return ReplayBuffer(capacity, fields, filter_flags=(EXP,))


def test_path_slots_and_flags():
    buf = make_buffer(20)
    assert buf.store(make_path(3, first=10, flags=[1, 0, 1], terminate=Terminate.Fail)) == 0
    assert buf.store(make_path(2, first=20)) == 4
    assert buf.current_size() == 7 and buf.num_paths == 2 and buf.total_count == 7
    np.testing.assert_array_equal(buf.path_start[:7], [0, 0, 0, 0, 4, 4, 4])
    np.testing.assert_array_equal(buf.path_end[:7], [3, 3, 3, 3, 6, 6, 6])
    np.testing.assert_array_equal(buf.is_path_end(np.arange(7)), [0, 0, 0, 1, 0, 0, 1])
    assert buf.check_terminate(np.array([0, 3, 4]), Terminate.Fail).tolist() == [True, True, False]
    np.testing.assert_array_equal(buf.get_idx_filtered(EXP), [0, 2, 4, 5])   # end slots excluded
    np.testing.assert_array_equal(buf.get("states", np.arange(4))[:, 0], [10, 11, 12, 13])
    np.testing.assert_array_equal(buf.get("rewards", np.arange(4)), [10, 10.5, 11, 0])
    assert [s.tolist() for s in buf.path_slots()] == [[0, 1, 2, 3], [4, 5, 6]]


def test_overwrite_frees_whole_old_paths_and_wraps():
    buf = make_buffer(10)
    buf.store(make_path(3, first=0))      # slots 0-3
    buf.store(make_path(3, first=10))     # slots 4-7
    buf.store(make_path(3, first=20))     # slots 8, 9, 0, 1: wraps, frees the first path whole
    assert buf.num_paths == 2 and buf.total_count == 12
    assert buf.current_size() == 8
    assert buf.path_start[2] == INVALID_IDX and buf.path_start[3] == INVALID_IDX
    np.testing.assert_array_equal(buf.path_start[[8, 9, 0, 1]], [8, 8, 8, 8])
    np.testing.assert_array_equal(buf.path_end[[8, 9, 0, 1]], [1, 1, 1, 1])
    np.testing.assert_array_equal(buf.get_idx_filtered(EXP), [0, 4, 5, 6, 8, 9])
    assert [s.tolist() for s in buf.path_slots()] == [[4, 5, 6, 7], [8, 9, 0, 1]]
    np.testing.assert_array_equal(buf.get("states", np.array([8, 9, 0, 1]))[:, 0], [20, 21, 22, 23])
    buf.store(make_path(1, first=30))     # slots 2-3: free slots, nothing else lost
    assert buf.num_paths == 3
    buf.store(make_path(1, first=40))     # slots 4-5: frees the 10-path (slots 4-7) whole
    assert buf.num_paths == 3 and buf.current_size() == 8
    assert np.all(buf.path_start[[6, 7]] == INVALID_IDX)
    assert buf.count_filtered(EXP) == 5


def test_running_counts_match_the_slots():
    """current_size and count_filtered are kept as paths come and go: they must equal a count
    over the whole buffer after any sequence of stores (wrap-around, partial overwrites) and clears."""
    rng = np.random.default_rng(0)
    buf = make_buffer(23)
    for step in range(300):
        if step % 97 == 96:
            buf.clear()
        n = int(rng.integers(1, 9))
        buf.store(make_path(n, first=step, flags=rng.integers(0, 2, size=n).tolist()))
        assert buf.current_size() == np.count_nonzero(buf.path_start != INVALID_IDX)
        assert buf.count_filtered(EXP) == np.count_nonzero(buf.filter_masks[EXP])
        assert buf.current_size() == sum(len(slots) for slots in buf.path_slots())


def test_clear_keeps_total_count():
    buf = make_buffer(10)
    buf.store(make_path(2))
    buf.clear()
    assert buf.current_size() == 0 and buf.num_paths == 0 and buf.total_count == 3
    assert buf.store(make_path(1)) == 0


def test_rejects_and_errors():
    buf = make_buffer(5)
    bad = make_path(2)
    bad.rewards[1] = np.nan
    assert buf.store(bad) == INVALID_IDX and buf.total_count == 0
    with pytest.raises(ValueError, match="does not fit"):
        buf.store(make_path(5))
    broken = make_path(2)
    broken.states.pop()
    with pytest.raises(ValueError, match="inconsistent path"):
        buf.store(broken)


def test_extra_per_action_fields():
    buf = make_buffer(10, amp=True)
    buf.store(make_path(2, first=5, amp=True))
    np.testing.assert_array_equal(buf.get("amp_obs", np.arange(3))[:, 0], [5, 6, 0])
