"""tests/bench/start_errors.py and the imitate scene's fixed_start_time: episodes from chosen reset
times, their lengths against the clip's, the JSON, and its one-line errors."""
import json

import numpy as np
import pytest

from env.deepmimic_env import DeepMimicEnv
from env.env import Mode
from env.tracking_error import body_pos_distances
from tests.bench.start_errors import best_rotation, body_shape_err, main, phase_rows, start_times, turn_of
from util.arg_parser import load_args
from util.math_util import quat_from_axis_angle, quat_to_matrix

PUNCH_ARGS = "args/run_humanoid3d_punch_args.txt"     # a non-looping clip (2.13 s) and the skill trained here
UPDATE = 1.0 / 300.0                                    # one env update (30 Hz decisions, 10 updates a frame)


@pytest.mark.parametrize("mode, fail_weight", [(Mode.TEST, "0"), (Mode.TRAIN, "1")])
def test_fixed_start_time_replaces_the_draw(mode, fail_weight):
    """Set, every reset starts the reference (and the controller's phase) at that time, whatever the
    mode and the fall-weighted starts; cleared, the draw is back."""
    env = DeepMimicEnv(load_args(["--arg_file", "args/train_humanoid3d_kick_args.txt",
                                  "--reset_fail_weight", fail_weight]), seed=2)
    env.set_mode(mode)
    env.fixed_start_time = 0.72
    for _ in range(3):
        env.reset()
        assert env.kin_char.time == 0.72
    env.fixed_start_time = None
    drawn = set()
    for _ in range(3):
        env.reset()
        drawn.add(env.kin_char.time)
    assert len(drawn) == 3 and 0.72 not in drawn


def test_body_shape_err_takes_out_the_whole_body_orientation():
    """A pose turned as a whole about its root (and moved): body_pos_err large, body_shape_err 0;
    a pose bent at one body, or mirrored (not a rotation): body_shape_err > 0."""
    rng = np.random.default_rng(3)
    ref = rng.normal(size=(15, 3)) * 0.3
    turned = (ref - ref[0]) @ quat_to_matrix(quat_from_axis_angle([0.2, 1.0, 0.1], 0.6)).T + np.array([2.0, 0.1, -1.0])
    assert np.mean(body_pos_distances(turned, ref)) > 0.1
    assert body_shape_err(turned, ref) == pytest.approx(0.0, abs=1e-9)
    bent = ref.copy()
    bent[7] += [0.0, 0.2, 0.0]
    assert 0.0 < body_shape_err(bent, ref) < 0.2
    mirrored = ref * np.array([1.0, 1.0, -1.0])
    assert body_shape_err(mirrored, ref) > 0.05


def test_start_times():
    assert start_times(2.0, starts=4) == [0.0, 0.5, 1.0, 1.5]
    assert start_times(2.0, times=[0.3, 2.0]) == [0.3, 2.0]
    with pytest.raises(SystemExit, match="--times 2.5: outside the clip"):
        start_times(2.0, times=[0.3, 2.5])


def test_punch_episodes_end_with_the_clip(tmp_path):
    """The punch played by its shipped files from 0.5 s and 1.6 s: no fall, each episode ends where
    the clip does (length = duration - start, to one env update), the JSON holds both rows with the
    reference's root spin at each start."""
    out = tmp_path / "starts.json"
    main(["--arg_file", PUNCH_ARGS, "--times", "0.5", "1.6", "--episode_time", "5", "--json", str(out)])
    data = json.loads(out.read_text())
    duration = data["clip_duration_s"]
    assert duration == pytest.approx(2.1333, abs=1e-3)
    assert [r["start_s"] for r in data["starts"]] == [0.5, 1.6]
    env = DeepMimicEnv(load_args(["--arg_file", PUNCH_ARGS]), seed=0)
    for r in data["starts"]:
        assert r["clip_ended"] and not r["fell"]
        assert r["length_s"] == pytest.approx(duration - r["start_s"], abs=UPDATE)
        assert 0.0 < r["body_pos_err"] < 0.2
        assert 0.0 < r["body_shape_err"] < r["body_pos_err"]
        assert r["ref_root_ang_speed"] == pytest.approx(np.linalg.norm(env.motion.calc_vel(r["start_s"])[3:6]))


def test_a_scene_without_a_clip_is_one_line():
    with pytest.raises(SystemExit, match="no reference clip"):
        main(["--arg_file", "args/train_goals_goals_point_args.txt", "--starts", "1", "--model_files", "none"])


def test_episodes_are_cut_at_episode_time(tmp_path):
    """--episode_time cuts an episode before its clip ends: 0.5 s from a start 1.6 s before the end."""
    out = tmp_path / "cut.json"
    main(["--arg_file", PUNCH_ARGS, "--times", "0.2", "--episode_time", "0.5", "--json", str(out)])
    [r] = json.loads(out.read_text())["starts"]
    assert r["length_s"] == pytest.approx(0.5, abs=UPDATE) and not r["clip_ended"] and not r["fell"]


def test_turn_of_a_pose_turned_about_the_vertical_and_tilted():
    """The best rotation of a pose turned by 0.3 rad about the vertical (y): angle and yaw 0.3, the
    sign DeepMimic's heading's (x towards -z: positive); tilted about x instead: angle 0.3, yaw 0."""
    rng = np.random.default_rng(5)
    sim = rng.normal(size=(15, 3)) * 0.3
    for axis, yaw in (([0.0, 1.0, 0.0], 0.3), ([0.0, -1.0, 0.0], -0.3), ([1.0, 0.0, 0.0], 0.0)):
        ref = (sim - sim[0]) @ quat_to_matrix(quat_from_axis_angle(axis, 0.3)).T
        angle, got_yaw = turn_of(best_rotation(sim, ref))
        assert angle == pytest.approx(0.3, abs=1e-9) and got_yaw == pytest.approx(yaw, abs=1e-9)
    assert quat_to_matrix(quat_from_axis_angle([0.0, 1.0, 0.0], 0.3)) @ [1.0, 0.0, 0.0] == pytest.approx(
        [np.cos(0.3), 0.0, -np.sin(0.3)])


def test_phase_rows_group_decisions_by_clip_time():
    rows = phase_rows([(0.1, 0.02, 0.01, 0.1, 0.05), (0.3, 0.04, 0.03, 0.2, -0.05), (2.0, 0.06, 0.05, 0.3, 0.1)],
                      duration=2.0, bins=4)
    assert [r["decisions"] for r in rows] == [2, 0, 0, 1]      # t = duration (a clip's end) in the last part
    assert rows[0]["body_pos_err"] == pytest.approx(0.03) and rows[0]["turn_yaw"] == pytest.approx(0.0)
    assert rows[1]["body_pos_err"] is None and rows[3]["clip_from_s"] == 1.5 and rows[3]["turn_angle"] == 0.3


def test_phase_bins_hold_every_decision_of_the_episodes(tmp_path):
    """The punch from 0.5 s and 1.6 s with --phase_bins 8: the parts cover the clip, hold the
    episodes' decisions (none before the first start) and their body_pos_err, which the episodes'
    own means give back weighted by the decisions."""
    out = tmp_path / "phases.json"
    main(["--arg_file", PUNCH_ARGS, "--times", "0.5", "1.6", "--episode_time", "5", "--phase_bins", "8",
          "--json", str(out)])
    data = json.loads(out.read_text())
    phases, starts = data["phase_bins"], data["starts"]
    assert [p["clip_from_s"] for p in phases] == pytest.approx([k * data["clip_duration_s"] / 8 for k in range(8)])
    assert phases[0]["decisions"] == 0
    counts = [round(r["length_s"] * 30) for r in starts]
    assert sum(p["decisions"] for p in phases) == pytest.approx(sum(counts), abs=2)
    weighted = sum(p["body_pos_err"] * p["decisions"] for p in phases if p["decisions"]) / sum(p["decisions"] for p in phases)
    episodes = sum(r["body_pos_err"] * n for r, n in zip(starts, counts)) / sum(counts)
    assert weighted == pytest.approx(episodes, rel=0.02)
    assert all(0.0 <= p["turn_angle"] < 0.5 for p in phases if p["decisions"])


def test_negative_phase_bins_is_an_error():
    with pytest.raises(SystemExit):
        main(["--arg_file", PUNCH_ARGS, "--times", "0.5", "--phase_bins", "-1"])


def test_phase_bins_wrap_a_looping_clip(tmp_path):
    """The walk (a looping clip) from 0.2 s before its end for 0.5 s: the decisions after the seam
    are in the clip's first part, the others in its last."""
    walk_args = "args/run_humanoid3d_walk_args.txt"
    env = DeepMimicEnv(load_args(["--arg_file", walk_args]), seed=0)
    duration = env.motion.duration
    env.shutdown()
    out = tmp_path / "walk.json"
    main(["--arg_file", walk_args, "--times", str(duration - 0.2), "--episode_time", "0.5", "--phase_bins", "4",
          "--json", str(out)])
    counts = [p["decisions"] for p in json.loads(out.read_text())["phase_bins"]]
    assert counts[1] == counts[2] == 0 and counts[0] >= 7 and counts[3] >= 5, counts
