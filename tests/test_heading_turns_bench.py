"""tests/bench/heading_turns.py: the opening turn of a heading episode and its summary."""
import numpy as np
import pytest

from tests.bench.heading_turns import opening_turn_deg, summary


class Scene:
    """A heading scene reduced to what opening_turn_deg reads: the root turned by `root_deg` about
    the vertical axis (pose [x, y, z, qw, qx, qy, qz, ...]) and the target heading."""

    def __init__(self, root_deg, tar_deg):
        half = np.radians(root_deg) / 2
        self.pose = np.array([0.0, 0.9, 0.0, np.cos(half), 0.0, np.sin(half), 0.0, 1.0])
        self.tar_heading = np.radians(tar_deg)

    def sim_pose_vel(self):
        return self.pose, np.zeros_like(self.pose)


@pytest.mark.parametrize("root_deg, tar_deg, turn", [
    (100, 0, -100), (0, 100, 100), (-170, 170, -20), (170, -170, 20), (0, 180, 180), (90, -90, 180), (30, 30, 0)])
def test_opening_turn_is_target_minus_root_heading_wrapped(root_deg, tar_deg, turn):
    assert opening_turn_deg(Scene(root_deg, tar_deg)) == pytest.approx(turn, abs=1e-9)


def test_summary_splits_at_a_quarter_turn():
    rows = [{"opening_turn_deg": t, "fell": f, "meets_criterion": m}
            for t, f, m in [(-150, True, False), (95, False, True), (90, False, False), (-10, True, False), (0, False, True)]]
    assert summary(rows) == {"all": {"episodes": 5, "falls": 2, "meeting_criterion": 2},
                             "opening_turn_above_90": {"episodes": 2, "falls": 1, "meeting_criterion": 1},
                             "opening_turn_up_to_90": {"episodes": 3, "falls": 1, "meeting_criterion": 1}}


def test_summary_counts_falls_after_a_non_looping_clip_ended():
    rows = [{"opening_turn_deg": 0, "fell": f, "meets_criterion": not f, "length_s": n, "clip_time_left_s": left}
            for f, n, left in [(True, 3.0, 2.0), (True, 1.0, 2.5), (False, 20.0, 4.0), (True, 2.0, None), (False, 20.0, None)]]
    result = summary(rows)
    assert result["looping_clip"] == {"episodes": 2, "falls": 1, "meeting_criterion": 1}
    assert result["non_looping_clip"] == {"episodes": 3, "falls": 2, "meeting_criterion": 1,
                                          "falls_after_the_clip_ended": 1}


def test_each_episode_notes_the_turn_it_opens_with(tmp_path):
    """An untrained heading policy (it falls within seconds): one row per episode, the first with
    the opening turn of the world's first reset, the second with another episode's."""
    from app.build import load_world
    from tests.bench.heading_turns import DEFAULT_ARGS, run

    argv = ["--arg_file", DEFAULT_ARGS, "--rand_seed", "3", "--model_files", "none",
            "--output_path", str(tmp_path), "--int_output_path", ""]
    rows = run(argv, 2)
    world = load_world(argv, enable_draw=False)
    world.set_enable_training(False)
    world.reset()
    assert [r["fell"] for r in rows] == [True, True]
    assert rows[0]["opening_turn_deg"] == pytest.approx(opening_turn_deg(world.env), abs=1e-9)
    assert rows[0]["target_speed"] == pytest.approx(world.env.tar_speed)
    assert rows[0]["clip"] == world.env.motion.path.name and rows[0]["clip_time_left_s"] is None   # walk, run: loop
    assert rows[1]["opening_turn_deg"] != pytest.approx(rows[0]["opening_turn_deg"], abs=1e-3)


def test_a_non_looping_clip_notes_its_time_left(tmp_path):
    """Resets from a clip that does not loop (the kick): the row names it and the time its reference
    had left, the clip's duration minus the reset's clip time."""
    from app.build import load_world
    from tests.bench.heading_turns import DEFAULT_ARGS, run

    kick_only = tmp_path / "kick_only.txt"
    kick_only.write_text('{"Motions": [{"Weight": 1, "File": "data/motions/humanoid3d_kick.txt"}]}')
    argv = ["--arg_file", DEFAULT_ARGS, "--rand_seed", "5", "--model_files", "none", "--motion_file", str(kick_only),
            "--output_path", str(tmp_path), "--int_output_path", ""]
    rows = run(argv, 1)
    world = load_world(argv, enable_draw=False)
    world.set_enable_training(False)
    world.reset()
    env = world.env
    assert env.motion.loop == "none" and rows[0]["clip"] == "humanoid3d_kick.txt"
    assert 0 < rows[0]["clip_time_left_s"] == pytest.approx(env.motion.duration - env.kin_char.time, abs=1e-9)
