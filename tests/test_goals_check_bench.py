"""tests/bench/goals_check.py: its log statistics, per-goal test counts, the goal probe, a curve point
and --no_flat."""
import json
import math

import pytest

from tests.bench.goals_check import goal_counts, log_stats, main


def test_log_stats_read_the_rows_up_to_a_sample_count():
    rows = [{"Samples": 2048 * (i + 1), "InvModel_Goal_Acc": 0.1 * i, "InvModel_Goal_Acc_Balanced": 0.05 * i,
             "Goals_Used": 4 - i % 2} for i in range(6)]
    assert log_stats(rows) == {"inverse_goal_acc_last3": pytest.approx(0.4),
                               "inverse_goal_acc_balanced_last3": pytest.approx(0.2), "goals_used_last": 3}
    assert log_stats(rows, 8192) == {"inverse_goal_acc_last3": pytest.approx(0.2),
                                     "inverse_goal_acc_balanced_last3": pytest.approx(0.1), "goals_used_last": 3}
    first = log_stats(rows, 100)                                         # before the first row: the first
    assert first["inverse_goal_acc_last3"] == 0.0 and first["goals_used_last"] == 4
    older = log_stats([{k: v for k, v in r.items() if k != "InvModel_Goal_Acc_Balanced"} for r in rows])
    assert math.isnan(older["inverse_goal_acc_balanced_last3"])          # a log from before the column


def test_goal_counts_per_goal():
    assert goal_counts([2, 0, 2, 2], 4) == [1, 0, 3, 0]


@pytest.mark.parametrize("no_flat", [True, False])
def test_a_tiny_run_reports_a_curve_point(tmp_path, no_flat):
    out = tmp_path / "check.json"
    main(["--samples", "4096", "--eval_at", "2048", "--episodes", "1", "--output", str(tmp_path / "run"),
          "--json", str(out)] + (["--no_flat"] if no_flat else []))
    result = json.loads(out.read_text())
    goals = result["goals"]
    assert goals["samples"] >= 4096 and sum(goals["test_goal_counts"]) == goals["test_goal_choices"] > 0
    [point] = goals["curve"]
    assert 2048 <= point["samples"] < goals["samples"]
    assert point["test_distinct_goals"] == sum(c > 0 for c in point["test_goal_counts"]) >= 1
    assert set(point) >= {"goals_test_external_return", "inverse_goal_acc_last3", "goals_used_last", "goal_probe"}
    assert 0 <= point["inverse_goal_acc_balanced_last3"] <= 1 and 0 <= goals["inverse_goal_acc_balanced_last3"] <= 1
    probe = goals["goal_probe"]
    assert len(probe["per_goal_inverse_acc"]) == result["num_goals"]
    assert all(0 <= a <= 1 for a in probe["per_goal_inverse_acc"]) and probe["external_return"] >= 0
    assert probe["inverse_acc_mean"] == pytest.approx(sum(probe["per_goal_inverse_acc"]) / result["num_goals"])
    if no_flat:
        assert result["ppo"] is None
    else:
        [flat] = result["ppo"]["curve"]
        assert 2048 <= flat["samples"] < result["ppo"]["samples"] and flat["ppo_test_external_return"] >= 0


def test_the_frozen_stage_takes_its_own_keys_and_reuses_the_first_stage(tmp_path):
    run = tmp_path / "run"
    common = ["--samples", "8192", "--frozen_from", "4096", "--episodes", "1", "--no_flat", "--output", str(run)]
    main(common + ["--frozen_set", "GoalSteps=1", "--json", str(tmp_path / "a.json")])
    assert json.loads((run / "goals" / "agent.txt").read_text())["GoalSteps"] == 5          # the file's
    frozen = json.loads((run / "goals_frozen" / "agent.txt").read_text())
    assert frozen["GoalSteps"] == 1 and frozen["TrainActionPolicy"] is False
    stage1_log = (run / "goals" / "agent0_log.txt").read_text()

    main(common + ["--frozen_set", "GoalSteps=2", "--reuse_stage1", "--json", str(tmp_path / "b.json")])
    assert (run / "goals" / "agent0_log.txt").read_text() == stage1_log                    # not trained again
    assert json.loads((run / "goals_frozen" / "agent.txt").read_text())["GoalSteps"] == 2
    result = json.loads((tmp_path / "b.json").read_text())
    assert result["stage1_reused"] and result["frozen_set"] == ["GoalSteps=2"]
    assert result["goals"]["samples"] >= 8192


def test_frozen_stage_options_need_a_frozen_stage(tmp_path):
    with pytest.raises(SystemExit):
        main(["--frozen_set", "GoalSteps=1", "--output", str(tmp_path / "run"), "--json", str(tmp_path / "c.json")])
    with pytest.raises(SystemExit, match="no first-stage checkpoint"):
        main(["--samples", "4096", "--frozen_from", "2048", "--reuse_stage1", "--no_flat",
              "--output", str(tmp_path / "none"), "--json", str(tmp_path / "d.json")])
