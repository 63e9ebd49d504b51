"""Scene kin_char: a clip played on the kinematic character."""
import numpy as np
import pytest

from env.deepmimic_env import DeepMimicEnv
from util.arg_parser import load_args

DT = 1.0 / 60.0


def make_env(motion):
    return DeepMimicEnv(load_args(["--scene", "kin_char", "--character_file", "data/characters/humanoid3d.txt",
                                   "--motion_file", motion]))


def test_plays_and_loops_a_wrapping_clip():
    env = make_env("data/motions/humanoid3d_walk.txt")
    scene = env
    motion = scene.kin_char.motion
    assert env.get_num_agents() == 0 and env.get_num_update_substeps() == 1
    steps = int(np.ceil(1.5 * motion.duration / DT))
    for _ in range(steps):
        env.update(DT)
    assert env.get_time() == pytest.approx(steps * DT)
    assert np.allclose(scene.kin_char.pose, motion.calc_frame(steps * DT))
    # past one cycle the root has moved on by the clip's displacement
    assert np.allclose(scene.kin_char.root_pos[[0, 2]],
                       motion.calc_frame(steps * DT - motion.duration)[[0, 2]] + motion.cycle_root_offset[[0, 2]])
    (desc, pos, rot, kind), = scene.draw_characters()
    assert kind == "kin" and pos.shape == (15, 3) and rot.shape == (15, 4)
    assert np.allclose(scene.camera_focus(), scene.kin_char.root_pos)
    env.reset()
    assert env.get_time() == 0.0
    with pytest.raises(RuntimeError, match="no agents"):
        env.record_state(0)


def test_restarts_a_non_looping_clip():
    env = make_env("data/motions/humanoid3d_kick.txt")
    motion = env.kin_char.motion
    steps = int(np.ceil(motion.duration / DT)) + 3
    for _ in range(steps):
        env.update(DT)
    assert env.get_time() == pytest.approx(steps * DT - motion.duration)
    assert np.allclose(env.kin_char.pose, motion.calc_frame(steps * DT - motion.duration))
