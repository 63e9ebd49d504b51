"""Headless evaluation: N test-mode episodes (mean actions, no training) of one agent.

Per episode: its length in seconds, whether it ended in a fall (Terminate.Fail, but not the end of
a non-looping clip, which the imitate scene ends with Fail as DeepMimic does: that episode has
`clip_ended` instead, Env.motion_over), the mean reward per decision, the
mean of each reward term the env reports (Env.get_reward_terms: the terms of its last
calc_reward; none for envs whose reward has no named terms) and, for envs that track a reference,
the mean imitation metrics per decision (Env.calc_tracking_error, env/tracking_error.py) and
whether the episode is a success (no fall, mean body position error at most the threshold); for
envs that judge style (the AMP scenes), the mean style metrics per decision (Env.calc_style_error,
env/style_error.py: the style error, the root's horizontal speed; the heading as a circular
mean). The episode's return (the sum of its rewards)
is reported too: in imitate_amp's test episodes it is the time-warping cost (env/dtw.py).
Invalid episodes (exploding velocities) are discarded and not counted.
"""
from dataclasses import asdict, dataclass, field

import numpy as np

from app.rollout import WorldHooks, update_world
from env.env import FRAME_TIME, Terminate
from env.style_error import STYLE_ERRORS, circular_mean
from env.tracking_error import SUCCESS_BODY_POS_ERR, TRACKING_ERRORS, is_success
from learning.test_metrics import EpisodeMetrics
from util.atomic_write import write_json


@dataclass
class EpisodeStats:
    length_s: float
    fell: bool
    mean_reward: float
    num_decisions: int
    reward_terms: dict = field(default_factory=dict)
    tracking: dict = field(default_factory=dict)      # mean imitation metrics (empty: no reference)
    success: bool = None                              # None: no reference
    style: dict = field(default_factory=dict)         # mean style metrics (empty: no style judged)
    episode_return: float = 0.0                       # the sum of the rewards
    clip_ended: bool = False                          # ended at a non-looping clip's end, not a fall


class EpisodeRecorder(WorldHooks):
    """The rollout's hooks: after every update, the reward terms, imitation and style metrics of a
    decision just taken (one update after it) and the cut at max_episode_time; at each episode's
    end its EpisodeStats."""

    each_update = True

    def __init__(self, world, agent_id, max_episode_time, success_body_pos_err):
        super().__init__(world)
        self.env, self.agent, self.agent_id = world.env, world.agents[agent_id], agent_id
        self.max_episode_time, self.success_body_pos_err = max_episode_time, success_body_pos_err
        self.metrics = EpisodeMetrics(self.env, agent_id)
        self.stats = []
        self.terms = []             # the reward terms of each decision of the episode
        self.elapsed = 0.0          # the episode's time, summed over the updates

    def before_update(self, timestep):
        self.elapsed += timestep

    def after_update(self):
        self._record_terms()
        return self.max_episode_time is not None and self.elapsed >= self.max_episode_time - 1e-9

    def _record_terms(self):
        if len(self.agent.path.rewards) > len(self.terms):
            self.terms.append(self.env.get_reward_terms(self.agent_id))
            self.metrics.add_decision()

    def on_episode_end(self):
        self._record_terms()
        path, terms = self.agent.path, self.terms
        rewards = path.rewards
        names = terms[0].keys() if terms else ()
        clip_ended = path.terminate == Terminate.Fail and self.env.motion_over()
        fell = path.terminate == Terminate.Fail and not clip_ended
        means, style = self.metrics.means()
        self.stats.append(EpisodeStats(
            length_s=self.elapsed, fell=fell,
            mean_reward=float(np.mean(rewards)) if rewards else 0.0, num_decisions=len(rewards),
            reward_terms={k: float(np.mean([t[k] for t in terms])) for k in names}, tracking=means,
            success=is_success(fell, means["body_pos_err"], self.success_body_pos_err) if means else None,
            style=style, episode_return=float(np.sum(rewards)), clip_ended=clip_ended))
        self._next_episode()

    def on_invalid_episode(self):
        self._next_episode()

    def _next_episode(self):
        self.elapsed = 0.0
        self.terms.clear()
        self.metrics.reset()


def evaluate(world, num_episodes, agent_id=0, max_episode_time=None, success_body_pos_err=SUCCESS_BODY_POS_ERR):
    """Runs num_episodes test episodes and returns their EpisodeStats; training is switched off
    meanwhile and restored afterwards. max_episode_time (s), if given, cuts longer episodes."""
    return run_episodes(world, num_episodes, EpisodeRecorder(world, agent_id, max_episode_time, success_body_pos_err))


def run_episodes(world, num_episodes, recorder):
    """evaluate's loop with any EpisodeRecorder: num_episodes test episodes from a fresh reset,
    training off meanwhile; the recorder's stats."""
    was_training = world.enable_training
    world.set_enable_training(False)
    world.reset()
    while len(recorder.stats) < num_episodes:
        update_world(world, FRAME_TIME, recorder)
    world.set_enable_training(was_training)
    world.reset()
    return recorder.stats


def summarize(stats):
    """Means over episodes (and the number of falls; with a reference, of successes and the mean
    of each imitation metric; with style judged, the mean of each style metric, the heading's
    circular)."""
    summary = {
        "episodes": len(stats),
        "falls": int(sum(s.fell for s in stats)),
        "mean_length_s": float(np.mean([s.length_s for s in stats])),
        "mean_reward": float(np.mean([s.mean_reward for s in stats])),
        "mean_return": float(np.mean([s.episode_return for s in stats])),
    }
    if stats and stats[0].tracking:
        summary["successes"] = int(sum(s.success for s in stats))
        summary.update({name: float(np.mean([s.tracking[name] for s in stats])) for name in TRACKING_ERRORS})
    if stats and stats[0].style:
        summary.update(summarize_style([s.style for s in stats]))
    return summary


def summarize_style(styles):
    """Means over episodes of their style metrics (dicts), the heading's circular."""
    summary = {name: float(np.mean([style[name] for style in styles])) for name in STYLE_ERRORS}
    summary["heading"] = circular_mean([style["heading"] for style in styles])
    return summary


def format_episode(index, s):
    terms = " ".join(f"{k} {v:.3f}" for k, v in s.reward_terms.items())
    ending = "fell" if s.fell else "clip ended" if s.clip_ended else "no fall"
    line = (f"episode {index}: {s.length_s:.2f} s, {ending}, "
            f"mean reward {s.mean_reward:.4f}" + (f" ({terms})" if terms else "") + f", return {s.episode_return:.4f}")
    if s.tracking:
        t = s.tracking
        line += (f"; {'success' if s.success else 'no success'}: body pos {100 * t['body_pos_err']:.1f} cm, "
                 f"root pos {100 * t['root_pos_err']:.1f} cm, body rot {t['body_rot_err']:.3f} rad, "
                 f"root rot {t['root_rot_err']:.3f} rad, joint vel {t['joint_vel_err']:.3f} rad/s, "
                 f"root vel {t['root_vel_err']:.3f} m/s, root ang vel {t['root_ang_vel_err']:.3f} rad/s")
    if s.style:
        t = s.style
        line += f"; style {100 * t['style_err']:.1f} cm, speed {t['root_speed']:.2f} m/s, heading {t['heading']:.2f} rad"
    return line


def write_stats(path, stats):
    """The episodes and their summary as JSON, written atomically."""
    write_json(path, {"episodes": [asdict(s) for s in stats], "summary": summarize(stats)})
