"""tests/bench/core_loop.py without DeepMimic's core: the loop (common.bench) on our side in each
variant, and the one line and exit status 2 when the core cannot be had."""
import os
import subprocess
import sys

import pytest

from tests.bench import core_loop
from tests.reference_core import common, harness
from util.paths import project_root


@pytest.mark.parametrize("variant", list(core_loop.VARIANTS))
def test_loop_on_our_side(tmp_path, variant):
    env = core_loop.build_ours(harness.our_args(core_loop.make_case(variant, "walk"), None, tmp_path))
    try:
        out = common.bench(env, decisions=40)
        assert out["decisions"] == 40 and out["decisions_per_s"] > 0
        if variant == "fall":
            # the walk file's 0.5 s episodes (15 decisions at most), fall end on
            assert env.enable_fall_end and env.timer.max_time == 0.5
            assert out["episodes"] + out["invalid"] >= 2
        else:
            # one 20 s episode (600 decisions) that no fall ends
            assert not env.enable_fall_end and env.timer.max_time == 20.0
            assert out["episodes"] == out["invalid"] == 0
    finally:
        env.shutdown()


@pytest.mark.parametrize("where", ["none", "not_a_checkout", "no_sources"])
def test_missing_core_one_line(tmp_path, where):
    args = {"none": [], "not_a_checkout": ["--deepmimic", str(tmp_path)],
            "no_sources": ["--deepmimic", str(tmp_path)]}[where]
    if where == "no_sources":
        (tmp_path / "DeepMimicCore").mkdir()    # build_core.sh refuses it: no Makefile / DeepMimicCore.i
    env = {k: v for k, v in os.environ.items() if k != "DEEPMIMIC"}
    proc = subprocess.run([sys.executable, "-m", "tests.bench.core_loop", "--rounds", "1", "--seconds", "0.1", *args],
                          cwd=project_root(), env=env, capture_output=True, text=True, timeout=120)
    lines = proc.stderr.splitlines()
    assert proc.returncode == 2 and proc.stdout == ""
    assert len(lines) == 1 and lines[0].startswith("core_loop.py: error: "), proc.stderr
    assert "apt-get install libbullet-dev" in lines[0] and "--deepmimic <checkout>" in lines[0]


def test_profile_groups_by_hand():
    """A made-up profile: the loop (10 s, 2 own) calls a reset (3 s, of which 1 s stepping), the
    stepping (3 s) and a reward (2 s, of which 1.5 s posing the reference)."""
    top = ("/p/tests/reference_core/common.py", 1, "bench")
    reset = ("/p/env/scenes/rl_scene_sim_char.py", 2, "reset")
    step = ("~", 0, "<built-in method pybullet.stepSimulation>")
    reward = ("/p/env/scenes/imitate.py", 3, "calc_reward")
    ref = ("/p/env/scenes/imitate.py", 4, "ref_snapshot")
    stats = {top: (1, 1, 2.0, 10.0, {}),
             reset: (1, 1, 2.0, 3.0, {top: (1, 1, 2.0, 3.0)}),
             step: (9, 9, 4.0, 4.0, {top: (8, 8, 3.0, 3.0), reset: (1, 1, 1.0, 1.0)}),
             reward: (1, 1, 0.5, 2.0, {top: (1, 1, 0.5, 2.0)}),
             ref: (1, 1, 1.5, 1.5, {reward: (1, 1, 1.5, 1.5)})}
    groups = core_loop.profile_groups(stats, top)
    expected = {"pybullet step": 3.0, "PD": 0.0, "state": 0.0, "reward": 0.5, "reference": 1.5, "resets": 3.0,
                "other Python": 2.0}
    assert groups == pytest.approx(expected)
