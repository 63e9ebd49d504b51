"""tests/bench/core_loop_perf.py: the perf report parsing and the per-decision split, on canned
`perf report` text (perf itself is not needed)."""
import pytest

from tests.bench.core_loop_perf import FREQUENCY, parse_children, parse_pid_samples, split

CHILDREN = """\
# Children      Self  Pid:Command    Symbol
    26.00%     0.00%    101:python     [.] pybullet_stepSimulation
    25.00%     0.00%    101:python     [.] btDiscreteDynamicsWorld::stepSimulation
     3.00%     0.00%    101:python     [.] btCollisionWorld::updateAabbs (inlined)
     2.00%     0.10%    101:python     [.] btCollisionWorld::updateAabbs
     1.50%     0.20%    101:python     [.] btDbvtBroadphase::collide
    24.00%     0.00%    202:python     [.] cWorld::Update
    20.00%     0.02%    202:python     [.] btDiscreteDynamicsWorld::stepSimulation
     0.50%     0.00%    202:python     [.] btCollisionWorld::updateAabbs
     5.00%     1.00%    202:python     [.] btMultiBodyDynamicsWorld::solveExternalForces
"""
PIDS = """\
# Overhead       Samples  Pid:Command
#
    50.00%          2495    101:python
    49.90%          2490    202:python
     0.10%             5    303:sha256sum
"""


def test_parse_keeps_the_largest_entry_per_symbol_and_drops_inlined_marks():
    rows = parse_children(CHILDREN)
    assert rows[101]["btCollisionWorld::updateAabbs"] == 3.0
    assert rows[101]["btDiscreteDynamicsWorld::stepSimulation"] == 25.0
    assert rows[202]["cWorld::Update"] == 24.0
    assert parse_pid_samples(PIDS) == {101: 2495, 202: 2490, 303: 5}


def test_split_per_decision():
    """5000 samples at FREQUENCY Hz; 25% of them in ours' step over 1000 decisions is
    0.25 * 5000 / FREQUENCY / 1000 s per decision; the rest of a side is its measured time less its step."""
    rows, samples = parse_children(CHILDREN), {101: 2495, 202: 2490, 303: 15}
    out = split(rows, samples, {"ours": 1000, "theirs": 2000}, {"ours": 2e-3, "theirs": 1e-3})
    ours, theirs = out["ours"]["ms_per_decision"], out["theirs"]["ms_per_decision"]
    assert ours["step"] == pytest.approx(1e3 * 0.25 * 5000 / FREQUENCY / 1000)
    assert theirs["step"] == pytest.approx(1e3 * 0.20 * 5000 / FREQUENCY / 2000)
    assert ours["aabb updates"] == pytest.approx(ours["step"] * 3 / 25)
    assert ours["forward dynamics"] == 0.0 and theirs["broadphase pairs"] == 0.0
    assert ours["outside Bullet's step"] == pytest.approx(2.0 - ours["step"])
    assert out["step_ratio_ours_theirs"] == pytest.approx(ours["step"] / theirs["step"])


def test_split_names_the_missing_side():
    rows = parse_children("\n".join(line for line in CHILDREN.splitlines() if "cWorld" not in line))
    with pytest.raises(RuntimeError, match="cWorld::Update"):
        split(rows, {101: 10}, {"ours": 1, "theirs": 1}, {"ours": 1, "theirs": 1})
