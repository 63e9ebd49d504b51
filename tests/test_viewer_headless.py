"""DeepMimic.py headless: recordings (size, frame count), PNG frames, screenshot, evaluation,
options."""
import json

import imageio.v3 as iio
import numpy as np
import pytest

from app.build import load_world
from app.viewer import Viewer
import DeepMimic
from env.env import FRAME_TIME
from util.arg_parser import ArgError, load_args
from util.cli import run_main

KIN_CHAR = ["--arg_file", "args/kin_char_args.txt"]
WALK_POLICY = ["--arg_file", "args/run_humanoid3d_walk_wheel_args.txt"]
SIZE = (DeepMimic.HEIGHT, DeepMimic.WIDTH, 3)


def options(*argv):
    return DeepMimic.ViewerOptions.parse(load_args(list(argv)))


def test_record_video_and_screenshot(tmp_path):
    out, shot = tmp_path / "clip.mp4", tmp_path / "last.png"
    DeepMimic.main(KIN_CHAR + ["--headless", "--record", str(out), "--record_seconds", "0.5",
                               "--screenshot", str(shot), "--msaa", "0"])
    frames = iio.imread(out)
    assert frames.shape == (30,) + SIZE
    last = iio.imread(shot)
    assert last.shape == SIZE
    assert np.abs(frames[-1].astype(float) - last).mean() < 6      # lossy video of the same frame
    assert np.abs(frames[0].astype(float) - last).mean() > 0.5     # the character moved
    assert sorted(p.name for p in tmp_path.iterdir()) == ["clip.mp4", "last.png"]


def test_record_png_folder_at_half_speed(tmp_path):
    viewer = Viewer(lambda: load_world(KIN_CHAR), DeepMimic.WIDTH, DeepMimic.HEIGHT)
    for _ in range(10):
        viewer.keyboard(",")                       # 0.5x
    DeepMimic.run_headless(viewer, options("--headless", "--record", str(tmp_path / "frames"),
                                           "--record_seconds", "0.1", "--msaa", "0"))
    pngs = sorted((tmp_path / "frames").glob("*"))
    assert [p.name for p in pngs] == [f"frame_{i:06d}.png" for i in range(6)]
    assert iio.imread(pngs[0]).shape == SIZE
    assert viewer.world.env.get_time() == pytest.approx(3 * FRAME_TIME)   # 6 frames at half speed


def test_screenshot_alone_shows_the_start(tmp_path):
    viewer = Viewer(lambda: load_world(KIN_CHAR), DeepMimic.WIDTH, DeepMimic.HEIGHT)
    DeepMimic.run_headless(viewer, options("--headless", "--screenshot", str(tmp_path / "s.png")))
    assert viewer.world.env.get_time() == 0.0
    assert iio.imread(tmp_path / "s.png").shape == SIZE


def test_evaluation_prints_and_writes_stats(tmp_path, capsys):
    stats = tmp_path / "stats.json"
    DeepMimic.main(WALK_POLICY + ["--time_end_lim_min", "1", "--time_end_lim_max", "1",
                                  "--headless", "--episodes", "2", "--stats", str(stats)])
    printed = [line for line in capsys.readouterr().out.splitlines() if line.startswith("episode")]
    assert len(printed) == 2 and "mean reward" in printed[0]
    data = json.loads(stats.read_text())
    assert [e["length_s"] for e in data["episodes"]] == pytest.approx([1.0, 1.0], abs=0.02)
    assert data["summary"]["episodes"] == 2 and 0 < data["summary"]["mean_reward"] <= 1


@pytest.mark.slow
def test_walk_policy_video_5s(tmp_path):
    out = tmp_path / "walk.mp4"
    DeepMimic.main(WALK_POLICY + ["--headless", "--record", str(out), "--record_seconds", "5"])
    assert iio.imread(out).shape == (300,) + SIZE


@pytest.mark.parametrize("argv, message", [
    (["--record", "x.mp4"], "need --headless"),
    (["--headless"], "needs --record"),
    (["--headless", "--record", "x.mp4", "--record_seconds", "0"], "record_seconds"),
    (["--headless", "--screenshot", "a.png", "--cam_track_mode", "orbit"], "cam_track_mode"),
])
def test_bad_options_name_the_key(argv, message):
    with pytest.raises(ArgError, match=message):
        options(*argv)


def test_flags_alone_mean_true():
    parsed = options("--headless", "--screenshot", "a.png", "--cam_track_mode", "still")
    assert parsed.headless and parsed.record_seconds == 0 and parsed.track_mode == "still"
    assert options("--headless", "--record", "a.mp4").record_seconds == DeepMimic.DEFAULT_RECORD_SECONDS
    with pytest.raises(ArgError, match="need --headless"):
        options("--headless", "false", "--record", "a.mp4")


@pytest.mark.parametrize("argv, message", [
    (["--headless", "--screenshot", "x.png"], "missing required argument --scene"),
    (KIN_CHAR + ["--headless", "--episodes", "1"], "needs an agent"),
    (KIN_CHAR, "no display found"),
])
def test_main_fails_with_one_line(argv, message, monkeypatch, capsys):
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    assert run_main(lambda: DeepMimic.main(argv), "DeepMimic.py") == 2
    errors = capsys.readouterr().err.splitlines()
    assert len(errors) == 1 and errors[0].startswith("DeepMimic.py: error: ") and message in errors[0]
