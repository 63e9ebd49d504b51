"""tests/bench/push_recovery.py: the push's impulse, its directions, the bisection, repeatable
trials, a whole (coarse) run and its one-line errors."""
import json
import math
import subprocess
import sys

import numpy as np
import pytest

from tests.bench.push_recovery import (DIRECTIONS, PELVIS, Push, PushBench, PushRecorder, bisect_threshold,
                                       main, push_direction)
from util import math_util
from util.arg_parser import ArgError
from util.paths import project_root

WALK_ARGS = "args/run_humanoid3d_walk_args.txt"     # the walk this project trained
GRAVITY = -9.8


@pytest.fixture(scope="module")
def world():
    from app.build import load_world
    return load_world(["--arg_file", WALK_ARGS, "--rand_seed", "1"], enable_draw=False)


def yaw(heading):
    return math_util.quat_from_axis_angle(np.array([0.0, 1.0, 0.0]), heading)


# ---- the bisection, on monotone survive functions ----------------------------------------------

@pytest.mark.parametrize("threshold, max_force, resolution", [
    (243.0, 1500, 10), (240.0, 1500, 10), (5.0, 1500, 10), (1499.0, 1500, 10), (1500.0, 1500, 10),
    (2000.0, 1500, 10), (777.7, 1000, 300), (0.0, 1000, 100)])
def test_bisection_brackets_the_threshold_on_the_grid(threshold, max_force, resolution):
    """survives(f) = f <= threshold: the largest grid force at or under the threshold survives and
    the next grid force (capped at max_force) falls, within 1 + ceil(log2(max / resolution)) trials."""
    tried = []

    def survives(force):
        tried.append(force)
        return force <= threshold

    survived, fell = bisect_threshold(survives, max_force, resolution)
    assert len(tried) <= 1 + math.ceil(math.log2(max_force / resolution))
    assert all(f == max_force or f % resolution == 0 for f in tried)
    if threshold >= max_force:
        assert (survived, fell) == (max_force, None) and tried == [max_force]
    else:
        assert survived <= threshold < fell
        assert fell == min(survived + resolution, max_force)
        assert survived == resolution * math.floor(threshold / resolution)


# ---- directions --------------------------------------------------------------------------------

@pytest.mark.parametrize("heading", [0.0, 0.7, -2.0, 3.1])
def test_forward_is_the_roots_facing_on_the_ground(heading):
    """A root turned by `heading` about y and tilted (pitch, roll): forward is its x axis projected
    on the ground plane, normalised; backward the opposite; both horizontal."""
    tilt = math_util.quat_mul(math_util.quat_from_axis_angle(np.array([0.0, 0.0, 1.0]), 0.4),
                              math_util.quat_from_axis_angle(np.array([1.0, 0.0, 0.0]), -0.3))
    root = math_util.quat_mul(yaw(heading), tilt)
    facing = math_util.quat_rotate(root, np.array([1.0, 0.0, 0.0]))
    facing[1] = 0.0
    h = float(math_util.quat_heading(root))
    assert np.allclose(push_direction(h, "forward"), facing / np.linalg.norm(facing), atol=1e-12)
    assert np.allclose(push_direction(h, "backward"), -facing / np.linalg.norm(facing), atol=1e-12)


@pytest.mark.parametrize("heading", [0.0, 1.2, -2.5])
def test_sideways_is_towards_the_characters_right(world, heading):
    """Sideways points from the simulated left hip to the right hip (humanoid3d's joints) of a
    character whose root is turned by `heading`; sideways_left the other way; both at right
    angles to forward."""
    sim_char = world.env.sim_char
    pose, vel = sim_char.get_state()
    pose[3:7] = yaw(heading)
    sim_char.set_state(pose, vel)
    joints = sim_char.get_body_states().joint_pos
    names = [j.name for j in world.env.char_desc.joints]
    right = joints[names.index("right_hip")] - joints[names.index("left_hip")]
    h = float(math_util.quat_heading(pose[3:7]))
    assert np.allclose(push_direction(h, "sideways"), right / np.linalg.norm(right), atol=1e-6)
    assert np.allclose(push_direction(h, "sideways_left"), -right / np.linalg.norm(right), atol=1e-6)
    assert abs(push_direction(h, "sideways") @ push_direction(h, "forward")) < 1e-12
    assert set(DIRECTIONS) == {"forward", "backward", "sideways", "sideways_left"}


# ---- the push reaches the pelvis as newtons on the 45 kg character -----------------------------

@pytest.mark.parametrize("direction", ["forward", "sideways"])
def test_the_push_changes_the_com_velocity_by_force_times_time_over_mass(world, direction):
    """The character 2 m up in the air (no contact: only gravity and the push act from outside; the
    PD torques are internal), pushed with 450 N for 0.2 s through the recorder's hook: the centre of
    mass (character units, m/s) gains 450 * 0.2 / 45 = 2 m/s along the push's direction, plus
    g * 0.2 downwards. Forces scaled twice by world_scale (4) or not at all, or held for one update
    instead of each, would give 8, 0.5 or 0.017 m/s."""
    from app.rollout import WorldEvent, run_updates

    env = world.env
    world.set_enable_training(False)
    world.reset()
    pose, vel = env.sim_char.get_state()
    pose[1] += 2.0
    env.sim_char.set_state(pose, vel)
    dt = env.update_timestep
    force, start, updates = 450.0, 30, round(0.2 / dt)
    recorder = PushRecorder(world, Push(force=force, direction=direction, start=start, updates=updates), window=1.0)

    def com_vel():
        return env.sim_char.calc_com_vel(env.sim_char.get_body_states())

    assert run_updates(env, dt, start, recorder) == WorldEvent.NONE
    before = com_vel()
    heading_at_push = float(math_util.quat_heading(env.sim_char.get_state()[0][3:7]))
    assert run_updates(env, dt, updates, recorder) == WorldEvent.NONE
    gained = com_vel() - before
    mass = env.sim_char.total_mass
    assert mass == pytest.approx(45.0)
    expected = force * updates * dt / mass * push_direction(recorder.heading, direction)
    expected[1] += GRAVITY * updates * dt
    assert np.allclose(gained, expected, atol=0.01 * np.linalg.norm(expected))
    assert env.sim_char.calc_aabb()[0][1] > 0.5         # still in the air: no contact pushed back
    assert recorder.heading == pytest.approx(heading_at_push, abs=1e-9)     # the root's, as the push starts


def test_the_push_is_at_the_pelvis_centre_for_push_time(world):
    """The recorder calls the scene's apply_force at the pelvis's centre once before each of the
    push's updates, none before or after."""
    env = world.env
    calls = []
    original = env.apply_force
    env.apply_force = lambda body, force, pos: calls.append((env.get_time(), body, np.array(force), pos,
                                                             env.sim_char.get_body_centre(PELVIS)))
    try:
        recorder = PushRecorder(world, Push(force=100.0, direction="forward", start=60, updates=120), window=0.1)
        from app.evaluate import run_episodes
        run_episodes(world, 1, recorder)
    finally:
        env.apply_force = original
    dt = env.update_timestep
    assert [round(t / dt) for t, *_ in calls] == list(range(60, 180))      # the time before each update
    assert all(body == PELVIS and np.array_equal(force, recorder.force) and np.array_equal(pos, centre)
               for _, body, force, pos, centre in calls)
    assert np.linalg.norm(recorder.force) == pytest.approx(100.0)


# ---- trials ------------------------------------------------------------------------------------

class EndPose(PushRecorder):
    """The trials' recorder, noting the simulated pose at the end of each trial's episode."""

    ends = []

    def on_episode_end(self):
        EndPose.ends.append(self.env.sim_char.get_state()[0])
        super().on_episode_end()


def test_trials_repeat_bitwise_whatever_ran_before(world, monkeypatch):
    """The same push twice, with another in between: the same reset, the same pose at the end of
    the window, bit for bit."""
    from tests.bench import push_recovery

    monkeypatch.setattr(push_recovery, "PushRecorder", EndPose)
    bench = PushBench(world, settle=0.5, push_time=0.2, window=0.5)
    trials = [bench.trial(force, direction, 0.25) for force, direction in
              [(150.0, "forward"), (900.0, "sideways"), (150.0, "forward")]]
    assert trials[0] == trials[2] and trials[0] != trials[1]
    assert np.array_equal(EndPose.ends[0], EndPose.ends[2])
    assert not np.allclose(EndPose.ends[0], EndPose.ends[1])


def test_an_exploding_trial_is_a_fall(world):
    """A push far past any physical one (1 MN): the velocities explode, the episode is invalid and
    the trial ends there as not survived, instead of run_episodes going on to another episode."""
    bench = PushBench(world, settle=0.5, push_time=0.2, window=0.5)
    trial = bench.trial(1e6, "sideways", 0.0)
    assert trial.exploded and not trial.survived
    assert trial.length_s < 0.5 + 0.2 + 0.5


def test_a_coarse_run_writes_consistent_figures(tmp_path, capsys):
    """One phase, sideways, a 250 N grid up to 1000 N, short windows: the figure survives and the
    next grid force falls (the trials say so), the JSON holds them and the units."""
    out = tmp_path / "push.json"
    main(["--arg_file", WALK_ARGS, "--phases", "1", "--directions", "sideways", "--max_force", "1000",
          "--resolution", "250", "--settle", "0.5", "--window", "1.5", "--json", str(out)])
    result = json.loads(out.read_text())
    side = result["directions"]["sideways"]
    row, = side["phases"]
    assert side["survives_N"] == row["survives_N"] and result["unpushed_fall_s"] is None
    trials = {t["force"]: t["survived"] for t in row["trials"]}
    assert row["survives_N"] == 0 or trials[row["survives_N"]]       # 0: the unpushed check
    assert row["falls_N"] is None or (not trials[row["falls_N"]] and row["falls_N"] - row["survives_N"] == 250)
    assert result["character_mass_kg"] == pytest.approx(45.0) and result["paper_table_6_N"]["sideways"] == 300
    assert result["push_updates"] == 120 and result["clip"] == "walk"
    assert "sideways: survives" in capsys.readouterr().out


def test_a_window_past_the_test_episode_is_an_error(world):
    with pytest.raises(ArgError, match="longer than the test episodes"):
        PushBench(world, settle=17.0, push_time=0.2, window=3.0)


@pytest.mark.parametrize("args, message", [
    (["--arg_file", "args/no_such_file.txt"], "push_recovery: error: args/no_such_file.txt: argument file not found"),
    (["--arg_file", WALK_ARGS, "--phases", "0"], "push_recovery: error: --phases 0: must be >= 1"),
    (["--arg_file", WALK_ARGS, "--directions", "up"], "push_recovery: error: argument --directions: invalid choice"),
])
def test_bad_input_is_one_line(args, message):
    proc = subprocess.run([sys.executable, "-m", "tests.bench.push_recovery", *args], capture_output=True, text=True,
                          timeout=120, cwd=project_root())
    assert proc.returncode == 2 and len(proc.stderr.splitlines()) == 1 and proc.stderr.startswith(message)
