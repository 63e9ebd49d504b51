"""The gymnasium env over DeepMimicEnv: gymnasium's own checker, registered ids, seeded rollouts
that repeat, termination on a fall, reward terms in info, an rgb_array frame."""
import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import app.gym_env as gym_env
from app.gym_env import CLIPS, DeepMimicGymEnv, gym_id


@pytest.fixture(scope="module")
def walk():
    env = gymnasium.make("DeepMimic/Walk-v0")
    yield env
    env.close()


def test_ids_spaces_and_checker(walk):
    assert [gym_id(c) for c in ("walk", "dance_a", "getup_facedown")] == [
        "DeepMimic/Walk-v0", "DeepMimic/DanceA-v0", "DeepMimic/GetupFacedown-v0"]
    assert all(gym_id(c) in gymnasium.registry for c in CLIPS) and len(CLIPS) == 15
    assert walk.observation_space.shape == (227,) and walk.action_space.shape == (28,)
    check_env(walk.unwrapped, skip_render_check=True)


def rollout(env, seed, steps=40):
    obs, _ = env.reset(seed=seed)
    rng = np.random.default_rng(0)
    observations, rewards, ends = [obs], [], []
    for _ in range(steps):
        action = env.action_space.low + (env.action_space.high - env.action_space.low) * rng.uniform(
            0.45, 0.55, env.action_space.shape)
        obs, reward, terminated, truncated, info = env.step(action.astype(np.float32))
        observations.append(obs)
        rewards.append(reward)
        ends.append((terminated, truncated))
        assert set(info["reward_terms"]) == {"pose", "vel", "end_eff", "root", "com"}
        if terminated or truncated:
            obs, _ = env.reset()
            observations.append(obs)
    return np.array(observations), np.array(rewards), ends


def test_seeded_rollouts_repeat_and_falls_terminate(walk):
    a = rollout(walk, seed=5)
    b = rollout(walk, seed=5)
    np.testing.assert_array_equal(a[0], b[0])
    np.testing.assert_array_equal(a[1], b[1])
    assert a[2] == b[2]
    c = rollout(walk, seed=6)
    assert not np.array_equal(a[0][0], c[0][0])        # another reset state
    assert np.all((a[1] >= 0) & (a[1] <= 1))
    # mid-range actions are not a walking policy: the character falls (terminated, not truncated)
    assert (True, False) in a[2]


def test_rgb_array_frame():
    env = DeepMimicGymEnv(gym_env.ARGS_DIR / "train_humanoid3d_walk_args.txt", render_mode="rgb_array")
    try:
        env.reset(seed=1)
        frame = env.render()
        assert frame.shape == (450, 800, 3) and frame.dtype == np.uint8
        assert frame.std() > 5       # not a blank image
    finally:
        env.close()
