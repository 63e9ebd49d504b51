"""Headless evaluation: N test-mode episodes (mean actions, no training) of one agent.

Per episode: its length in seconds, whether it ended in a fall (Terminate.Fail, which in the
imitate scene is a fall or the end of a non-looping clip), the mean reward per decision, and the
mean of each reward term the env reports (Env.get_reward_terms: the terms of its last
calc_reward; none for envs whose reward has no named terms).
Invalid episodes (exploding velocities) are discarded and not counted.
"""
import json
import os
from dataclasses import asdict, dataclass, field

import numpy as np

from env.env import Terminate
from learning.rl_world import WorldEvent, step_world

FRAME_TIME = 1 / 60


@dataclass
class EpisodeStats:
    length_s: float
    fell: bool
    mean_reward: float
    num_decisions: int
    reward_terms: dict = field(default_factory=dict)


def evaluate(world, num_episodes, agent_id=0, max_episode_time=None):
    """Runs num_episodes test episodes and returns their EpisodeStats; training is switched off
    meanwhile and restored afterwards. max_episode_time (s), if given, cuts longer episodes."""
    agent = world.agents[agent_id]
    env = world.env
    was_training = world.enable_training
    world.set_enable_training(False)
    world.reset()
    timestep = FRAME_TIME / env.get_num_update_substeps()
    stats = []
    terms = []
    elapsed = 0.0

    def record_terms():
        if len(agent.path.rewards) > len(terms):
            terms.append(env.get_reward_terms(agent_id))

    def finish(world):
        record_terms()
        rewards = agent.path.rewards
        names = terms[0].keys() if terms else ()
        stats.append(EpisodeStats(
            length_s=elapsed, fell=agent.path.terminate == Terminate.Fail,
            mean_reward=float(np.mean(rewards)) if rewards else 0.0, num_decisions=len(rewards),
            reward_terms={k: float(np.mean([t[k] for t in terms])) for k in names}))

    while len(stats) < num_episodes:
        elapsed += timestep
        event = step_world(world, timestep, on_episode_end=finish)
        if event == WorldEvent.NONE:
            record_terms()
            if max_episode_time is not None and elapsed >= max_episode_time - 1e-9:
                world.end_episode()
                finish(world)
                world.reset()
                event = WorldEvent.EPISODE_END
        if event != WorldEvent.NONE:
            elapsed = 0.0
            terms.clear()
    world.set_enable_training(was_training)
    world.reset()
    return stats


def summarize(stats):
    """Means over episodes (and the number of falls)."""
    return {
        "episodes": len(stats),
        "falls": int(sum(s.fell for s in stats)),
        "mean_length_s": float(np.mean([s.length_s for s in stats])),
        "mean_reward": float(np.mean([s.mean_reward for s in stats])),
    }


def format_episode(index, s):
    terms = " ".join(f"{k} {v:.3f}" for k, v in s.reward_terms.items())
    return (f"episode {index}: {s.length_s:.2f} s, {'fell' if s.fell else 'no fall'}, "
            f"mean reward {s.mean_reward:.4f}" + (f" ({terms})" if terms else ""))


def write_stats(path, stats):
    """The episodes and their summary as JSON, written atomically."""
    data = {"episodes": [asdict(s) for s in stats], "summary": summarize(stats)}
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    tmp = f"{path}.{os.getpid()}.tmp"
    with open(tmp, "w") as f:
        json.dump(data, f, indent=1)
    os.replace(tmp, path)
