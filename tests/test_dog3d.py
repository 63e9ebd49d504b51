"""dog3d's controller files (ours, translated from DeepMimic's): state and action layouts and gains."""
import numpy as np
import pytest

from env.anim.character import CharacterDesc
from env.sim.ct_action import build_action_layout
from env.sim.ct_state import StateLayout
from env.sim.ctrl_params import CtrlParams

@pytest.fixture(scope="module")
def dog():
    return CharacterDesc.load("data/characters/dog3d.txt")


@pytest.mark.parametrize("name, size, world_rot", [("dog3d_ctrl.txt", 346, False), ("dog3d_rot_ctrl.txt", 346, True),
                                                   ("dog3d_phase_ctrl.txt", 347, False),
                                                   ("dog3d_phase_rot_ctrl.txt", 347, True)])
def test_state_sizes(dog, name, size, world_rot):
    """1 root height + 23 bodies x (3 position + 6 normal/tangent) + 23 x 6 velocities (+1 phase)."""
    params = CtrlParams.load(f"data/controllers/{name}", dog)
    assert 1 + 23 * 9 + 23 * 6 + int(params.enable_phase_input) == size
    assert StateLayout(params, dog.num_joints).size == size
    assert params.record_world_root_rot is world_rot and params.query_rate == 30.0


def test_action_layout_58_with_revolute_bounds(dog):
    """18 spherical joints x 3 (exp map, +-2 pi, scale 1/pi) + 4 revolute; forearms [0, 3.14] -> bounds
    [-4.71, 7.85], offset -1.57; legs [-3.14, 0] -> [-7.85, 4.71], offset +1.57; scale 0.5 / 3.14."""
    a = build_action_layout(CtrlParams.load("data/controllers/dog3d_phase_rot_ctrl.txt", dog), dog)
    assert a.size == 58 and a.sph_cols.shape == (18, 3) and len(a.rev_cols) == 4
    sph = a.sph_cols.ravel()
    assert np.allclose(a.bound_min[sph], -2 * np.pi) and np.allclose(a.scale[sph], 1 / np.pi)
    forearms, legs = a.rev_cols[[0, 1]], a.rev_cols[[2, 3]]  # joints 6, 10 then 14, 18
    assert np.allclose(a.bound_min[forearms], -4.71) and np.allclose(a.bound_max[forearms], 7.85)
    assert np.allclose(a.offset[forearms], -1.57) and np.allclose(a.offset[legs], 1.57)
    assert np.allclose(a.bound_min[legs], -7.85) and np.allclose(a.bound_max[legs], 4.71)
    assert np.allclose(a.scale[a.rev_cols], 0.5 / 3.14)


# DeepMimic's dog3d gains (Kp, Kd) by joint: root, spine0, spine1, neck, head, then each front leg
# (shoulder, forearm, hand, finger), each hind leg (upper leg, leg, foot, toe), tail0, tail1
FRONT = [(200, 20), (200, 20), (100, 10), (50, 5)]
HIND = [(300, 30), (200, 20), (150, 15), (80, 8)]
DOG_GAINS = [(0, 0), (500, 50), (500, 50), (100, 10), (50, 5)] + FRONT * 2 + HIND * 2 + [(20, 2), (10, 1)]


@pytest.mark.parametrize("name", ["dog3d_ctrl.txt", "dog3d_phase_ctrl.txt", "dog3d_phase_rot_ctrl.txt",
                                  "dog3d_rot_ctrl.txt"])
def test_gains_are_deepmimics(dog, name):
    params = CtrlParams.load(f"data/controllers/{name}", dog)
    assert list(zip(params.kp.tolist(), params.kd.tolist())) == DOG_GAINS


def test_imitate_env_sizes_and_reward_one_at_reference_state_initialisation():
    """dog3d trot through the args file: state 347, action 58; after reset every reward term is 1 except
    where the clip frame is raised by d above the ground (root exp(-5 d^2), end effectors: 4 of them,
    exp(-10 * 4 d^2)), as for the humanoid."""
    import math

    from env.deepmimic_env import DeepMimicEnv
    from util.arg_parser import load_args
    env = DeepMimicEnv(load_args(["--arg_file", "args/train_dog3d_trot_args.txt"]), seed=0)
    try:
        assert env.get_state_size(0) == 347 and env.get_action_size(0) == 58
        assert env.sim_char.fall_contact_bodies == [0, 1, 2, 3, 4, 5, 6, 7, 9, 10, 11, 13, 14, 15, 17, 18,
                                                          19, 21, 22]
        for _ in range(4):
            env.reset()
            reward, terms, d = env.calc_reward(0), env.reward_terms, env.ground_raise
            expect = {"pose": 1.0, "vel": 1.0, "com": 1.0, "root": math.exp(-5 * d * d),
                      "end_eff": math.exp(-40 * d * d)}
            assert terms == pytest.approx(expect, abs=1e-6)
            assert reward > 0.999
    finally:
        env.shutdown()


@pytest.mark.parametrize("clip", ["trot", "spin"])
def test_amp_env_sizes(clip):
    """AMP dog args: rot controller (trot, pace, canter) or plain (spin), no phase: state 346, action 58."""
    from env.deepmimic_env import DeepMimicEnv
    from util.arg_parser import load_args
    env = DeepMimicEnv(load_args(["--arg_file", f"args/train_amp_dog3d_{clip}_args.txt"]), seed=0)
    try:
        env.reset()
        assert env.get_state_size(0) == 346 and env.get_action_size(0) == 58
        assert env.ctrl.params.record_world_root_rot is (clip != "spin")
    finally:
        env.shutdown()
