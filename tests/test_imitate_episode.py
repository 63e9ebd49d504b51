"""imitate's episode flow: tracking, falls, termination codes, timers, sync, validity, perturbations."""
import json

import numpy as np
import pytest

from env.deepmimic_env import DeepMimicEnv
from env.env import Mode, Terminate
from util import math_util
from util.arg_parser import load_args

WALK_ARGS = "args/train_humanoid3d_walk_args.txt"
LONG = ["--time_lim_min", "20", "--time_lim_max", "20"]
DT = 1.0 / 600.0


def make_env(*extra, seed=0):
    return DeepMimicEnv(load_args(["--arg_file", WALK_ARGS, *LONG, *extra]), seed=seed)


def track(env, seconds):
    """PD targets = the reference pose at each decision; returns the per-decision mean joint errors."""
    errors = []
    for _ in range(int(round(seconds / DT))):
        if env.need_new_action(0):
            env.set_action(0, env.calc_ref_action())
            errors.append(env.calc_joint_errors().mean())
        env.update(DT)
        assert not env.is_episode_end()
    return errors


@pytest.mark.parametrize("seed, pd_mode", [(0, "tree"), (1, "tree"), (2, "tree"), (0, "exact"), (0, "builtin")])
def test_pd_tracking_of_the_clip_stays_upright(tmp_path, seed, pd_mode):
    ctrl = json.loads(open("data/controllers/humanoid3d_ctrl.txt").read())
    ctrl["PDMode"] = pd_mode
    (tmp_path / "ctrl.txt").write_text(json.dumps(ctrl))
    env = make_env("--char_ctrl_files", str(tmp_path / "ctrl.txt"), seed=seed)
    errors = track(env, 0.3)
    assert env.sim_char.get_root_pos()[1] > 0.75 and not env.has_fallen()
    assert np.mean(errors) < 0.2
    env.shutdown()


def test_decisions_at_30_hz():
    for substeps, every in ((10, 20), (4, 8)):
        env = make_env("--num_update_substeps", str(substeps))
        dt = 1.0 / 60.0 / substeps
        asks = []
        for i in range(3 * every + 1):
            asks.append(env.need_new_action(0))
            if asks[-1]:
                env.set_action(0, env.calc_ref_action())
            env.update(dt)
        assert [i for i, a in enumerate(asks) if a] == [0, every, 2 * every, 3 * every]
        env.shutdown()


def test_drop_from_one_metre_ends_in_fail():
    env = make_env()
    scene = env
    pose = scene.kin_char.default_pose()
    pose[1] = 1.0
    pose[3:7] = math_util.quat_from_axis_angle([0, 0, 1], np.pi / 2)  # lying on its back
    scene.sim_char.set_state(pose, np.zeros(scene.char_desc.dof_size))
    steps = 0
    while not env.is_episode_end():
        if env.need_new_action(0):
            env.set_action(0, scene.calc_ref_action())
        env.update(DT)
        steps += 1
        assert steps < 600
    assert env.check_terminate(0) == Terminate.Fail
    assert scene.sim_char.has_fall_contact(scene.world.ground)
    assert 0.3 < steps * DT < 0.55   # free fall of ~0.9 m before the first contact
    assert env.calc_reward(0) == 0.0
    env.shutdown()


def test_end_of_a_non_looping_clip_is_fail():
    env = make_env("--motion_file", "data/motions/humanoid3d_kick.txt")
    scene = env
    assert scene.motion.loop == "none"
    scene.kin_char.time = scene.motion.duration - 0.05
    steps = 0
    while not env.is_episode_end():
        if env.need_new_action(0):
            env.set_action(0, scene.calc_ref_action())
        env.update(DT)
        steps += 1
    assert steps == pytest.approx(0.05 / DT, abs=1)
    assert not scene.has_fallen() and scene.motion_over()
    assert env.check_terminate(0) == Terminate.Fail
    env.shutdown()


def test_timer_expiry_is_null():
    env = DeepMimicEnv(load_args(["--arg_file", WALK_ARGS, "--time_lim_min", "0.1", "--time_lim_max", "0.1"]))
    steps = 0
    while not env.is_episode_end():
        if env.need_new_action(0):
            env.set_action(0, env.calc_ref_action())
        env.update(DT)
        steps += 1
    assert steps in (60, 61)  # 60 x (1/600) may sum to just below 0.1, as in DeepMimic
    assert env.check_terminate(0) == Terminate.Null
    env.shutdown()


def test_episode_length_curriculum_and_test_mode():
    env = DeepMimicEnv(load_args(["--arg_file", WALK_ARGS, "--anneal_samples", "100"]))
    timer = env.timer
    assert timer.max_time == 0.5
    env.set_sample_count(50)
    env.reset()
    assert timer.max_time == pytest.approx(0.5 + 0.5 ** 4 * (20 - 0.5))
    env.set_sample_count(500)
    env.reset()
    assert timer.max_time == pytest.approx(20.0)
    env.set_sample_count(0)
    env.set_mode(Mode.TEST)
    env.reset()
    assert timer.max_time == 20.0
    env.shutdown()


def test_uniform_and_exp_timers():
    env = DeepMimicEnv(load_args(["--arg_file", WALK_ARGS, "--time_lim_min", "1", "--time_lim_max", "3",
                                  "--time_end_lim_min", "1", "--time_end_lim_max", "3"]), seed=0)
    draws = []
    for _ in range(50):
        env.reset()
        draws.append(env.timer.max_time)
    assert 1.0 <= min(draws) and max(draws) <= 3.0 and np.std(draws) > 0.3
    env = DeepMimicEnv(load_args(["--arg_file", WALK_ARGS, "--timer_type", "exp", "--time_lim_min", "1",
                                  "--time_lim_max", "2", "--time_lim_exp", "0.5"]), seed=0)
    draws = []
    for _ in range(50):
        env.reset()
        draws.append(env.timer.max_time)
    assert 1.0 <= min(draws) and max(draws) == 2.0
    env.shutdown()


def test_exploding_velocity_makes_the_episode_invalid():
    env = make_env()
    scene = env
    pose, vel = scene.sim_char.get_state()
    assert env.check_valid_episode()
    vel[3:6] = [0.0, 150.0, 0.0]   # root spinning at 150 rad/s
    scene.sim_char.set_state(pose, vel)
    scene._touch()
    assert env.need_new_action(0) and not env.check_valid_episode()
    env.shutdown()


@pytest.mark.parametrize("sync_rot", [False, True])
def test_reference_root_synced_each_cycle(sync_rot):
    env = make_env("--sync_char_root_rot", str(sync_rot).lower())
    scene = env
    kin = scene.kin_char
    kin.time = scene.motion.duration - 3.5 * DT
    for _ in range(10):
        if env.need_new_action(0):
            env.set_action(0, scene.calc_ref_action())
        before = scene.sim_char.get_state()[0]
        cycle = scene._kin_cycle
        env.update(DT)
        if scene._kin_cycle != cycle:
            break
    else:
        pytest.fail("no cycle wrap")
    kin.set_time(kin.time)
    assert np.allclose(kin.root_pos[[0, 2]], before[[0, 2]], atol=1e-12)
    assert kin.origin_pos[1] == pytest.approx(0.0, abs=1e-12)
    heading_gap = kin.calc_heading() - math_util.quat_heading(before[3:7])
    assert (abs(heading_gap) < 1e-9) == sync_rot
    env.shutdown()


def test_root_rotation_fail():
    env = make_env("--enable_root_rot_fail", "true")
    scene = env
    assert env.check_terminate(0) == Terminate.Null
    pose, vel = scene.sim_char.get_state()
    pose[3:7] = math_util.quat_mul(math_util.quat_from_axis_angle([1, 0, 0], 1.7), pose[3:7])
    scene.sim_char.set_state(pose, vel)
    scene._touch()
    assert scene.has_fallen() and env.check_terminate(0) == Terminate.Fail and env.is_episode_end()
    env.shutdown()


def test_random_perturbations_push_the_character():
    def run(extra):
        env = make_env(*extra, seed=4)
        for _ in range(60):
            if env.need_new_action(0):
                env.set_action(0, env.calc_ref_action())
            env.update(DT)
        state = env.sim_char.get_state()[1]
        env.shutdown()
        return state
    calm = run([])
    pushed = run(["--enable_rand_perturbs", "true", "--perturb_time_min", "0.02", "--perturb_time_max", "0.02",
                  "--min_perturb", "200", "--max_perturb", "200"])
    assert np.abs(pushed - calm).max() > 0.05


def test_viewer_hooks():
    env = make_env()
    scene = env
    drawn = scene.draw_characters()
    assert [d[3] for d in drawn] == ["sim", "kin"]
    assert all(d[1].shape == (15, 3) and d[2].shape == (15, 4) for d in drawn)
    assert np.allclose(drawn[0][1], drawn[1][1], atol=1e-6)   # right after reset they coincide
    assert np.allclose(scene.camera_focus(), scene.sim_char.get_root_pos())

    pushes = []
    for force in (0.0, 2000.0):
        env.reset()
        vel_before = scene.sim_char.get_state()[1][0:3]
        scene.apply_force(0, [0.0, 0.0, force], scene.sim_char.get_body_centre(0))
        env.update(DT)
        pushes.append(scene.sim_char.get_state()[1][2] - vel_before[2])
    assert pushes[1] - pushes[0] > 0.1   # 2000 N on the root for 1/600 s

    scene.throw_projectile(big=False)
    scene.throw_projectile(big=True)
    boxes = scene.draw_projectiles()
    assert len(boxes) == 2 and 1.25 <= boxes[1][0][0] <= 1.75
    for _ in range(int(2.1 / DT)):
        env.update(DT)
    assert scene.draw_projectiles() == []
    env.shutdown()
