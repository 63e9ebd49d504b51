import json
from pathlib import Path

import numpy as np
import pybullet_data
import pytest

from env.anim.character import CharacterDesc
from env.anim.motion import Motion, MotionError
from util import math_util as mu
from util.paths import project_root, resolve_data_path

CLIPS = ["backflip", "cartwheel", "crawl", "dance_a", "dance_b", "getup_facedown", "getup_faceup",
         "jump", "kick", "punch", "roll", "run", "spin", "spinkick", "walk"]


@pytest.fixture(scope="module")
def desc():
    return CharacterDesc.load("data/characters/humanoid3d.txt")


@pytest.fixture(scope="module")
def walk(desc):
    return Motion.load("data/motions/humanoid3d_walk.txt", desc)


def about(axis, angle):
    return mu.quat_from_axis_angle(np.array(axis, dtype=float), angle)


# column offsets in the 43-number pose (checked against the character in test_kin_character)
CHEST, R_KNEE = 7, 19
CHEST_DOF, R_KNEE_DOF = 6, 15


def make_pose(root_pos=(0, 0, 0), root_rot=None, chest=None, knee=0.0):
    pose = np.zeros(43)
    pose[[3, 7, 11, 15, 20, 24, 29, 34, 38]] = 1.0  # w of every quaternion
    pose[0:3] = root_pos
    if root_rot is not None:
        pose[3:7] = root_rot
    if chest is not None:
        pose[CHEST:CHEST + 4] = chest
    pose[R_KNEE] = knee
    return pose


def write_clip(tmp_path, frames, loop="wrap", name="clip.txt"):
    path = tmp_path / name
    rows = [[float(duration)] + list(map(float, pose)) for duration, pose in frames]
    path.write_text(json.dumps({"Loop": loop, "Frames": rows}))
    return path


# A 3-frame clip: durations 0.5, 0.25 (last unused); the root moves and turns about y, the chest
# turns 0.4 about z then 0.2 about its own x, the right knee bends.
CHEST_1 = about([0, 0, 1], 0.4)
CHEST_2 = mu.quat_mul(CHEST_1, about([1, 0, 0], 0.2))
FRAMES = [(0.5, make_pose((0, 0.9, 0), chest=mu.quat_identity(), knee=0.0)),
          (0.25, make_pose((0.1, 0.95, 0.05), about([0, 1, 0], 0.3), CHEST_1, -0.5)),
          (0.0, make_pose((0.3, 0.9, 0.1), about([0, 1, 0], 0.6), CHEST_2, -1.0))]


@pytest.fixture
def clip(tmp_path, desc):
    return Motion.load(write_clip(tmp_path, FRAMES), desc)


def test_duration_and_frame_times(clip):
    assert clip.duration == pytest.approx(0.75)
    np.testing.assert_allclose(clip.frame_times, [0, 0.5, 0.75])
    assert clip.num_frames == 3 and clip.loop == "wrap"


def test_frame_at_keyframe_times_is_the_keyframe(clip, walk):
    np.testing.assert_allclose(clip.calc_frame(0.0), FRAMES[0][1], atol=1e-15)
    np.testing.assert_allclose(clip.calc_frame(0.5), FRAMES[1][1], atol=1e-15)
    for i in range(walk.num_frames - 1):
        np.testing.assert_allclose(walk.calc_frame(walk.frame_times[i]), walk.frames[i], atol=1e-12)


def test_midpoints_by_hand(clip):
    mid = clip.calc_frame(0.25)
    np.testing.assert_allclose(mid[0:3], [0.05, 0.925, 0.025])
    np.testing.assert_allclose(mid[3:7], about([0, 1, 0], 0.15), atol=1e-15)
    np.testing.assert_allclose(mid[CHEST:CHEST + 4], about([0, 0, 1], 0.2), atol=1e-15)
    assert mid[R_KNEE] == pytest.approx(-0.25)
    mid = clip.calc_frame(0.625)
    np.testing.assert_allclose(mid[3:7], about([0, 1, 0], 0.45), atol=1e-15)
    np.testing.assert_allclose(mid[CHEST:CHEST + 4], mu.quat_mul(CHEST_1, about([1, 0, 0], 0.1)), atol=1e-15)
    assert mid[R_KNEE] == pytest.approx(-0.75)


def test_interpolation_matches_slerp_on_a_real_clip(walk):
    i, phase = 7, 0.3
    frame = walk.calc_frame(walk.frame_times[i] + phase * walk.frame_durations[i])
    f0, f1 = walk.frames[i], walk.frames[i + 1]
    for start in (3, 7, 11, 15, 20, 24, 29, 34, 38):
        expected = mu.quat_slerp(f0[start:start + 4], f1[start:start + 4], phase)
        np.testing.assert_allclose(frame[start:start + 4], expected, atol=1e-12)
    for col in (0, 1, 2, 19, 28, 33, 42):
        assert frame[col] == pytest.approx((1 - phase) * f0[col] + phase * f1[col])


def test_slerp_takes_the_short_path_and_quats_are_normalised(tmp_path, desc):
    frames = [(0.5, make_pose(chest=[2.0, 0, 0, 0])), (0.5, make_pose(chest=-CHEST_1))]
    clip = Motion.load(write_clip(tmp_path, frames, loop="none"), desc)
    np.testing.assert_allclose(clip.frames[0, CHEST:CHEST + 4], [1, 0, 0, 0])
    mid = clip.calc_frame(0.25)[CHEST:CHEST + 4]
    assert mu.quat_diff_angle(mid, about([0, 0, 1], 0.2)) < 1e-12
    np.testing.assert_allclose(clip.calc_vel(0.0)[CHEST_DOF:CHEST_DOF + 3], [0, 0, 0.8], atol=1e-12)


def test_velocities_by_hand(clip):
    v0 = np.zeros(34)
    v0[0:3] = [0.2, 0.1, 0.1]            # (0.1, 0.05, 0.05) / 0.5
    v0[3:6] = [0, 0.6, 0]                # 0.3 rad about y / 0.5
    v0[CHEST_DOF:CHEST_DOF + 3] = [0, 0, 0.8]
    v0[R_KNEE_DOF] = -1.0
    v1 = np.zeros(34)
    v1[0:3] = [0.8, -0.2, 0.2]           # (0.2, -0.05, 0.05) / 0.25
    v1[3:6] = [0, 1.2, 0]
    v1[CHEST_DOF:CHEST_DOF + 3] = [0.8, 0, 0]  # 0.2 about the chest's own x / 0.25
    v1[R_KNEE_DOF] = -2.0
    np.testing.assert_allclose(clip.calc_vel(0.0), v0, atol=1e-12)
    np.testing.assert_allclose(clip.calc_vel(0.5), v1, atol=1e-12)
    np.testing.assert_allclose(clip.calc_vel(0.25), 0.5 * (v0 + v1), atol=1e-12)  # interpolated
    np.testing.assert_allclose(clip.calc_vel(0.7), v1, atol=1e-12)  # last keyframe copies the one before
    np.testing.assert_allclose(clip.vel_frames[2], v1, atol=1e-12)


def test_keyframe_velocity_is_the_rate_of_change_of_the_pose(walk):
    """Within an interval slerp turns at a constant rate, so a numerical derivative just after a
    keyframe recovers its finite-difference velocity: root world, joints local."""
    h = 1e-7
    for i in (0, 11, 25):
        t = walk.frame_times[i]
        p0, p1 = walk.calc_frame(t), walk.calc_frame(t + h)
        vel = walk.calc_vel(t)
        np.testing.assert_allclose((p1[0:3] - p0[0:3]) / h, vel[0:3], atol=1e-5)
        np.testing.assert_allclose(mu.quat_ang_vel(p0[3:7], p1[3:7], h), vel[3:6], atol=1e-5)
        np.testing.assert_allclose(mu.quat_ang_vel_local(p0[CHEST:CHEST + 4], p1[CHEST:CHEST + 4], h),
                                   vel[CHEST_DOF:CHEST_DOF + 3], atol=1e-5)
        assert (p1[R_KNEE] - p0[R_KNEE]) / h == pytest.approx(vel[R_KNEE_DOF], abs=1e-5)


def test_wrap_adds_the_root_offset_per_cycle(clip, walk):
    np.testing.assert_allclose(clip.cycle_root_offset, [0.3, 0, 0.1])
    base = clip.calc_frame(0.25)
    for k in (-2, -1, 1, 3):
        shifted = clip.calc_frame(0.25 + k * 0.75)
        np.testing.assert_allclose(shifted[0:3], base[0:3] + k * np.array([0.3, 0, 0.1]), atol=1e-12)
        np.testing.assert_allclose(shifted[3:], base[3:], atol=1e-12)
        np.testing.assert_allclose(clip.calc_vel(0.25 + k * 0.75), clip.calc_vel(0.25), atol=1e-12)
    expected = walk.frames[-1, :3] - walk.frames[0, :3]
    expected[1] = 0.0
    np.testing.assert_allclose(walk.cycle_root_offset, expected)
    assert walk.calc_cycle_count(2.5 * walk.duration) == 2
    assert walk.calc_cycle_count(-0.5 * walk.duration) == -1


def test_wrap_is_continuous_when_the_clip_closes(tmp_path, desc):
    """A clip whose last frame is its first moved by the root offset plays without a jump."""
    first = FRAMES[0][1]
    last = first.copy()
    last[0] += 0.4
    frames = [FRAMES[0], FRAMES[1], (0.25, FRAMES[2][1]), (0.0, last)]
    clip = Motion.load(write_clip(tmp_path, frames), desc)
    eps = 1e-9
    for k in range(3):
        end = (k + 1) * clip.duration
        np.testing.assert_allclose(clip.calc_frame(end - eps), clip.calc_frame(end + eps), atol=1e-7)
    np.testing.assert_allclose(clip.calc_frame(clip.duration)[0:3], last[0:3], atol=1e-12)


def test_walk_root_crosses_the_wrap_without_a_jump(walk):
    eps = 1e-9
    for k in range(3):
        end = (k + 1) * walk.duration
        before, after = walk.calc_frame(end - eps), walk.calc_frame(end + eps)
        np.testing.assert_allclose(before[[0, 2]], after[[0, 2]], atol=1e-6)


def test_none_clamps(tmp_path, desc):
    clip = Motion.load(write_clip(tmp_path, FRAMES, loop="none"), desc)
    np.testing.assert_allclose(clip.calc_frame(-1.0), FRAMES[0][1], atol=1e-15)
    np.testing.assert_allclose(clip.calc_frame(0.75), FRAMES[2][1], atol=1e-15)
    np.testing.assert_allclose(clip.calc_frame(7.0), FRAMES[2][1], atol=1e-15)
    np.testing.assert_allclose(clip.calc_vel(7.0), clip.vel_frames[1], atol=1e-15)
    assert clip.calc_cycle_count(7.0) == 0


def test_phase(clip):
    assert clip.calc_phase(0.375) == pytest.approx(0.5)
    assert clip.calc_phase(0.375 + 0.75 * 4) == pytest.approx(0.5)
    assert clip.calc_phase(-0.375) == pytest.approx(0.5)
    assert clip.calc_phase(0.75) == pytest.approx(0.0)
    assert 0.0 <= clip.calc_phase(-1e-18) < 1.0


@pytest.mark.parametrize("name", CLIPS)
def test_every_shipped_clip_loads(desc, name):
    motion = Motion.load(f"data/motions/humanoid3d_{name}.txt", desc)
    assert motion.frames.shape == (motion.num_frames, 43)
    assert motion.vel_frames.shape == (motion.num_frames, 34)
    assert motion.duration == pytest.approx(motion.frame_durations[:-1].sum())
    assert np.all(np.isfinite(motion.vel_frames))
    assert motion.calc_frame(0.37 * motion.duration).shape == (43,)


@pytest.mark.parametrize("mutate, message", [
    (lambda d: d["Frames"][2].pop(), "frame 2 has 43 numbers, expected 44"),
    (lambda d: d["Frames"][1].append(0.0), "frame 1 has 45 numbers, expected 44"),
    (lambda d: d.update(Loop="mirror"), "unknown Loop value 'mirror'"),
    (lambda d: d["Frames"][1].__setitem__(0, 0.0), "frame 1 has duration 0.0"),
    (lambda d: d["Frames"][0].__setitem__(0, -0.1), "frame 0 has duration -0.1"),
    (lambda d: d["Frames"][1].__setitem__(5, "x"), "frame 1 holds a value that is not a number"),
    (lambda d: d["Frames"][1].__setitem__(slice(8, 12), [0, 0, 0, 0]),
     "frame 1 has a zero quaternion at columns 8-11"),
    (lambda d: d.pop("Frames"), "missing key 'Frames'"),
    (lambda d: d.update(Frames=d["Frames"][:1]), "has 1 frames, expected at least 2"),
])
def test_validation_errors_name_the_file(tmp_path, desc, mutate, message):
    data = json.loads(write_clip(tmp_path, FRAMES).read_text())
    mutate(data)
    path = tmp_path / "broken.txt"
    path.write_text(json.dumps(data))
    with pytest.raises(MotionError) as err:
        Motion.load(path, desc)
    text = str(err.value)
    assert message in text and str(path) in text and "\n" not in text


def test_last_frame_duration_may_be_zero(tmp_path, desc):
    assert Motion.load(write_clip(tmp_path, FRAMES), desc).frame_durations[-1] == 0.0


def test_invalid_json(tmp_path, desc):
    path = tmp_path / "bad.json"
    path.write_text("{not json")
    with pytest.raises(MotionError, match="not valid JSON"):
        Motion.load(path, desc)


def test_paths_resolution(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    wheel = Path(pybullet_data.getDataPath()).resolve()
    clip, character = "data/motions/humanoid3d_walk.txt", "data/characters/humanoid3d.txt"
    assert resolve_data_path(clip) == wheel / clip
    assert resolve_data_path(character) == project_root() / character
    local = tmp_path / "data/characters/humanoid3d.txt"
    local.parent.mkdir(parents=True)
    local.write_text("{}")
    assert resolve_data_path("data/characters/humanoid3d.txt") == local.resolve()
    with pytest.raises(FileNotFoundError, match="data/motions/nope.txt") as err:
        resolve_data_path("data/motions/nope.txt")
    assert str(wheel) in str(err.value) and "\n" not in str(err.value)
    assert (project_root() / "util" / "paths.py").is_file()


def test_calc_frames_is_calc_frame_at_each_time(walk, tmp_path, desc):
    """The batched poses and velocities equal the single-time ones: inside the clip, at keyframes, past the end
    (wrap cycles), before the start; and for a clip that does not loop (clamped)."""
    times = np.array([0.0, 0.013, walk.frame_times[3], 0.5 * walk.duration, walk.duration, 2.7 * walk.duration,
                      -0.4])
    np.testing.assert_array_equal(walk.calc_frames(times), np.stack([walk.calc_frame(t) for t in times]))
    np.testing.assert_array_equal(walk.calc_vels(times), np.stack([walk.calc_vel(t) for t in times]))
    frames = json.loads(Path(walk.path).read_text())
    frames["Loop"] = "none"
    path = tmp_path / "once.txt"
    path.write_text(json.dumps(frames))
    once = Motion.load(path, desc)
    np.testing.assert_array_equal(once.calc_frames(times), np.stack([once.calc_frame(t) for t in times]))
    np.testing.assert_array_equal(once.calc_vels(times), np.stack([once.calc_vel(t) for t in times]))


def gaussian_mean(values, center, sigma, wrap):
    """The smoothing's definition by hand: weights exp(-k^2 / 2 sigma^2) for |k| <= ceil(3 sigma)."""
    n, radius = len(values), int(np.ceil(3 * sigma))
    ks = np.arange(-radius, radius + 1)
    w = np.exp(-0.5 * (ks / sigma) ** 2)
    idx = (center + ks) % n if wrap else np.clip(center + ks, 0, n - 1)
    return float(np.sum(w * values[idx]) / np.sum(w))


@pytest.mark.parametrize("loop", ["wrap", "none"])
def test_vel_smoothing_is_a_gaussian_mean_of_the_finite_differences(tmp_path, desc, loop):
    """A knee that zigzags (frame angles 0, 0.2, 0, 0.2, ...): raw differences flip between +6 and
    -6 rad/s; smoothed, each keyframe's rate is the Gaussian-weighted mean of the differences around
    it (a cycle for a wrap clip, the end differences repeated for a none clip), the last keyframe a
    copy of the one before, and a steady root drift unchanged."""
    n, dt = 12, 1.0 / 30.0
    frames = [(dt, make_pose((0.1 * i, 0.9, 0), knee=0.2 * (i % 2))) for i in range(n)]
    path = write_clip(tmp_path, frames, loop)
    raw, smooth = Motion.load(path, desc), Motion.load(path, desc, vel_smoothing=1.5)
    diffs = raw.vel_frames[:-1, R_KNEE_DOF]
    np.testing.assert_allclose(np.abs(diffs), 6.0, rtol=1e-9)
    for f in range(n - 1):
        assert smooth.vel_frames[f, R_KNEE_DOF] == pytest.approx(gaussian_mean(diffs, f, 1.5, loop == "wrap"), abs=1e-9)
    assert smooth.vel_frames[-1, R_KNEE_DOF] == smooth.vel_frames[-2, R_KNEE_DOF]
    assert np.max(np.abs(smooth.vel_frames[3:-4, R_KNEE_DOF])) < 0.5      # away from a none clip's ends
    np.testing.assert_allclose(smooth.vel_frames[:, 0], 3.0, rtol=1e-9)     # 0.1 m per frame at 30 Hz
    np.testing.assert_array_equal(Motion.load(path, desc, vel_smoothing=0.0).vel_frames, raw.vel_frames)


def test_ref_vel_smoothing_reaches_the_reset():
    """imitate's --ref_vel_smoothing: the clip the scene plays has smoothed velocities, and the
    character reset from it starts with them; a negative value is one line naming the key."""
    from env.deepmimic_env import DeepMimicEnv
    from util.arg_parser import ArgError, load_args
    base = ["--arg_file", "args/train_humanoid3d_kick_args.txt"]
    env = DeepMimicEnv(load_args(base + ["--ref_vel_smoothing", "2"]), seed=3)
    desc = env.char_desc
    expected = Motion.load(env.motion_file, desc, vel_smoothing=2.0)
    np.testing.assert_array_equal(env.motion.vel_frames, expected.vel_frames)
    env.reset()
    _, vel = env.sim_char.get_state()
    ref = expected.calc_vel(env.kin_char.time)
    np.testing.assert_allclose(vel[6:], ref[6:], atol=1e-6)
    with pytest.raises(ArgError, match="--ref_vel_smoothing -1"):
        DeepMimicEnv(load_args(base + ["--ref_vel_smoothing", "-1"]), seed=3)
