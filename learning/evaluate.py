"""Headless evaluation: N test-mode episodes (mean actions, no training) of one agent.

Per episode: its length in seconds, whether it ended in a fall (Terminate.Fail, which in the
imitate scene is a fall or the end of a non-looping clip), the mean reward per decision, the
mean of each reward term the env reports (Env.get_reward_terms: the terms of its last
calc_reward; none for envs whose reward has no named terms) and, for envs that track a reference,
the mean imitation metrics per decision (Env.calc_tracking_error, env/tracking_error.py) and
whether the episode is a success (no fall, mean body position error at most the threshold).
Invalid episodes (exploding velocities) are discarded and not counted.
"""
from dataclasses import asdict, dataclass, field

import numpy as np

from env.env import Terminate
from env.tracking_error import SUCCESS_BODY_POS_ERR, TRACKING_ERRORS, EpisodeTracking, is_success
from learning.rl_world import WorldEvent, step_world
from util.atomic_write import write_json

FRAME_TIME = 1 / 60


@dataclass
class EpisodeStats:
    length_s: float
    fell: bool
    mean_reward: float
    num_decisions: int
    reward_terms: dict = field(default_factory=dict)
    tracking: dict = field(default_factory=dict)      # mean imitation metrics (empty: no reference)
    success: bool = None                              # None: no reference


def evaluate(world, num_episodes, agent_id=0, max_episode_time=None, success_body_pos_err=SUCCESS_BODY_POS_ERR):
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
    tracked = env.calc_tracking_error(agent_id) is not None
    tracking = EpisodeTracking()
    elapsed = 0.0

    def record_terms():
        if len(agent.path.rewards) > len(terms):
            terms.append(env.get_reward_terms(agent_id))
            if tracked:
                tracking.add(env.calc_tracking_error(agent_id))

    def finish(world):
        nonlocal tracking
        record_terms()
        rewards = agent.path.rewards
        names = terms[0].keys() if terms else ()
        fell = agent.path.terminate == Terminate.Fail
        means = tracking.means() if tracked else {}
        stats.append(EpisodeStats(
            length_s=elapsed, fell=fell,
            mean_reward=float(np.mean(rewards)) if rewards else 0.0, num_decisions=len(rewards),
            reward_terms={k: float(np.mean([t[k] for t in terms])) for k in names}, tracking=means,
            success=is_success(fell, means["body_pos_err"], success_body_pos_err) if tracked else None))
        tracking = EpisodeTracking()

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
    """Means over episodes (and the number of falls; with a reference, of successes and the mean
    of each imitation metric)."""
    summary = {
        "episodes": len(stats),
        "falls": int(sum(s.fell for s in stats)),
        "mean_length_s": float(np.mean([s.length_s for s in stats])),
        "mean_reward": float(np.mean([s.mean_reward for s in stats])),
    }
    if stats and stats[0].tracking:
        summary["successes"] = int(sum(s.success for s in stats))
        summary.update({name: float(np.mean([s.tracking[name] for s in stats])) for name in TRACKING_ERRORS})
    return summary


def format_episode(index, s):
    terms = " ".join(f"{k} {v:.3f}" for k, v in s.reward_terms.items())
    line = (f"episode {index}: {s.length_s:.2f} s, {'fell' if s.fell else 'no fall'}, "
            f"mean reward {s.mean_reward:.4f}" + (f" ({terms})" if terms else ""))
    if s.tracking:
        t = s.tracking
        line += (f"; {'success' if s.success else 'no success'}: body pos {100 * t['body_pos_err']:.1f} cm, "
                 f"root pos {100 * t['root_pos_err']:.1f} cm, body rot {t['body_rot_err']:.3f} rad, "
                 f"root rot {t['root_rot_err']:.3f} rad, joint vel {t['joint_vel_err']:.3f} rad/s, "
                 f"root vel {t['root_vel_err']:.3f} m/s, root ang vel {t['root_ang_vel_err']:.3f} rad/s")
    return line


def write_stats(path, stats):
    """The episodes and their summary as JSON, written atomically."""
    write_json(path, {"episodes": [asdict(s) for s in stats], "summary": summarize(stats)})
