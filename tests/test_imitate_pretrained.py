"""The pybullet wheel's pretrained walk policy (2018 layout) walks in our imitate scene (slow: TF import).

The policy runs as a numpy forward pass of the checkpoint's weights (fc 1024-512, ReLU), its
normalisers taken from the checkpoint; this checks the 197-state and 36-action layouts end to end.
"""
from pathlib import Path

import numpy as np
import pybullet_data
import pytest

from env.deepmimic_env import DeepMimicEnv
from env.env import Mode
from util.arg_parser import load_args

CKPT = Path(pybullet_data.getDataPath()) / "data/policies/humanoid3d/humanoid3d_walk.ckpt"


class NumpyActor:
    def __init__(self, path):
        import tensorflow as tf
        get = tf.train.load_checkpoint(str(path)).get_tensor
        self.layers = [(get(f"agent/main/actor/{name}/kernel"), get(f"agent/main/actor/{name}/bias"))
                       for name in ("0/dense", "1/dense", "dense")]
        self.s_mean, self.s_std = get("agent/resource/s_norm/mean"), get("agent/resource/s_norm/std")
        self.a_mean, self.a_std = get("agent/resource/a_norm/mean"), get("agent/resource/a_norm/std")

    def __call__(self, state):
        h = (state - self.s_mean) / self.s_std
        for kernel, bias in self.layers[:-1]:
            h = np.maximum(h @ kernel + bias, 0.0)
        kernel, bias = self.layers[-1]
        return (h @ kernel + bias) * self.a_std + self.a_mean


@pytest.mark.slow
def test_pretrained_walk_policy_walks():
    actor = NumpyActor(CKPT)
    env = DeepMimicEnv(load_args(["--arg_file", "args/run_humanoid3d_walk_wheel_args.txt"]), seed=0)
    assert np.allclose(actor.a_mean, -env.build_action_offset(0), atol=1e-6)
    assert np.allclose(actor.a_std, 1.0 / env.build_action_scale(0), atol=1e-6)
    env.set_mode(Mode.TEST)
    env.reset()
    dt = 1.0 / 60.0 / env.get_num_update_substeps()
    rewards, start = [], env.sim_char.get_root_pos()
    for _ in range(int(round(5.0 / dt))):
        if env.need_new_action(0):
            state = env.record_state(0)
            if env.get_time() > 0:
                rewards.append(env.calc_reward(0))
            env.set_action(0, actor(state))
        env.update(dt)
        assert env.check_valid_episode() and not env.is_episode_end()
    assert np.mean(rewards) > 0.8
    assert np.linalg.norm((env.sim_char.get_root_pos() - start)[[0, 2]]) > 3.0   # walked > 3 m in 5 s
    env.shutdown()
