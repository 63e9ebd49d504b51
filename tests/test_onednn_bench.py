"""tests/bench/onednn.py without training: the setting each measurement runs under, its ratios from
hand-made measurements, and the environment left as it was."""
import os

import pytest

from tests.bench import interleaved, onednn


def run(samples_per_s, floor, update_seconds=2.0, iterations=2):
    return {"status": "ok", "samples_per_s": samples_per_s, "floor": {"B": floor},
            "update_seconds": update_seconds, "timed_iterations": iterations}


def test_ratios_are_medians_over_rounds_of_on_against_off():
    runs = {"off": [run(500, 400), run(600, 500), run(400, 300)],
            "on": [run(550, 400, update_seconds=3.0), run(540, 450), run(480, 300, update_seconds=1.0)]}
    s = onednn.summarise(runs)
    assert s["status"] == "ok" and s["rounds"] == 3
    assert s["off_samples_per_s"] == 500 and s["on_samples_per_s"] == 540
    assert s["on_update_seconds_per_iter"] == 1.0                # 1.5, 1.0, 0.5
    assert s["on_over_off"] == pytest.approx(1.1)                # 1.1, 0.9, 1.2
    assert s["on_over_off_per_floor"] == pytest.approx(1.1)      # 1.1, 1.0, 1.2


def test_a_failed_run_drops_its_round():
    runs = {"off": [run(500, 400), {"status": "failed: x"}], "on": [run(600, 400), run(10, 400)]}
    assert onednn.summarise(runs)["rounds"] == 1
    runs["off"][0] = {"status": "failed: y"}
    assert onednn.summarise(runs)["status"].startswith("failed")


def test_each_measurement_runs_under_its_setting_and_the_environment_is_restored(monkeypatch, capsys):
    seen = []

    def fake_measure(arg_file, ranks, iters, extra_args=()):
        seen.append((arg_file, os.environ.get(onednn.ENV_KEY)))
        return run(500, 400)

    monkeypatch.setattr(interleaved, "measure", fake_measure)
    monkeypatch.setenv(onednn.ENV_KEY, "keep")
    onednn.main(["--recipes", "deepmimic,fast", "--rounds", "2"])
    walk, fast = onednn.RECIPES["deepmimic"][0], onednn.RECIPES["fast"][0]
    assert seen == [(walk, "0"), (walk, "1"), (fast, "0"), (fast, "1"),     # round 1: off first
                    (walk, "1"), (walk, "0"), (fast, "1"), (fast, "0")]     # round 2: on first
    assert os.environ[onednn.ENV_KEY] == "keep"
    assert "deepmimic" in capsys.readouterr().out


def test_the_amp_recipes_are_amp_costs_shipped_ones():
    assert onednn.RECIPES["amp_bf16"][1][1] == "data/agents/ct_agent_humanoid_amp_fast_bce_bf16.txt"
    assert onednn.RECIPES["amp"][0] == onednn.RECIPES["amp_bf16"][0] == "args/train_amp_humanoid3d_walk_fast_args.txt"
