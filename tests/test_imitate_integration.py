"""Integration points of the imitate scene with the learning side and the viewer: the episode limit
after a mode change, the reward terms through the Env API, the self-collision switch, UI forces
held over every physics sub-step, the scene base's no-op hooks."""
import numpy as np
import pybullet as p
import pytest

from env.deepmimic_env import DeepMimicEnv
from env.env import Env, Mode
from env.scenes.kin_char import KinCharScene
from util.arg_parser import load_args
from util import math_util

TRAIN_WALK = ["--arg_file", "args/train_humanoid3d_walk_args.txt"]
RIGHT_HIP, LEFT_HIP = 3, 9


def make_env(*extra, seed=0):
    return DeepMimicEnv(load_args(TRAIN_WALK + [str(x) for x in extra]), seed=seed)


def test_a_mode_change_applies_its_limit_to_the_running_episode():
    env = make_env()                     # reset in its constructor, in training mode
    timer = env.timer
    assert timer.max_time == 0.5
    env.update(0.1)
    env.set_mode(Mode.TEST)              # what RLWorld does when the agent does not train
    assert timer.max_time == 20.0 and timer.time == pytest.approx(0.1)
    env.set_mode(Mode.TEST)
    assert timer.max_time == 20.0
    env.set_mode(Mode.TRAIN)
    assert timer.max_time == 0.5
    env.set_mode(Mode.TEST)
    env.reset()
    assert timer.max_time == 20.0
    env.shutdown()


def test_reward_terms_through_the_env():
    env = make_env()
    assert Env.get_reward_terms(env, 0) == {} and Env.enable_draw is False and env.enable_draw is False
    reward = env.calc_reward(0)          # right after reference state initialisation
    terms = env.get_reward_terms(0)
    assert reward == pytest.approx(1.0, abs=1e-6)
    assert set(terms) == {"pose", "vel", "end_eff", "root", "com"}
    assert terms == env.reward_terms and terms is not env.reward_terms
    assert all(v == pytest.approx(1.0, abs=1e-6) for v in terms.values())
    env.shutdown()


def crossed_thigh_contacts(env):
    """Self-contacts with the thighs pushed into each other (hips turned 0.4 rad inwards)."""
    sim = env.sim_char
    pose, vel = sim.get_state()
    pose[1] += 1.0
    for joint, angle in ((RIGHT_HIP, 0.4), (LEFT_HIP, -0.4)):
        offset = sim.desc.param_offset[joint]
        pose[offset:offset + 4] = math_util.quat_from_axis_angle(np.array([1.0, 0.0, 0.0]), angle)
    sim.set_state(pose, np.zeros_like(vel))
    p.performCollisionDetection(physicsClientId=sim.client)
    return {(c[3], c[4]) for c in p.getContactPoints(sim.body, sim.body, physicsClientId=sim.client)}


def test_self_collision_switch():
    on, off = make_env(), make_env("--enable_char_self_collision", "false")
    assert (RIGHT_HIP, LEFT_HIP) in crossed_thigh_contacts(on)
    assert crossed_thigh_contacts(off) == set()
    on.shutdown()
    off.shutdown()


def test_ui_force_is_held_over_every_physics_substep():
    """No gravity, the character in the air, two identical envs of which one is pushed: the push
    changes the total momentum by F dt over the whole update (4 physics sub-steps), and adds
    nothing once the update is over."""
    args = ("--gravity", 0, 0, 0, "--num_update_substeps", 10, "--num_sim_substeps", 4)
    pushed, free = make_env(*args), make_env(*args)
    for env in (pushed, free):
        pose, vel = env.sim_char.get_state()
        pose[1] += 1.0
        env.sim_char.set_state(pose, vel)

    def momentum_gap():
        sim, ref = pushed.sim_char, free.sim_char
        return sim.masses @ sim.get_body_states().vel - ref.masses @ ref.get_body_states().vel

    force = np.array([300.0, 0.0, -200.0])
    pushed.apply_force(1, force, pushed.sim_char.get_body_states().pos[1])
    dt = 1.0 / 600.0
    for env in (pushed, free):
        env.update(dt)
    gap = momentum_gap()
    np.testing.assert_allclose(gap, force * dt, atol=2e-3)   # F dt, not F dt / 4
    for env in (pushed, free):
        env.update(dt)
    np.testing.assert_allclose(momentum_gap(), gap, atol=2e-3)       # no second push
    pushed.shutdown()
    free.shutdown()


def test_scene_base_hooks_are_no_ops():
    env = DeepMimicEnv(load_args(["--arg_file", "args/kin_char_args.txt"]))
    assert isinstance(env, KinCharScene)
    env.apply_force(1, np.ones(3), np.zeros(3))
    env.throw_projectile(big=True)
    assert env.draw_projectiles() == []
    env.shutdown()
