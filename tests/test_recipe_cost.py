"""tests/bench/recipe_cost.py without training: its ratios from hand-made measurements, and the
recipes' files."""
import json

import pytest

from tests.bench import recipe_cost
from util.arg_parser import load_args
from util.paths import project_root, resolve_data_path


def run(samples_per_s, floor, update_seconds=2.0, iterations=2):
    return {"status": "ok", "samples_per_s": samples_per_s, "floor": {"B": floor},
            "update_seconds": update_seconds, "timed_iterations": iterations}


def test_ratios_are_medians_over_rounds_against_the_first_recipe():
    runs = {
        "deepmimic": [run(1000, 500), run(800, 400), run(900, 600)],
        "fast": [run(700, 500, update_seconds=3.0), run(640, 400, update_seconds=4.0), run(540, 300, update_seconds=5.0)],
    }
    summary = recipe_cost.summarise(runs, "deepmimic")
    fast = summary["fast"]
    assert fast["status"] == "ok" and fast["rounds"] == 3
    assert fast["samples_per_s"] == 640
    assert fast["update_seconds_per_iter"] == 2.0            # 1.5, 2.0, 2.5
    assert fast["over_deepmimic"] == pytest.approx(0.7)      # 0.7, 0.8, 0.6
    assert fast["over_deepmimic_per_floor"] == pytest.approx(0.8)   # 0.7, 0.8, 1.2
    assert summary["deepmimic"]["over_deepmimic"] == 1.0


def test_a_failed_run_drops_its_round_and_only_its_round():
    runs = {"deepmimic": [run(1000, 500), {"status": "failed: x"}], "fast512": [run(850, 500), run(10, 500)]}
    summary = recipe_cost.summarise(runs, "deepmimic")
    assert summary["fast512"]["rounds"] == 1 and summary["fast512"]["over_deepmimic"] == pytest.approx(0.85)
    runs["deepmimic"][0] = {"status": "failed: y"}
    assert recipe_cost.summarise(runs, "deepmimic")["fast512"]["status"].startswith("failed")


@pytest.mark.parametrize("name", list(recipe_cost.RECIPES))
def test_each_recipe_names_files_that_exist(name):
    arg_file, extra = recipe_cost.RECIPES[name]
    args = load_args(["--arg_file", str(project_root() / arg_file), *extra])
    for agent_file in args.parse_strings("agent_files"):
        assert resolve_data_path(agent_file).is_file()
    if extra:
        assert args.parse_strings("agent_files") == [extra[1]]


def test_an_unknown_recipe_is_one_line(capsys):
    with pytest.raises(SystemExit):
        recipe_cost.main(["--recipes", "deepmimic,fast1024"])
    assert "unknown recipe 'fast1024'" in capsys.readouterr().err


def test_the_three_epoch_recipe_differs_from_the_half_width_one_in_its_epochs_only():
    def agent(name):
        return json.loads(resolve_data_path(recipe_cost.RECIPES[name][1][1]).read_text())
    half_width, three_epochs = agent("fast512"), agent("fast512e3")
    assert {k: v for k, v in three_epochs.items() if half_width[k] != v} == {"Epochs": 3}
    assert set(three_epochs) == set(half_width) and half_width["Epochs"] == 5
