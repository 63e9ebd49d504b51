"""Where in its clip a skill fails: one test episode from each of several reset times.

    nice -n 10 .venv/bin/python -m tests.bench.start_errors --arg_file args/run_humanoid3d_punch_args.txt
        [--starts 16 | --times 0.72 0.81] [--episode_time 20] [--phase_bins 11] [--json docs/bench/....json]
        [DeepMimic args ...]

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
reference's orientation costs, and body_shape_err what its pose does.

--phase_bins N: the same decisions, all episodes together, grouped by the reference's clip time into
N equal parts of the clip: per part the decisions, body_pos_err, body_shape_err, and the turn that
lays the simulated body onto the reference's (R above): its angle, and its yaw, the angle about the
vertical of R's heading (DeepMimic's heading: R's x axis on the ground plane, positive counter-
clockwise seen from above): positive where the reference is turned further left than the body, as
when the body lags a left turn. Where in its cycle a skill loses its tracking, and whether a turn of
the whole body is what it loses. The JSON is written atomically.
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


def best_rotation(sim_pos, ref_pos):
    """R minimising the sum over bodies of |R (p_b - p_0) - (p'_b - p'_0)|^2 (Kabsch: the SVD of
    the offsets' cross-covariance, its sign fixed so that R is a rotation, not a reflection)."""
    a, b = sim_pos - sim_pos[0], ref_pos - ref_pos[0]
    u, _, vt = np.linalg.svd(a.T @ b)
    d = np.sign(np.linalg.det(vt.T @ u.T))
    return vt.T @ np.diag([1.0, 1.0, d]) @ u.T


def body_shape_err(sim_pos, ref_pos, rot=None):
    """Mean over bodies of |R (p_b - p_0) - (p'_b - p'_0)|, R = best_rotation (or `rot`). R = I is
    among the candidates, so the root mean square of the distances is at most the unrotated one's;
    0 for a pose turned as a whole."""
    rot = best_rotation(sim_pos, ref_pos) if rot is None else rot
    a, b = sim_pos - sim_pos[0], ref_pos - ref_pos[0]
    return float(np.mean(np.linalg.norm(a @ rot.T - b, axis=1)))


def turn_of(rot):
    """(angle, yaw) of a rotation matrix: its angle, and the heading of its x axis (y up; positive
    counter-clockwise seen from above, DeepMimic's heading)."""
    angle = float(np.arccos(np.clip((np.trace(rot) - 1.0) / 2.0, -1.0, 1.0)))
    x = rot[:, 0]
    return angle, float(np.arctan2(-x[2], x[0]))


class ShapeMetrics(EpisodeMetrics):
    """The episode's imitation metrics, and body_shape_err among them; each decision's clip time,
    body_pos_err, body_shape_err and turn (turn_of) appended to `decisions` when given."""

    def __init__(self, env, agent_id, decisions=None):
        self.decisions = decisions
        super().__init__(env, agent_id)

    def reset(self):
        super().reset()
        self.shape_errs = []

    def add_decision(self):
        tracking = super().add_decision()      # poses the reference for this instant (calc_tracking_error)
        sim, ref = self.env.sim_body_states().joint_pos, self.env.ref_body_states().joint_pos
        rot = best_rotation(sim, ref)
        self.shape_errs.append(body_shape_err(sim, ref, rot))
        if self.decisions is not None:
            t, motion = self.env.kin_char.time, self.env.motion
            clip_time = t % motion.duration if motion.loop == "wrap" else min(t, motion.duration)
            self.decisions.append((clip_time, tracking["body_pos_err"], self.shape_errs[-1], *turn_of(rot)))

    def means(self):
        tracking, style = super().means()
        return {**tracking, "body_shape_err": float(np.mean(self.shape_errs))}, style


def play_from(world, start, episode_time, decisions=None):
    """One test episode of agent 0 whose reference starts at `start` s: its EpisodeStats (its
    decisions appended to `decisions`: ShapeMetrics)."""
    env = world.env
    env.fixed_start_time = start
    try:
        recorder = EpisodeRecorder(world, 0, episode_time, SUCCESS_BODY_POS_ERR)
        recorder.metrics = ShapeMetrics(env, 0, decisions)
        return run_episodes(world, 1, recorder)[0]
    finally:
        env.fixed_start_time = None


def row(env, start, stats):
    """The JSON row of one start time."""
    return {"start_s": round(start, 4), "length_s": stats.length_s, "fell": stats.fell,
            "clip_ended": stats.clip_ended, "success": stats.success, "mean_reward": stats.mean_reward,
            **stats.tracking,
            "ref_root_ang_speed": float(np.linalg.norm(env.motion.calc_vel(start)[3:6]))}


def phase_rows(decisions, duration, bins):
    """The decisions (clip time, body_pos_err, body_shape_err, turn angle, turn yaw) grouped into
    `bins` equal parts of the clip: per part its span, decisions and mean errors (None where no
    decision fell in it)."""
    d = np.asarray(decisions, dtype=float).reshape(-1, 5)
    part = np.minimum((d[:, 0] / duration * bins).astype(int), bins - 1)
    rows = []
    for k in range(bins):
        m = d[part == k]
        means = m[:, 1:].mean(axis=0).tolist() if len(m) else [None] * 4
        rows.append({"clip_from_s": k * duration / bins, "clip_to_s": (k + 1) * duration / bins, "decisions": len(m),
                     **dict(zip(("body_pos_err", "body_shape_err", "turn_angle", "turn_yaw"), means))})
    return rows


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--arg_file", required=True)
    group = p.add_mutually_exclusive_group()
    group.add_argument("--starts", type=int, default=16, help="start times spread over the clip (default 16)")
    group.add_argument("--times", type=float, nargs="+", help="start times, s")
    p.add_argument("--episode_time", type=float, default=20.0, help="episodes are cut there, s (default 20)")
    p.add_argument("--phase_bins", type=int, default=0,
                   help="also the errors by the reference's clip time, in this many parts of the clip")
    p.add_argument("--json")
    args, world_args = p.parse_known_args(argv)
    if args.starts < 1:
        p.error(f"--starts {args.starts}: must be at least 1")
    if args.phase_bins < 0:
        p.error(f"--phase_bins {args.phase_bins}: must be at least 0")
    world = load_world(["--arg_file", args.arg_file, *world_args, "--train_agents", "false"], enable_draw=False)
    env = world.env
    if not hasattr(env, "fixed_start_time"):
        raise SystemExit(f"start_errors: {args.arg_file}: its scene has no reference clip to start in")
    rows, decisions = [], []
    for start in start_times(env.motion.duration, args.starts, args.times):
        r = row(env, start, play_from(world, start, args.episode_time, decisions))
        rows.append(r)
        ending = "fell" if r["fell"] else "clip ended" if r["clip_ended"] else "no fall"
        print(f"start {start:6.3f} s: {r['length_s']:5.2f} s, {ending}, body pos {100 * r['body_pos_err']:5.1f} cm "
              f"(orientation out {100 * r['body_shape_err']:4.1f} cm), "
              f"root rot {r['root_rot_err']:.3f} rad, reward {r['mean_reward']:.3f}; "
              f"reference root spin at the start {r['ref_root_ang_speed']:.2f} rad/s", flush=True)
    phases = phase_rows(decisions, env.motion.duration, args.phase_bins) if args.phase_bins else []
    for ph in phases:
        if ph["decisions"]:
            print(f"clip {ph['clip_from_s']:5.2f}-{ph['clip_to_s']:5.2f} s: {ph['decisions']:5d} decisions, "
                  f"body pos {100 * ph['body_pos_err']:5.1f} cm (orientation out {100 * ph['body_shape_err']:4.1f} cm), "
                  f"turn {ph['turn_angle']:.3f} rad, yaw {ph['turn_yaw']:+.3f} rad", flush=True)
    if args.json:
        write_json(args.json, {"arg_file": args.arg_file, "world_args": world_args, "episode_time": args.episode_time,
                               "clip_duration_s": env.motion.duration, "starts": rows,
                               **({"phase_bins": phases} if phases else {})})
    world.shutdown()


if __name__ == "__main__":
    sys.exit(main())
