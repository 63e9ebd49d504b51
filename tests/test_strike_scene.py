"""The strike_amp scene (DeepMimic's cSceneStrikeAMP) through DeepMimicEnv: goal and hit phase on set
states, the hit test (distance and speed thresholds, latching), training and test rewards against
the formulas, termination, target placement ranges, the initial hit draw, the args files and the
viewer's target."""
import json
import math
from pathlib import Path

import numpy as np
import pytest

from env.deepmimic_env import DeepMimicEnv
from env.env import Mode, Terminate
from learning.agent_builder import load_agent_config
from learning.agents.amp_agent import AMPAgent
from tests.deepmimic_checkout import deepmimic_path
from util import math_util
from util.arg_parser import load_args

ROOT = Path(__file__).resolve().parent.parent
ARGS_DIR = ROOT / "args"
STRIKE_ARGS = str(ARGS_DIR / "train_amp_strike_humanoid3d_walk_punch_shipped_args.txt")
DEEPMIMIC_ARGS = "args/train_amp_strike_humanoid3d_walk_punch_args.txt"     # in a DeepMimic checkout
WRIST, CHEST = 8, 1
STRIKE_KEYS = ("--target_min", "--target_max", "--target_radius", "--target_hit_reset_time", "--tar_reward_scale",
               "--hit_tar_speed", "--init_hit_prob", "--tar_far_prob", "--tar_near_dist",
               "--fail_tar_contact_bodies")


def make_env(*extra, arg_file=STRIKE_ARGS, seed=0):
    return DeepMimicEnv(load_args(["--arg_file", arg_file, *map(str, extra)]), seed=seed)


@pytest.fixture(scope="module")
def env():
    env = make_env()
    yield env
    env.shutdown()


@pytest.fixture
def scene(env):
    env.reset()
    scene = env
    scene.set_mode(Mode.TRAIN)
    scene.target_hit, scene.target_hit_time = False, -1.0
    scene._fallen_contact = False
    set_root(scene, 0.0, 0.0, 0.0)
    return scene


def set_root(scene, x, z, heading, vel=(0.0, 0.0, 0.0)):
    """The current pose moved to root (x, z), turned to `heading`, every body moving at `vel`
    (a pure root translation velocity: no joint or angular velocity)."""
    pose, joint_vel = scene.sim_char.get_state()
    pose[0], pose[2] = x, z
    pose[3:7] = math_util.quat_from_axis_angle(np.array([0.0, 1.0, 0.0]), heading)
    new_vel = np.zeros_like(joint_vel)
    new_vel[0:3] = vel
    scene.sim_char.set_state(pose, new_vel)
    scene._touch()


def horizontal_unit(v):
    flat = np.array([v[0], 0.0, v[2]])
    return flat / np.linalg.norm(flat)


def wrist_and_dir(scene, offset):
    """(wrist centre, target = wrist + offset placed, unit horizontal root->target)."""
    wrist = scene.sim_body_states().pos[WRIST].copy()
    scene.target_pos = wrist + np.asarray(offset, dtype=float)
    return wrist, horizontal_unit(scene.target_pos - scene.sim_char.get_root_pos())


# ---- goal and hit phase -------------------------------------------------------------------

def test_goal_is_the_target_in_the_heading_frame_and_the_hit_phase(env, scene):
    assert env.get_goal_size(0) == 4
    np.testing.assert_array_equal(env.build_goal_norm_groups(0), [-1, -1, -1, -1])   # never normalised
    # heading pi/2: the character faces world -z; world (x, y, z) -> heading frame (-z, y, x)
    set_root(scene, 1.0, 2.0, math.pi / 2)
    scene.target_pos = np.array([4.0, 1.3, -1.0])
    np.testing.assert_allclose(env.record_goal(0), [3.0, 1.3, 3.0, 0.0], atol=1e-9)
    scene.timer.time = 3.0
    scene.target_hit, scene.target_hit_time = True, 2.5
    assert env.record_goal(0)[3] == pytest.approx(0.25)          # (3 - 2.5) / 2
    scene.target_hit_time = 0.5
    assert env.record_goal(0)[3] == 1.0                          # clamped at T = 2 s


def test_hit_phase_grows_with_time_and_ends_the_episode_after_target_hit_reset_time(env, scene):
    scene.target_pos = scene.sim_char.get_root_pos() + [5.0, 0.0, 0.0]
    scene.timer.time = 1.0
    scene.set_target_hit(True)
    assert scene.target_hit_time == 1.0
    for t, phase, term in [(1.0, 0.0, Terminate.Null), (2.0, 0.5, Terminate.Null),
                           (2.999, 0.9995, Terminate.Null), (3.0, 1.0, Terminate.Succ), (4.0, 1.0, Terminate.Succ)]:
        scene.timer.time = t
        scene._touch()
        assert scene.calc_hit_phase() == pytest.approx(phase)
        assert env.check_terminate(0) == term


# ---- hit test -------------------------------------------------------------------------------

@pytest.mark.parametrize("offset, speed, hit", [
    ((0.19, 0.0, 0.0), 1.6, True),
    ((0.0, 0.0, 0.19), 1.501, True),
    ((0.21, 0.0, 0.0), 3.0, False),      # outside target_radius (3D)
    ((0.0, 0.21, 0.0), 3.0, False),
    ((0.1, 0.0, 0.0), 1.499, False),     # below hit_tar_speed
    ((0.1, 0.0, 0.0), -2.0, False),      # moving away from the target
])
def test_hit_needs_a_strike_body_within_the_radius_moving_fast_enough(env, scene, offset, speed, hit):
    _, direction = wrist_and_dir(scene, offset)
    set_root(scene, 0.0, 0.0, 0.0, vel=speed * direction)      # the same pose: the bodies stay
    assert scene.check_target_hit() == hit


def test_any_speed_hits_when_hit_tar_speed_is_zero(env, scene):
    _, direction = wrist_and_dir(scene, (0.1, 0.0, 0.1))
    set_root(scene, 0.0, 0.0, 0.0, vel=-0.3 * direction)
    scene.hit_tar_speed = 0.0
    try:
        assert scene.check_target_hit()
        # the near reward's speed term: 0 when moving away, full for any speed toward the target
        near_dist_term = 0.2 * math.exp(-2.0 * 0.02)
        assert env.calc_reward(0) == pytest.approx(0.3 + 0.3 * near_dist_term, rel=1e-9)
        set_root(scene, 0.0, 0.0, 0.0, vel=0.01 * direction)
        assert env.calc_reward(0) == pytest.approx(0.3 + 0.3 * (near_dist_term + 0.8), rel=1e-9)
    finally:
        scene.hit_tar_speed = 1.5


def test_only_strike_bodies_hit(env, scene):
    chest = scene.sim_body_states().pos[CHEST]
    direction = horizontal_unit(chest + [0.05, 0, 0] - scene.sim_char.get_root_pos())
    set_root(scene, 0.0, 0.0, 0.0, vel=3.0 * direction)
    scene.target_pos = scene.sim_body_states().pos[CHEST] + [0.05, 0.0, 0.0]
    assert not scene.check_target_hit()


def test_a_hit_in_an_update_latches_with_its_time(env, scene):
    _, direction = wrist_and_dir(scene, (0.0, 0.0, 0.0))
    set_root(scene, 0.0, 0.0, 0.0, vel=3.0 * direction)
    wrist_and_dir(scene, (0.02, 0.0, 0.0))
    env.update(scene.update_timestep)
    assert scene.target_hit and scene.target_hit_time == pytest.approx(scene.get_time()) and scene.get_time() > 0
    hit_time = scene.target_hit_time
    scene.target_pos = scene.target_pos + [5.0, 0.0, 0.0]        # far from every body now
    env.update(scene.update_timestep)
    assert scene.target_hit and scene.target_hit_time == hit_time
    assert env.calc_reward(0) == 1.0


# ---- training reward --------------------------------------------------------------------------

def test_hit_reward_is_one_even_after_a_fall(env, scene):
    scene.target_pos = scene.sim_char.get_root_pos() + [6.0, 0.0, 0.0]
    scene._fallen_contact = True
    assert env.calc_reward(0) == 0.0                              # far and fallen
    scene.target_hit = True
    assert env.calc_reward(0) == 1.0


@pytest.mark.parametrize("speed", [0.9, 2.0, -0.5])
def test_near_reward_against_the_formula(env, scene, speed):
    _, direction = wrist_and_dir(scene, (0.0, 0.0, 0.0))
    set_root(scene, 0.0, 0.0, 0.0, vel=speed * direction)
    wrist, direction = wrist_and_dir(scene, (0.3, 0.1, -0.2))
    root = scene.sim_char.get_root_pos()
    assert math.hypot(*(scene.target_pos - root)[[0, 2]]) < 1.4
    body_vel = scene.sim_body_states().vel[WRIST]
    np.testing.assert_allclose(body_vel, speed * horizontal_unit(wrist - root), atol=1e-6)
    dist_sq = 0.3 ** 2 + 0.1 ** 2 + 0.2 ** 2
    vel_term = min(max(direction @ body_vel / 1.5, 0.0), 1.0) ** 2
    expected = 0.3 + 0.3 * (0.2 * math.exp(-2.0 * dist_sq) + 0.8 * vel_term)
    assert env.calc_reward(0) == pytest.approx(expected, rel=1e-9)
    scene._fallen_contact = True                                  # the near reward ignores a fall
    assert env.calc_reward(0) == pytest.approx(expected, rel=1e-9)


def setup_far_case(scene, target_from_root, com_step, step=0.1):
    """Target at root + target_from_root (height 1.3), c0 = com - com_step, a control step of `step` s."""
    root = scene.sim_char.get_root_pos()
    scene.target_pos = np.array([root[0] + target_from_root[0], 1.3, root[2] + target_from_root[1]])
    scene.prev_action_com = scene.calc_com() - np.asarray(com_step, dtype=float)
    scene.prev_action_time = scene.ctrl.time - step


@pytest.mark.parametrize("target_from_root, com_step, speed", [
    ((3.0, 4.0), (0.03, 0.2, 0.04), 0.5),      # 0.05 m toward the target in 0.1 s
    ((0.0, -6.0), (0.0, 0.0, -0.2), 2.0),      # faster than tar_speed: not penalised (enable_min_tar_vel)
    ((6.0, 0.0), (-0.1, 0.0, 0.0), -1.0),      # moving away: no speed reward
])
def test_far_reward_against_the_formula(env, scene, target_from_root, com_step, speed):
    setup_far_case(scene, target_from_root, com_step)
    com = scene.calc_com()
    to_target = horizontal_unit(scene.target_pos - com)
    assert to_target @ np.asarray(com_step) / 0.1 == pytest.approx(speed, abs=0.02)   # com ~ above the root
    measured = to_target @ np.asarray(com_step) / 0.1
    d = math.hypot(*target_from_root)
    vel_reward = 0.0 if measured < 0 else math.exp(-4.0 * max(1.0 - measured, 0.0) ** 2)
    expected = 0.3 * (0.7 * math.exp(-0.5 * (d - 1.4) ** 2) + 0.3 * vel_reward)
    assert env.calc_reward(0) == pytest.approx(expected, rel=1e-9)
    scene._fallen_contact = True
    assert env.calc_reward(0) == 0.0


def test_near_far_boundary_is_tar_near_dist(env, scene):
    setup_far_case(scene, (1.39, 0.0), (0.0, 0.0, 0.0))
    assert env.calc_reward(0) >= 0.3
    setup_far_case(scene, (1.41, 0.0), (0.0, 0.0, 0.0))
    assert env.calc_reward(0) == pytest.approx(0.3 * 0.7 * math.exp(-0.5 * 0.01 ** 2) + 0.3 * 0.3 * math.exp(-4.0))


# ---- test reward and termination ----------------------------------------------------------------

def test_test_reward_is_the_time_left_at_a_success(env, scene):
    scene.set_mode(Mode.TEST)
    scene.target_pos = scene.sim_char.get_root_pos() + [3.0, 0.0, 0.0]
    scene.timer.time = 5.0
    assert env.calc_reward(0) == 0.0
    scene.target_hit, scene.target_hit_time = True, 3.5
    assert env.calc_reward(0) == 0.0                              # hit 1.5 s ago: not yet a success
    scene.target_hit_time = 3.0
    scene._touch()
    assert env.is_episode_end()
    assert env.calc_reward(0) == pytest.approx(scene.timer.max_time - 5.0) == 15.0


@pytest.mark.parametrize("body, offset, term", [
    (CHEST, (0.15, 0.0, 0.0), Terminate.Fail),     # fail_tar_contact_bodies 0 1 2, within target_radius
    (0, (0.0, 0.0, 0.19), Terminate.Fail),
    (CHEST, (0.25, 0.0, 0.0), Terminate.Null),
    (WRIST, (0.0, 0.0, 0.0), Terminate.Null),      # a strike body is not a failure
])
def test_fail_tar_contact_bodies(env, scene, body, offset, term):
    bodies = scene.sim_body_states().pos
    scene.target_pos = bodies[body] + np.asarray(offset)
    if body == WRIST and np.linalg.norm(bodies[[0, 1, 2]] - scene.target_pos, axis=1).min() < 0.2:
        term = Terminate.Fail          # this pose holds the wrist against the torso: the torso fails
    assert env.check_terminate(0) == term


def test_tar_fail_dist_and_fall(env, scene):
    root = scene.sim_char.get_root_pos()
    scene.target_pos = root + [0.0, 1.3, 15.01]
    assert env.check_terminate(0) == Terminate.Fail
    scene.target_pos = root + [0.0, 1.3, 14.99]
    assert env.check_terminate(0) == Terminate.Null
    scene._fallen_contact = True
    assert env.check_terminate(0) == Terminate.Fail


# ---- placement and the initial hit ------------------------------------------------------------

def near_far_samples(scene, far_prob, n):
    scene.tar_far_prob = far_prob
    try:
        root = scene.sim_char.get_root_pos()
        pts = np.array([scene.sample_target_pos() for _ in range(n)]) - [root[0], 0.0, root[2]]
    finally:
        scene.tar_far_prob = 0.4
    dist = np.hypot(pts[:, 0], pts[:, 2])
    angle = np.arctan2(-pts[:, 2], pts[:, 0])          # target = root + (d cos a, h, -d sin a)
    return angle, pts[:, 1], dist


def test_near_targets_lie_in_the_target_min_max_box(env, scene):
    set_root(scene, 3.0, -2.0, 2.0)                    # the angle is from world +x, not the heading
    angle, height, dist = near_far_samples(scene, 0.0, 400)
    assert -0.5 <= angle.min() < -0.45 and 0.45 < angle.max() <= 0.5
    assert 1.2 <= height.min() < 1.21 and 1.39 < height.max() <= 1.4
    assert 0.6 <= dist.min() < 0.62 and 1.08 < dist.max() <= 1.1


def test_far_targets_surround_the_root_up_to_max_target_dist(env, scene):
    angle, height, dist = near_far_samples(scene, 1.0, 400)
    assert angle.min() < -3.0 and angle.max() > 3.0
    assert 1.2 <= height.min() and height.max() <= 1.4
    assert 0.6 <= dist.min() < 1.0 and 9.5 < dist.max() <= 10.0


def test_tar_far_prob_mixes_the_two(env, scene):
    angle, _, dist = near_far_samples(scene, 0.4, 3000)
    outside_near_box = (np.abs(angle) > 0.5) | (dist > 1.1)
    # a far target falls inside the near box with probability (1 / 2 pi) (0.5 / 9.4) < 0.01
    assert 0.37 < outside_near_box.mean() < 0.43


def test_reset_clears_the_hit_and_draws_the_initial_hit_in_training_only(env, scene):
    scene.target_hit, scene.target_hit_time = True, 0.3
    scene.init_hit_prob = 0.0
    scene.reset_target()
    assert not scene.target_hit and scene.target_hit_time == -1.0
    scene.init_hit_prob = 1.0
    try:
        scene.timer.time = 0.0
        times = []
        for _ in range(200):
            scene.reset_target()
            assert scene.target_hit
            times.append(scene.target_hit_time)
        assert -2.0 <= min(times) < -1.9 and -0.1 < max(times) <= 0.0       # U(t - T, t), t = 0
        scene.set_mode(Mode.TEST)
        scene.reset_target()
        assert not scene.target_hit
    finally:
        scene.init_hit_prob = 0.1
    scene.set_mode(Mode.TRAIN)
    hits = 0
    for _ in range(2000):
        scene.reset_target()
        hits += scene.target_hit
    assert 0.08 < hits / 2000 < 0.12                   # init_hit_prob 0.1


def test_env_reset_puts_the_target_around_the_reset_root(env):
    scene = env
    for _ in range(20):
        set_root(scene, 30.0, -40.0, 0.0)
        env.reset()
        dist = math.hypot(*(scene.target_pos - scene.sim_char.get_root_pos())[[0, 2]])
        assert 0.6 <= dist <= 10.0 and 1.2 <= scene.target_pos[1] <= 1.4


def test_the_target_timer_never_moves_the_target(env, scene):
    target = scene.target_pos.copy()
    scene.target_timer.max_time = scene.target_timer.time      # ends at the next update
    env.update(scene.update_timestep)
    np.testing.assert_array_equal(scene.target_pos, target)


# ---- args ----------------------------------------------------------------------------------

def test_defaults_of_the_scene_keys(tmp_path):
    lines = [line for line in Path(STRIKE_ARGS).read_text().splitlines() if not line.startswith(STRIKE_KEYS)]
    arg_file = tmp_path / "args.txt"
    arg_file.write_text("\n".join(lines))
    env = make_env(arg_file=str(arg_file))
    scene = env
    np.testing.assert_array_equal(scene.target_min, [-0.5, 1.2, 0.6])
    np.testing.assert_array_equal(scene.target_max, [0.5, 1.4, 1.1])
    assert (scene.target_radius, scene.target_hit_reset_time, scene.tar_reward_scale, scene.hit_tar_speed,
            scene.init_hit_prob, scene.tar_far_prob, scene.tar_near_dist) == (0.2, 2.0, 2.0, 1.5, 0.0, 0.4, 1.4)
    assert scene.strike_bodies == [8] and scene.fail_tar_contact_bodies == []
    env.shutdown()


@pytest.mark.parametrize("extra, key", [
    (("--target_min", -0.5, 1.2), "target_min"),
    (("--target_max", 0.5, 1.0, 1.1), "target_m"),         # height max < min
    (("--target_radius", 0), "target_radius"),
    (("--tar_far_prob", 1.5), "tar_far_prob"),
    (("--strike_bodies", 15), "strike_bodies"),
    (("--fail_tar_contact_bodies", -1), "fail_tar_contact_bodies"),
    (("--hit_tar_speed", -1), "hit_tar_speed"),
])
def test_bad_values_name_the_key(extra, key):
    with pytest.raises(ValueError, match=key):
        make_env(*extra)


def test_no_strike_bodies_is_an_error(tmp_path):
    lines = [line for line in Path(STRIKE_ARGS).read_text().splitlines() if not line.startswith("--strike_bodies")]
    arg_file = tmp_path / "args.txt"
    arg_file.write_text("\n".join(lines))
    with pytest.raises(ValueError, match="strike_bodies"):
        make_env(arg_file=str(arg_file))


TRANSLATED = {"char_ctrl_files", "agent_files", "enable_char_soft_contact", "int_output_path"}


@pytest.mark.parametrize("name", ["train_amp_strike_humanoid3d_walk_punch_args.txt",
                                  "train_amp_strike_humanoid3d_walk_punch_shipped_args.txt",
                                  "run_amp_strike_humanoid3d_walk_punch_args.txt",
                                  "run_amp_strike_humanoid3d_walk_punch_shipped_args.txt"])
def test_args_files_keep_deepmimics_values(name):
    """Every key of DeepMimic's strike args has its value here, except the translated ones (our AMP
    controller file and agent file name; no soft contacts) and the dataset of the _shipped files."""
    ours = load_args(["--arg_file", str(ARGS_DIR / name)])
    theirs = load_args(["--arg_file", str(deepmimic_path(DEEPMIMIC_ARGS))])
    skip = TRANSLATED | ({"motion_file"} if "shipped" in name else set())
    if name.startswith("run_"):
        skip |= {"time_lim_min", "time_lim_max", "time_lim_exp", "anneal_samples", "output_path"}
        assert ours.parse_bools("train_agents") == [False]
    for key in set(theirs.table) - {"arg_file"}:
        if key not in skip:
            assert ours.parse_strings(key) == theirs.parse_strings(key), key
    assert ours.parse_string("char_ctrl_files") == "data/controllers/humanoid3d_amp_ctrl.txt"
    cls, config, _ = load_agent_config(ours.parse_strings("agent_files")[0])
    assert cls is AMPAgent and config.task_reward_lerp == 0.5      # DeepMimic's ct_agent_humanoid_amp_tasks.txt


def test_shipped_dataset():
    shipped = json.loads((ROOT / "data/datasets/humanoid3d_clips_walk_punch_shipped.txt").read_text())
    assert {m["File"] for m in shipped["Motions"]} == {"data/motions/humanoid3d_punch.txt",
                                                       "data/motions/humanoid3d_walk.txt"}


def test_dataset_is_deepmimics():
    dataset = json.loads((ROOT / "data/datasets/humanoid3d_clips_walk_punch.txt").read_text())
    theirs = deepmimic_path("data/datasets/humanoid3d_clips_walk_punch.txt")
    assert dataset == json.loads(theirs.read_text())


# ---- viewer ------------------------------------------------------------------------------

def test_viewer_draws_the_target_sphere_and_the_near_circle(env, scene):
    from env.render.draw_list import build_frame

    scene.target_pos = np.array([2.0, 1.3, -1.0])
    solids, lines = scene.draw_task_objects()
    (shape, size, pos, _, red), = solids
    assert shape == "sphere"
    np.testing.assert_allclose(size, [0.4] * 3)                  # diameter 2 target_radius
    np.testing.assert_allclose(pos, [2.0, 1.3, -1.0])
    points, circle_color = lines[0]
    np.testing.assert_allclose(np.hypot(points[:, 0] - 2.0, points[:, 2] + 1.0), 1.4)   # tar_near_dist
    np.testing.assert_allclose(points[:, 1], 0.1)
    assert red[0] == 1.0 and red[1] == 0.0 and np.array_equal(circle_color, red)
    scene.target_hit = True
    (_, _, _, _, green), = scene.draw_task_objects()[0]
    assert green[1] > 0.5 > green[0]
    frame = build_frame(scene.draw_characters(), scene.draw_projectiles(), task_objects=scene.draw_task_objects())
    assert frame.solids[-1].key == ("sphere", 0.4)
