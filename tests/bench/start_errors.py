"""Where in its clip a skill fails: one test episode from each of several reset times.

    nice -n 10 .venv/bin/python -m tests.bench.start_errors --arg_file args/run_humanoid3d_punch_args.txt
        [--starts 16 | --times 0.72 0.81] [--episode_time 20] [--json docs/bench/....json] [DeepMimic args ...]

The imitate scene draws each reset's reference time uniformly over the clip (reference state
initialisation), so an evaluation's few episodes sample a few start times; a skill that fails from
one part of the clip fails there in some evaluations and not in others. This plays one test
episode (app/evaluate's, cut at --episode_time) from each start time t: --starts N spreads N over
the clip (t = k * duration / N), --times gives them. Any other arguments go to the world as
DeepMimic.py's do (e.g. --model_files CKPT, --ref_vel_smoothing 2); the arg file's checkpoint is
played otherwise.

Per start time: the episode's length, whether it fell or reached a non-looping clip's end, its mean
imitation metrics (env/tracking_error.py) and success, and the reference's root angular speed at t
(|w| of the clip's velocity there: what the reset gives the character). Beside them body_shape_err,
the body position error with the whole body's orientation taken out: per decision,

    body_shape_err = mean over bodies of |R (p_b - p_0) - (p'_b - p'_0)|

with R the rotation that best lays the simulated body offsets onto the reference's (least squares,
Kabsch), so that body_pos_err - body_shape_err is what a body turned or leaning off the
reference's orientation costs, and body_shape_err what its pose does. The JSON is written
atomically.
"""
import argparse
import sys

import numpy as np

from app.build import load_world
from app.evaluate import EpisodeRecorder, run_episodes
from env.tracking_error import SUCCESS_BODY_POS_ERR
from learning.test_metrics import EpisodeMetrics
from util.atomic_write import write_json


def start_times(duration, starts=None, times=None):
    """The reset times: `times` as given (each within [0, duration]), else `starts` spread evenly."""
    if times:
        bad = [t for t in times if not 0.0 <= t <= duration]
        if bad:
            raise SystemExit(f"start_errors: --times {bad[0]}: outside the clip (0 to {duration:.3f} s)")
        return [float(t) for t in times]
    return [k * duration / starts for k in range(starts)]


def body_shape_err(sim_pos, ref_pos):
    """Mean over bodies of |R (p_b - p_0) - (p'_b - p'_0)|, R the rotation minimising the sum of
    the squared distances (Kabsch: the SVD of the offsets' cross-covariance, its sign fixed so that
    R is a rotation, not a reflection). R = I is among the candidates, so the root mean square of
    the distances is at most the unrotated one's; 0 for a pose turned as a whole."""
    a, b = sim_pos - sim_pos[0], ref_pos - ref_pos[0]
    u, _, vt = np.linalg.svd(a.T @ b)
    d = np.sign(np.linalg.det(vt.T @ u.T))
    rot = vt.T @ np.diag([1.0, 1.0, d]) @ u.T
    return float(np.mean(np.linalg.norm(a @ rot.T - b, axis=1)))


class ShapeMetrics(EpisodeMetrics):
    """The episode's imitation metrics, and body_shape_err among them."""

    def reset(self):
        super().reset()
        self.shape_errs = []

    def add_decision(self):
        super().add_decision()      # poses the reference for this instant (calc_tracking_error)
        self.shape_errs.append(body_shape_err(self.env.sim_body_states().joint_pos,
                                              self.env.ref_body_states().joint_pos))

    def means(self):
        tracking, style = super().means()
        return {**tracking, "body_shape_err": float(np.mean(self.shape_errs))}, style


def play_from(world, start, episode_time):
    """One test episode of agent 0 whose reference starts at `start` s: its EpisodeStats."""
    env = world.env
    env.fixed_start_time = start
    try:
        recorder = EpisodeRecorder(world, 0, episode_time, SUCCESS_BODY_POS_ERR)
        recorder.metrics = ShapeMetrics(env, 0)
        return run_episodes(world, 1, recorder)[0]
    finally:
        env.fixed_start_time = None


def row(env, start, stats):
    """The JSON row of one start time."""
    return {"start_s": round(start, 4), "length_s": stats.length_s, "fell": stats.fell,
            "clip_ended": stats.clip_ended, "success": stats.success, "mean_reward": stats.mean_reward,
            **stats.tracking,
            "ref_root_ang_speed": float(np.linalg.norm(env.motion.calc_vel(start)[3:6]))}


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--arg_file", required=True)
    group = p.add_mutually_exclusive_group()
    group.add_argument("--starts", type=int, default=16, help="start times spread over the clip (default 16)")
    group.add_argument("--times", type=float, nargs="+", help="start times, s")
    p.add_argument("--episode_time", type=float, default=20.0, help="episodes are cut there, s (default 20)")
    p.add_argument("--json")
    args, world_args = p.parse_known_args(argv)
    if args.starts < 1:
        p.error(f"--starts {args.starts}: must be at least 1")
    world = load_world(["--arg_file", args.arg_file, *world_args, "--train_agents", "false"], enable_draw=False)
    env = world.env
    if not hasattr(env, "fixed_start_time"):
        raise SystemExit(f"start_errors: {args.arg_file}: its scene has no reference clip to start in")
    rows = []
    for start in start_times(env.motion.duration, args.starts, args.times):
        r = row(env, start, play_from(world, start, args.episode_time))
        rows.append(r)
        ending = "fell" if r["fell"] else "clip ended" if r["clip_ended"] else "no fall"
        print(f"start {start:6.3f} s: {r['length_s']:5.2f} s, {ending}, body pos {100 * r['body_pos_err']:5.1f} cm "
              f"(orientation out {100 * r['body_shape_err']:4.1f} cm), "
              f"root rot {r['root_rot_err']:.3f} rad, reward {r['mean_reward']:.3f}; "
              f"reference root spin at the start {r['ref_root_ang_speed']:.2f} rad/s", flush=True)
    if args.json:
        write_json(args.json, {"arg_file": args.arg_file, "world_args": world_args, "episode_time": args.episode_time,
                               "clip_duration_s": env.motion.duration, "starts": rows})
    world.shutdown()


if __name__ == "__main__":
    sys.exit(main())
