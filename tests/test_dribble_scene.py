"""The dribble_amp scene (DeepMimic's cSceneDribbleAMP) through DeepMimicEnv: state layout, goal and
ball features on set states, reward terms, termination, placement and reset order, the ball's
physics, the args files."""
import math
from pathlib import Path

import numpy as np
import pybullet as p
import pytest

from env.deepmimic_env import DeepMimicEnv
from env.env import Mode, Terminate
from env.sim import ball as ball_module
from learning.agent_builder import load_agent_config
from learning.agents.amp_agent import AMPAgent
from util import math_util
from util.arg_parser import load_args

ARGS_DIR = Path(__file__).resolve().parent.parent / "args"
DRIBBLE_ARGS = str(ARGS_DIR / "train_amp_dribble_humanoid3d_locomotion_args.txt")
SCENE_KEYS = ("--rand_target_time", "--rand_tar_obj_time", "--min_tar_obj_dist", "--max_tar_obj_dist",
              "--max_target_dist", "--ball_radius", "--tar_speed")


def make_env(*extra, arg_file=DRIBBLE_ARGS, seed=0):
    return DeepMimicEnv(load_args(["--arg_file", arg_file, *map(str, extra)]), seed=seed)


@pytest.fixture(scope="module")
def env():
    env = make_env()
    yield env
    env.shutdown()


@pytest.fixture
def scene(env):
    env.reset()
    env.set_mode(Mode.TRAIN)
    return env


def set_root(scene, x, z, heading):
    """The simulated character's current pose moved to root (x, z) and turned to `heading`."""
    pose, vel = scene.sim_char.get_state()
    pose[0], pose[2] = x, z
    pose[3:7] = math_util.quat_from_axis_angle(np.array([0.0, 1.0, 0.0]), heading)
    scene.sim_char.set_state(pose, np.zeros_like(vel))
    scene._touch()


def place_ball(scene, pos, rot=(1.0, 0, 0, 0), vel=(0, 0, 0), ang_vel=(0, 0, 0)):
    scene.ball.place(np.asarray(pos, dtype=float), np.asarray(rot, dtype=float))
    s = scene.world.scale
    p.resetBaseVelocity(scene.ball.body, list(np.asarray(vel, dtype=float) * s), list(ang_vel),
                        physicsClientId=scene.world.client)
    scene._touch()


def collision_radius(scene):
    """The ball's collision radius (pybullet units): its centre's height above the ground less the
    closest distance between the two (pybullet has no shape query for maximal-coordinate bodies)."""
    place_ball(scene, (0.0, 1.0, 0.0))
    closest = p.getClosestPoints(scene.ball.body, scene.world.ground, 10.0, physicsClientId=scene.world.client)
    return scene.world.scale * 1.0 - closest[0][8]


# ---- layout, goal and ball features ----------------------------------------------------------

def test_state_is_the_controller_state_plus_15_ball_features(env, scene):
    base = scene.ctrl.state_layout
    assert env.get_state_size(0) == base.size + 15 == 241
    assert env.record_state(0).shape == (241,)
    np.testing.assert_array_equal(env.build_state_offset(0)[:base.size], base.offset)
    np.testing.assert_array_equal(env.build_state_scale(0)[:base.size], base.scale)
    np.testing.assert_array_equal(env.build_state_offset(0)[-15:], np.zeros(15))
    np.testing.assert_array_equal(env.build_state_scale(0)[-15:], np.ones(15))
    groups = env.build_state_norm_groups(0)
    np.testing.assert_array_equal(groups[:base.size], base.norm_groups)
    np.testing.assert_array_equal(groups[-15:], np.zeros(15))    # DeepMimic's gNormGroupSingle
    assert env.get_goal_size(0) == 3
    np.testing.assert_array_equal(env.build_goal_norm_groups(0), np.zeros(3))


def test_goal_and_ball_features_in_the_heading_frame(env, scene):
    # heading pi/2: the character faces world -z; world (x, y, z) -> heading frame (-z, y, x)
    set_root(scene, 1.0, 2.0, math.pi / 2)
    tilt = math_util.quat_from_axis_angle(np.array([0.0, 0.0, 1.0]), 0.3)
    place_ball(scene, (4.0, 0.2, -1.0), tilt, vel=(0.5, 0.0, -1.5), ang_vel=(0.0, 2.0, 1.0))
    scene.target_pos = np.array([1.0, 0.0, -5.0])
    np.testing.assert_allclose(env.record_goal(0), [0.8, -0.6, 5.0], atol=1e-9)   # w = (-3, 0, -4)
    c, s = math.cos(0.3), math.sin(0.3)
    expected = np.concatenate([[3.0, 0.2, 3.0],      # ball - (root x, ground, root z) = (3, 0.2, -3)
                               [0.0, c, -s],         # heading^-1 R_z(0.3) (0, 1, 0)
                               [0.0, s, c],          # heading^-1 R_z(0.3) (1, 0, 0)
                               [1.5, 0.0, 0.5], [-1.0, 2.0, 0.0]])
    np.testing.assert_allclose(env.record_state(0)[-15:], expected, atol=1e-6)


def test_goal_direction_defaults_when_the_ball_is_on_the_target(env, scene):
    place_ball(scene, (2.0, 0.2, 3.0))
    scene.target_pos = np.array([2.0, 0.0, 3.0 + 5e-5])
    np.testing.assert_allclose(env.record_goal(0), [1.0, 0.0, 5e-5], atol=1e-9)


# ---- reward -------------------------------------------------------------------------------

def setup_reward_case(scene, com_step, ball_from_c0, ball_step, target_from_ball, step=0.1):
    """Sets c0 = com - com_step, ball = c0 + ball_from_c0 (on the ground), b0 = ball - ball_step,
    target = ball + target_from_ball, and a control step of `step` seconds."""
    com = scene.calc_com()
    c0 = com - np.asarray(com_step, dtype=float)
    ball = np.array([c0[0] + ball_from_c0[0], 0.2, c0[2] + ball_from_c0[2]])
    place_ball(scene, ball)
    scene.prev_action_com = c0
    scene.prev_action_ball = ball - np.asarray(ball_step, dtype=float)
    scene.prev_action_time = scene.ctrl.time - step
    scene.target_pos = np.array([ball[0] + target_from_ball[0], 0.0, ball[2] + target_from_ball[2]])


def test_reward_terms_against_the_formula(env, scene):
    # com moves 0.05 toward the ball in 0.1 s (0.5 m/s), ball 1 m away, ball moves 0.1 m straight to
    # the target (1 m/s = tar_speed), target 2 m from the ball
    setup_reward_case(scene, (0.05, 0.3, 0.0), (1.0, 0, 0.0), (0.06, 0, 0.08), (1.2, 0, 1.6))
    e1, e2, e3, e4 = (0.5 - 1.0) ** 2, 1.0, 0.0, math.sqrt(4.0 + 0.2 ** 2)
    expected = [math.exp(-1.5 * e1), math.exp(-0.5 * e2), math.exp(-e3), math.exp(-0.5 * e4)]
    reward = env.calc_reward(0)
    assert list(scene.reward_terms.values()) == pytest.approx(expected, rel=1e-9)
    assert reward == pytest.approx(0.1 * expected[0] + 0.1 * expected[1] + 0.3 * expected[2] + 0.5 * expected[3])


def test_faster_than_target_speed_is_not_penalised_and_moving_away_is(env, scene):
    setup_reward_case(scene, (0.3, 0, 0), (1.0, 0, 0), (-0.1, 0, 0), (3.0, 0, 0))
    env.calc_reward(0)
    assert scene.reward_terms["com_ball_vel"] == 1.0                                # 3 m/s > 1 m/s
    assert scene.reward_terms["target_vel"] == pytest.approx(math.exp(-(-1.0 - 1.0) ** 2))   # -1 m/s


def test_success_override_needs_the_ball_near_c0(env, scene):
    # 3D ball-target distance sqrt(0.3^2 + 0.2^2) = 0.36 < 0.5
    setup_reward_case(scene, (0, 0, 0), (1.0, 0, 0), (0, 0, 0), (0.3, 0, 0))
    assert env.calc_reward(0) == 1.0
    setup_reward_case(scene, (0, 0, 0), (2.5, 0, 0), (0, 0, 0), (0.3, 0, 0))     # c0-ball 2.5 > 2
    assert env.calc_reward(0) < 0.9


def test_success_is_horizontal_but_the_reward_bonus_is_3d(env, scene):
    # horizontal 0.48 < 0.5 ends the episode (Succ); 3D sqrt(0.48^2 + 0.2^2) = 0.52: no bonus
    setup_reward_case(scene, (0, 0, 0), (1.0, 0, 0), (0, 0, 0), (0.48, 0, 0))
    assert env.check_terminate(0) == Terminate.Succ
    assert env.calc_reward(0) < 0.9
    setup_reward_case(scene, (0, 0, 0), (1.0, 0, 0), (0, 0, 0), (0.52, 0, 0))
    assert env.check_terminate(0) == Terminate.Null


def test_test_reward_is_the_time_left_at_a_success(env, scene):
    scene.set_mode(Mode.TEST)
    setup_reward_case(scene, (0, 0, 0), (1.0, 0, 0), (0, 0, 0), (5.0, 0, 0))
    assert env.calc_reward(0) == 0.0
    setup_reward_case(scene, (0, 0, 0), (1.0, 0, 0), (0, 0, 0), (0.1, 0, 0))
    scene.timer.time = 30.0
    assert env.is_episode_end()
    assert env.calc_reward(0) == pytest.approx(scene.timer.max_time - 30.0) == 70.0


# ---- termination --------------------------------------------------------------------------

@pytest.mark.parametrize("ball_from_root, target_from_ball, fallen", [
    ((20.5, 0, 0), (3.0, 0, 0), True),     # root-ball > 2 max_tar_obj_dist = 20
    ((19.5, 0, 0), (3.0, 0, 0), False),
    ((1.0, 0, 0), (0, 0, 20.5), True),     # ball-target > 2 max_target_dist = 20
    ((1.0, 0, 0), (0, 0, 19.5), False),
])
def test_distance_failures_count_as_fallen(env, scene, ball_from_root, target_from_ball, fallen):
    root = scene.sim_char.get_root_pos()
    ball = np.array([root[0] + ball_from_root[0], 0.2, root[2] + ball_from_root[2]])
    place_ball(scene, ball)
    scene.target_pos = np.array([ball[0] + target_from_ball[0], 0.0, ball[2] + target_from_ball[2]])
    assert scene.has_fallen() == fallen
    assert env.check_terminate(0) == (Terminate.Fail if fallen else Terminate.Null)
    if fallen:
        assert env.calc_reward(0) == 0.0


def test_touching_the_ball_is_not_a_fall(env, scene):
    """The ball dropped onto the character's chest: contacts with fall-contact bodies, no fall."""
    chest = scene.sim_body_states().pos[1]
    place_ball(scene, chest + [0.0, 0.45, 0.0])
    touched = set()
    for _ in range(60):
        env.update(scene.update_timestep)
        touched |= {c[4] for c in p.getContactPoints(scene.ball.body, scene.sim_char.body,
                                                     physicsClientId=scene.world.client)}
        assert not scene._fallen_contact
    assert touched & set(scene.sim_char._fall_ids)


# ---- placement, reset order, timers ---------------------------------------------------------

def test_reset_places_the_ball_around_the_pre_reset_root_then_the_target_around_the_ball(env):
    scene = env
    ball_dists, target_dists = [], []
    for k in range(40):
        x, z = 30.0 + k, -40.0
        set_root(scene, x, z, 0.0)
        env.reset()
        ball = scene.ball.get_pos()
        ball_dists.append(math.hypot(ball[0] - x, ball[2] - z))
        target_dists.append(math.hypot(scene.target_pos[0] - ball[0], scene.target_pos[2] - ball[2]))
        assert ball[1] == pytest.approx(0.2, abs=1e-9) and scene.target_pos[1] == 0.0
        np.testing.assert_allclose(scene.sim_char.get_root_pos()[[0, 2]], 0.0, atol=1e-9)
        np.testing.assert_allclose(scene.prev_action_ball, ball)
        assert env.check_terminate(0) == Terminate.Fail     # ball > 20 m from the reset root: "fallen"
    assert 0.5 <= min(ball_dists) and max(ball_dists) <= 10.0 and max(ball_dists) - min(ball_dists) > 5
    assert 0.2 <= min(target_dists) and max(target_dists) <= 10.0 and max(target_dists) - min(target_dists) > 5


def test_placed_ball_rests_on_the_ground_with_a_random_rotation(env, scene):
    rots = []
    for _ in range(5):
        scene.set_ball_pos(np.array([3.0, 7.0, 1.0]))
        np.testing.assert_allclose(scene.ball.get_pos(), [3.0, 0.2, 1.0], atol=1e-9)
        np.testing.assert_allclose(np.concatenate(scene.ball.get_vel()), np.zeros(6))
        rots.append(scene.ball.get_rot())
    assert np.abs(np.diff(rots, axis=0)).max() > 0.1


def test_timers_replace_ball_and_target(env, scene):
    assert scene.target_timer.params.time_min == 50 and scene.tar_obj_timer.params.time_max == 200
    ball_before, target_before = scene.ball.get_pos(), scene.target_pos.copy()
    scene.target_timer.max_time = scene.target_timer.time     # ends at the next update
    env.update(scene.update_timestep)
    assert not np.allclose(scene.target_pos, target_before)
    ball = scene.ball.get_pos()
    assert scene.ball.radius <= math.hypot(*(scene.target_pos - ball)[[0, 2]]) <= 10.0
    scene.tar_obj_timer.max_time = scene.tar_obj_timer.time
    env.update(scene.update_timestep)
    root, ball = scene.sim_char.get_root_pos(), scene.ball.get_pos()
    assert not np.allclose(ball, ball_before)
    assert 0.5 <= math.hypot(ball[0] - root[0], ball[2] - root[2]) <= 10.0
    assert scene.tar_obj_timer.time == 0.0 and 100 <= scene.tar_obj_timer.max_time <= 200


# ---- the ball's physics ---------------------------------------------------------------------

def test_ball_parameters_read_back_from_pybullet(env, scene):
    ball, client, s = scene.ball, scene.world.client, scene.world.scale
    info = p.getDynamicsInfo(ball.body, -1, physicsClientId=client)
    assert info[0] == pytest.approx(0.43) and info[1] == pytest.approx(0.4)
    np.testing.assert_allclose(info[2], [0.4 * 0.43 * (0.2 * s) ** 2] * 3, rtol=1e-6)   # solid sphere
    assert collision_radius(scene) == pytest.approx(0.2 * s)
    # free flight: gravity changes only vy; vx and the spin shrink by (1 - 0.4)^dt per sub-step
    place_ball(scene, (50.0, 10.0, 0.0), vel=(1.0, 0.0, 0.0), ang_vel=(0.0, 3.0, 0.0))
    scene.world.step()
    vel, ang_vel = ball.get_vel()
    decay = (1 - ball_module.LINEAR_DAMPING) ** scene.update_timestep
    assert vel[0] == pytest.approx(decay, rel=1e-6)
    assert ang_vel[1] == pytest.approx(3.0 * (1 - ball_module.ANGULAR_DAMPING) ** scene.update_timestep, rel=1e-6)
    assert vel[1] == pytest.approx(-9.8 * scene.update_timestep, rel=1e-3)


def test_ball_never_sleeps(env, scene):
    """At rest far past Bullet's 2 s sleeping time, it still moves when pushed."""
    place_ball(scene, (60.0, 0.2, 0.0))
    for _ in range(3 * 600):
        scene.world.step()
    p.applyExternalForce(scene.ball.body, -1, [40.0, 0, 0], list(scene.ball.get_pos() * scene.world.scale),
                         p.WORLD_FRAME, physicsClientId=scene.world.client)
    scene.world.step()
    assert scene.ball.get_vel()[0][0] > 0.01


# ---- args --------------------------------------------------------------------------------

def test_defaults_of_the_scene_keys(tmp_path):
    lines = [line for line in Path(DRIBBLE_ARGS).read_text().splitlines() if not line.startswith(SCENE_KEYS)]
    arg_file = tmp_path / "args.txt"
    arg_file.write_text("\n".join(lines))
    env = make_env(arg_file=str(arg_file))
    scene = env
    assert (scene.target_timer.params.time_min, scene.target_timer.params.time_max) == (50.0, 100.0)
    assert (scene.tar_obj_timer.params.time_min, scene.tar_obj_timer.params.time_max) == (100.0, 200.0)
    assert (scene.min_tar_obj_dist, scene.max_tar_obj_dist, scene.ball.radius) == (0.5, 10.0, 0.2)
    assert (scene.max_target_dist, scene.tar_speed, scene.target_succ_dist) == (3.0, 1.0, 0.5)
    env.shutdown()


def test_ball_radius_is_scaled_by_world_scale():
    env = make_env("--ball_radius", 0.3, "--world_scale", 2)
    assert env.ball.get_pos()[1] == pytest.approx(0.3)     # rests on the ground
    assert collision_radius(env) == pytest.approx(0.6)
    env.shutdown()


@pytest.mark.parametrize("key, value", [("--ball_radius", 0), ("--min_tar_obj_dist", 11),
                                        ("--rand_tar_obj_time_min", 300)])
def test_bad_values_name_the_key(key, value):
    with pytest.raises(ValueError, match=key.lstrip("-")):
        make_env(key, value)


def test_rl07_agent_file_differs_from_the_task_agent_only_in_the_lerp():
    import json
    root = ARGS_DIR.parent / "data" / "agents"
    rl07 = json.loads((root / "ct_agent_humanoid_amp_tasks_rl07.txt").read_text())
    task = json.loads((root / "ct_agent_humanoid_amp_task.txt").read_text())
    assert rl07["TaskRewardLerp"] == 0.7 and {**rl07, "TaskRewardLerp": 0.5} == task


@pytest.mark.parametrize("name", ["train_amp_dribble_humanoid3d_locomotion_args.txt",
                                  "run_amp_dribble_humanoid3d_locomotion_args.txt",
                                  "train_amp_dribble_humanoid3d_zombie_args.txt",
                                  "run_amp_dribble_humanoid3d_zombie_args.txt"])
def test_dribble_args_files(name):
    """DeepMimic's dribble args: 100 s episodes, targets 50-100 s, balls 100-200 s, the rl07 agent."""
    args = load_args(["--arg_file", str(ARGS_DIR / name)])
    assert args.parse_string("scene") == "dribble_amp"
    assert args.parse_float("time_end_lim_max") == 100
    assert [args.parse_float(k) for k in ("rand_target_time_min", "rand_target_time_max", "rand_tar_obj_time_min",
                                          "rand_tar_obj_time_max", "min_tar_obj_dist", "max_tar_obj_dist",
                                          "max_target_dist", "tar_speed")] == [50, 100, 100, 200, 0.5, 10, 10, 1]
    cls, config, _ = load_agent_config(args.parse_strings("agent_files")[0])
    assert cls is AMPAgent and config.task_reward_lerp == 0.7
    if name.startswith("run_"):
        assert args.parse_bools("train_agents") == [False]
    else:
        assert args.parse_float("anneal_samples") == 32e6


# ---- viewer ------------------------------------------------------------------------------

def test_viewer_draws_a_two_coloured_ball_and_a_flag_with_a_success_circle(env, scene):
    from env.render import meshes
    from env.render.draw_list import build_frame

    tilt = math_util.quat_from_axis_angle(np.array([1.0, 0.0, 0.0]), 0.4)
    place_ball(scene, (3.0, 0.2, 1.0), tilt)
    scene.target_pos = np.array([3.6, 0.0, 1.0])
    solids, lines = scene.draw_task_objects()
    (_, size_a, pos_a, rot_a, color_a), (_, _, pos_b, rot_b, color_b) = solids[:2]
    assert [s[0] for s in solids] == ["hemisphere", "hemisphere", "box", "box"]
    np.testing.assert_allclose(pos_a, [3.0, 0.2, 1.0], atol=1e-9)
    np.testing.assert_allclose(size_a, [0.4] * 3)
    # the two halves: the ball's own up axis, and its opposite
    up = math_util.quat_rotate(tilt, np.array([0.0, 1.0, 0.0]))
    np.testing.assert_allclose(math_util.quat_rotate(rot_a, np.array([0.0, 1.0, 0.0])), up, atol=1e-6)
    np.testing.assert_allclose(math_util.quat_rotate(rot_b, np.array([0.0, 1.0, 0.0])), -up, atol=1e-6)
    assert not np.allclose(color_a, color_b)
    points, red = lines[0]
    np.testing.assert_allclose(np.hypot(points[:, 0] - 3.6, points[:, 2] - 1.0), 0.5)   # target_succ_dist
    place_ball(scene, (3.3, 0.2, 1.0))                                                   # inside the circle
    _, green_lines = scene.draw_task_objects()
    assert green_lines[0][1][1] > 0.5 > red[1]
    frame = build_frame(scene.draw_characters(), scene.draw_projectiles(), task_objects=scene.draw_task_objects())
    assert [s.key for s in frame.solids[-4:-2]] == [("hemisphere", 0.4)] * 2
    positions, normals, _ = meshes.build(("hemisphere", 0.4))
    assert positions[:, 1].min() >= 0.0 and np.allclose(np.linalg.norm(positions, axis=1), 0.2, atol=1e-6)
