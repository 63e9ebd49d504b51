"""DeepMimicEnv over the imitate scene, built from argument files as the entry points build it."""
from pathlib import Path

import numpy as np
import pybullet_data
import pytest

from env.deepmimic_env import DeepMimicEnv
from env.env import ActionSpace, Terminate
from util.arg_parser import load_args

WHEEL_WALK_ARGS = Path(pybullet_data.getDataPath()) / "args" / "train_humanoid3d_walk_args.txt"


def drive(env, seconds, rng):
    """An RL world's loop with random actions around the action mean; returns (decisions, episodes)."""
    offset, scale = env.build_action_offset(0), env.build_action_scale(0)
    low, high = env.build_action_bound_min(0), env.build_action_bound_max(0)
    dt = 1.0 / 60.0 / env.get_num_update_substeps()
    decisions = episodes = 0
    for _ in range(int(round(seconds / dt))):
        if env.need_new_action(0):
            state = env.record_state(0)
            assert state.shape == (env.get_state_size(0),) and np.all(np.isfinite(state))
            if decisions:
                reward = env.calc_reward(0)
                assert env.get_reward_min(0) <= reward <= env.get_reward_max(0)
            action = np.clip(-offset + 0.3 * rng.standard_normal(offset.size) / scale, low, high)
            env.set_action(0, action)
            env.log_val(0, 0.5)
            decisions += 1
        env.update(dt)
        if not env.check_valid_episode():
            env.reset()
            episodes += 1
        elif env.is_episode_end():
            assert env.check_terminate(0) in (Terminate.Null, Terminate.Fail)
            env.reset()
            episodes += 1
            decisions = 0
    return episodes


def test_wheel_walk_args_run_random_actions():
    env = DeepMimicEnv(load_args(["--arg_file", str(WHEEL_WALK_ARGS)]), seed=0)
    assert env.name == "imitate" and env.get_num_agents() == 1
    assert env.get_num_update_substeps() == 10
    assert env.world.scale == 4.0 and env.world.num_sim_substeps == 2
    assert env.get_state_size(0) == 227 and env.get_action_size(0) == 28 and env.get_goal_size(0) == 0
    assert env.get_action_space(0) == ActionSpace.Continuous
    assert env.sim_char.fall_contact_bodies == [0, 1, 2, 3, 4, 6, 7, 8, 9, 10, 12, 13, 14]
    episodes = drive(env, 3.0, np.random.default_rng(0))
    assert episodes >= 5            # 0.5 s episodes at the start of the curriculum
    assert env.get_time() < 0.51
    env.shutdown()


def test_pretrained_policy_layout_at_240_hz():
    env = DeepMimicEnv(load_args(["--arg_file", "args/run_humanoid3d_walk_wheel_args.txt"]), seed=1)
    assert env.get_state_size(0) == 197 and env.get_action_size(0) == 36
    assert env.get_num_update_substeps() == 4 and env.world.num_sim_substeps == 1
    drive(env, 1.0, np.random.default_rng(1))
    env.shutdown()


def test_bad_arguments_are_one_line_errors():
    with pytest.raises(ValueError, match="--scene .imitat. is not one of .*imitate, .*kin_char"):
        DeepMimicEnv(load_args(["--scene", "imitat"]))
    with pytest.raises(ValueError, match="--char_ctrls 'ct_vel' is not supported"):
        DeepMimicEnv(load_args(["--arg_file", str(WHEEL_WALK_ARGS), "--char_ctrls", "ct_vel"]))
