"""Shared by the GAIL tests: expert demonstrations of the toy point mass and a GAIL agent file for it."""
import json

import numpy as np

from learning.demos import DemoDataset, save_demos
from tests.toy_env import CONTROL_DT, TOY_AGENT, PointMassEnv

GAIL_KEYS = {"AgentType": "GAIL", "DiscHiddenLayers": 2, "DiscHiddenUnits": 32, "DiscStepsize": 0.01,
             "DiscStepsPerIter": 10, "DiscEntropyCoef": 0.001, "TestEpisodes": 0, "OutputIters": 2}
TRPO_KEYS = {"PolicyStep": "TRPO", "TRPOFVPSubsample": 0.5, "TRPOTimeHorizon": 30,
             "ExpParamsEnd": {"Rate": 1, "Noise": 0.4}}


def expert_action(state):
    """Steers the point mass to its target: state [target - pos, vel]."""
    return np.clip(3.0 * state[:2] - 0.75 * state[2:], -1, 1)


def record_toy_demos(path, episodes=20, seed=5):
    """Rolls the expert out in the point mass (one decision per control step) and saves the demos."""
    env = PointMassEnv(seed=seed)
    states, actions, times, starts = [], [], [], []
    for _ in range(episodes):
        env.reset()
        starts.append(len(states))
        while not env.is_episode_end():
            s = env.record_state(0)
            a = expert_action(s)
            states.append(s)
            actions.append(a)
            times.append(env.get_time())
            env.set_action(0, a)
            for _ in range(env.num_substeps):
                env.update(CONTROL_DT / env.num_substeps)
    data = DemoDataset(np.array(states, np.float32), np.array(actions), np.array(times),
                       np.array(starts), np.zeros(len(starts), np.int64), {"scene": "point_mass"})
    save_demos(path, data)
    return path


def write_gail_agent_file(path, **overrides):
    """The toy agent file made GAIL (PPO step unless overridden); None drops a key."""
    data = {**TOY_AGENT, **GAIL_KEYS, **overrides}
    path.write_text(json.dumps({k: v for k, v in data.items() if v is not None}, indent=1))
    return path
