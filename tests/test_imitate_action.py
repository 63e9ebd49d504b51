"""imitate's actions: layouts, offsets/scales/bounds, target conversions."""
import numpy as np
import pytest

from env.anim.character import CharacterDesc
from env.sim.ct_action import build_action_layout
from env.sim.ctrl_params import CtrlParams
from util import math_util

# the wheel's pretrained checkpoints store the 2018 action normaliser: mean = -offset, std = 1/scale
# (agent/resource/a_norm/{mean,std} of data/policies/humanoid3d/humanoid3d_walk.ckpt)
CKPT_A_MEAN = [0, 0, 0, 0.2, 0, 0, 0, 0.2, 0, 0, 0, 0.2, -1.57, 0, 0, 0, 0.2, 0, 0, 0, 0.2, 1.57,
               0, 0, 0, 0.2, -1.57, 0, 0, 0, 0.2, 0, 0, 0, 0.2, 1.57]
CKPT_A_STD = [4.8, 1, 1, 1, 4, 1, 1, 1, 8.28, 1, 1, 1, 6.28, 6.28, 1, 1, 1, 12.56, 1, 1, 1, 6.28,
              8.28, 1, 1, 1, 6.28, 6.28, 1, 1, 1, 9.28, 1, 1, 1, 6.28]


@pytest.fixture(scope="module")
def desc():
    return CharacterDesc.load("data/characters/humanoid3d.txt")


def layout(desc, name):
    return build_action_layout(CtrlParams.load(f"data/controllers/{name}", desc), desc)


def random_quats(rng, n):
    return math_util.quat_normalize(rng.normal(size=(n, 4)))


def test_2021_layout(desc):
    a = layout(desc, "humanoid3d_ctrl.txt")
    assert a.size == 28
    sph = a.sph_cols.ravel()
    assert np.allclose(a.scale[sph], 1.0 / np.pi) and np.all(a.offset[sph] == 0.0)
    assert np.allclose(a.bound_min[sph], -2 * np.pi) and np.allclose(a.bound_max[sph], 2 * np.pi)
    knee, elbow = a.rev_cols[0], a.rev_cols[1]  # right knee [-3.14, 0], right elbow [0, 3.14]
    assert a.offset[knee] == pytest.approx(1.57) and a.scale[knee] == pytest.approx(0.5 / 3.14)
    assert (a.bound_min[knee], a.bound_max[knee]) == pytest.approx((-1.57 - 6.28, -1.57 + 6.28))
    assert a.offset[elbow] == pytest.approx(-1.57)
    # chest, neck, right hip, right knee, right ankle, ...: columns in joint id order
    assert list(a.sph_cols[:3, 0]) == [0, 3, 6] and a.rev_cols[0] == 9


def test_2018_layout_matches_the_pretrained_checkpoints(desc):
    a = layout(desc, "humanoid3d_ctrl_2018.txt")
    assert a.size == 36
    assert np.allclose(-a.offset, CKPT_A_MEAN, atol=1e-6)
    assert np.allclose(1.0 / a.scale, CKPT_A_STD, atol=1e-6)
    chest = a.sph_cols[0]
    assert (a.bound_min[chest[0]], a.bound_max[chest[0]]) == pytest.approx((-4.8, 4.8))
    assert np.all(a.bound_min[chest[1:]] == -1.0) and np.all(a.bound_max[chest[1:]] == 1.0)


def test_exp_map_round_trips(desc):
    a = layout(desc, "humanoid3d_ctrl.txt")
    rng = np.random.default_rng(0)
    for _ in range(20):
        quats, angles = random_quats(rng, 8), rng.uniform(-3, 3, 4)
        sph, rev = a.to_targets(a.from_targets(quats, angles))
        assert np.all(math_util.quat_diff_angle(sph, quats) < 1e-6)
        assert np.allclose(rev, angles)
        action = rng.uniform(-1, 1, 28)
        action[a.sph_cols] *= np.pi / np.sqrt(3)   # exp maps shorter than pi: unique
        assert np.allclose(a.from_targets(*a.to_targets(action)), action, atol=1e-6)
    # a known value: exp map (0, 0, pi/2) is a quarter turn about z
    action = np.zeros(28)
    action[a.sph_cols[0]] = [0, 0, np.pi / 2]
    assert np.allclose(a.to_targets(action)[0][0], [np.cos(np.pi / 4), 0, 0, np.sin(np.pi / 4)])


def test_exp_map_longer_than_two_pi_is_rescaled(desc):
    a = layout(desc, "humanoid3d_ctrl.txt")
    axis = np.array([0.6, 0.0, 0.8])
    action = np.zeros(28)
    action[a.sph_cols[0]] = 2.5 * np.pi * axis + 0.0
    clipped = np.zeros(28)
    clipped[a.sph_cols[0]] = 2.0 * np.pi * axis
    assert np.allclose(a.to_targets(action)[0][0], a.to_targets(clipped)[0][0], atol=1e-12)


def test_axis_angle_round_trips(desc):
    a = layout(desc, "humanoid3d_ctrl_2018.txt")
    rng = np.random.default_rng(1)
    for _ in range(20):
        quats, angles = random_quats(rng, 8), rng.uniform(-3, 3, 4)
        sph, rev = a.to_targets(a.from_targets(quats, angles))
        assert np.all(math_util.quat_diff_angle(sph, quats) < 1e-6)
        assert np.allclose(rev, angles)
    # (angle, axis) with an unnormalised axis; a zero axis means z
    action = np.zeros(36)
    action[a.sph_cols[0]] = [np.pi / 2, 0.0, 0.0, 2.0]
    action[a.sph_cols[1]] = [np.pi / 2, 0.0, 0.0, 0.0]
    sph, _ = a.to_targets(action)
    assert np.allclose(sph[0], [np.cos(np.pi / 4), 0, 0, np.sin(np.pi / 4)])
    assert np.allclose(sph[1], sph[0])


def test_wrong_action_size(desc):
    with pytest.raises(ValueError, match=r"shape \(27,\), expected \(28,\)"):
        layout(desc, "humanoid3d_ctrl.txt").to_targets(np.zeros(27))
