"""The 2021 imitation reward: hand-computed cases, and 1.0 right after reference state initialisation."""
import dataclasses
import math

import pytest

from env.anim.character import CharacterDesc
from env.anim.kin_character import KinCharacter
from env.anim.motion import Motion
from env.deepmimic_env import DeepMimicEnv
from env.scenes.imitate_reward import TERMS, CharSnapshot, ImitateReward
from util import math_util
from util.arg_parser import load_args

WALK_ARGS = "args/train_humanoid3d_walk_args.txt"


@pytest.fixture(scope="module")
def desc():
    return CharacterDesc.load("data/characters/humanoid3d.txt")


@pytest.fixture(scope="module")
def ref(desc):
    kin = KinCharacter(desc, Motion.load("data/motions/humanoid3d_walk.txt", desc))
    kin.set_time(0.4)
    joint_pos, _ = kin.calc_joint_world(kin.pose)
    return CharSnapshot(pose=kin.pose.copy(), vel=kin.vel.copy(), joint_pos=joint_pos,
                        com_vel=kin.calc_com(kin.pose, kin.vel)[1], ground_height=0.0)


def test_identical_characters_give_one(desc, ref):
    reward, terms = ImitateReward(desc).calc(ref, ref)
    assert reward == pytest.approx(1.0, abs=1e-12)
    assert all(terms[k] == pytest.approx(1.0, abs=1e-12) for k in TERMS)


def test_root_velocity_error(desc, ref):
    vel = ref.vel.copy()
    vel[0] += 1.0
    reward, terms = ImitateReward(desc).calc(dataclasses.replace(ref, vel=vel), ref)
    assert terms["root"] == pytest.approx(math.exp(-5.0 * 0.01))
    assert reward == pytest.approx(1.0 - 0.2 * (1.0 - math.exp(-0.05)))


def test_joint_angle_and_velocity_errors(desc, ref):
    """Chest (DiffWeight 0.5 of 4.8) turned by 0.3 rad and spinning 2 rad/s faster; right knee
    (0.3 of 4.8) bent 0.2 rad more. Joint positions are given, so only these terms move."""
    pose, vel = ref.pose.copy(), ref.vel.copy()
    o = desc.param_offset[1]
    pose[o:o + 4] = math_util.quat_mul(pose[o:o + 4], math_util.quat_from_axis_angle([0, 0, 1], 0.3))
    pose[desc.param_offset[4]] -= 0.2
    vel[desc.dof_offset[1] + 1] += 2.0
    reward, terms = ImitateReward(desc).calc(dataclasses.replace(ref, pose=pose, vel=vel), ref)
    pose_err = 0.5 / 4.8 * 0.3 ** 2 + 0.3 / 4.8 * 0.2 ** 2
    assert terms["pose"] == pytest.approx(math.exp(-2.0 * pose_err))
    assert terms["vel"] == pytest.approx(math.exp(-0.1 * 0.5 / 4.8 * 4.0))
    assert terms["end_eff"] == terms["root"] == terms["com"] == 1.0
    assert reward == pytest.approx(0.5 * terms["pose"] + 0.05 * terms["vel"] + 0.45)


def test_end_effectors_and_root_are_measured_from_each_characters_ground_and_heading(desc, ref):
    """The reference raised with its origin and turned about its root keeps a perfect reward;
    the com velocity is compared in world axes."""
    turn = math_util.quat_from_axis_angle([0, 1, 0], 1.0)
    root = ref.pose[0:3]
    pose = ref.pose.copy()
    pose[3:7] = math_util.quat_mul(turn, pose[3:7])
    pose[1] += 0.25
    joint_pos = root + math_util.quat_rotate(turn, ref.joint_pos - root) + [0.0, 0.25, 0.0]
    moved = dataclasses.replace(ref, pose=pose, joint_pos=joint_pos, ground_height=0.25)
    _, terms = ImitateReward(desc).calc(moved, ref)
    assert terms["end_eff"] == pytest.approx(1.0, abs=1e-12)
    assert terms["root"] == pytest.approx(math.exp(-5.0 * 0.1 * 1.0))       # root rotation 1 rad off
    com = dataclasses.replace(ref, com_vel=ref.com_vel + [0.0, 0.0, 0.5])
    assert ImitateReward(desc).calc(com, ref)[1]["com"] == pytest.approx(math.exp(-10 * 0.1 * 0.25))
    ee = dataclasses.replace(ref, joint_pos=ref.joint_pos + [0.1, 0.0, 0.0])
    # root joint moved too (it is no end effector): 4 end effectors 0.1 off in the heading frame
    assert ImitateReward(desc).calc(ee, ref)[1]["end_eff"] == pytest.approx(math.exp(-10 * 4 * 0.01))


@pytest.mark.parametrize("seed, extra", [(0, []), (1, []), (2, ["--enable_rand_rot_reset", "true"]),
                                         (3, ["--sync_char_root_rot", "true"])])
def test_reward_is_one_after_reference_state_initialisation(seed, extra):
    """Reward 1 with every term 1, except where a clip frame has a foot below the ground: then
    (as in DeepMimic) the character is raised by d and the reference root moved onto it, origin
    included, so the heights above each one's ground differ by d: root term exp(-5 d^2) and
    end-effector term exp(-10 * 4 d^2), the rest 1."""
    env = DeepMimicEnv(load_args(["--arg_file", WALK_ARGS] + extra), seed=seed)
    raised = 0
    for _ in range(8):
        env.reset()
        reward, terms, d = env.calc_reward(0), env.reward_terms, env.ground_raise
        expect = {"pose": 1.0, "vel": 1.0, "com": 1.0, "root": math.exp(-5 * d * d), "end_eff": math.exp(-40 * d * d)}
        assert terms == pytest.approx(expect, abs=1e-6)
        if d == 0.0:
            assert reward == pytest.approx(1.0, abs=1e-6)
        raised += d > 0.0
    assert raised < 8
    env.shutdown()


def test_reward_is_zero_after_a_fall():
    env = DeepMimicEnv(load_args(["--arg_file", WALK_ARGS]), seed=0)
    env._fallen_contact = True
    assert env.calc_reward(0) == 0.0 and set(env.reward_terms.values()) == {0.0}
    assert env.get_reward_min(0) == 0.0 and env.get_reward_max(0) == 1.0
    env.shutdown()
