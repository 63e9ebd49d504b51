"""Style error calibration: the style metrics (env/style_error.py) of reference behaviours against
the walk clip, measured by the code that reports them in evaluation and test phases.

    nice -n 10 .venv/bin/python -m tests.bench.style_error_calibration [--episodes 8]
        [--episode_time 20] [--seed 1000] [--json docs/bench/style_error_calibration.json]

References (each over --episodes test episodes of at most --episode_time s, seed --seed):
  clip_playback       the walk clip itself: the simulated character of the AMP walk scene set to
                      the clip's pose and velocity at every decision (30 Hz, from a random clip
                      time), no physics; 0 at keyframes by construction, what remains is the
                      interpolation between keyframes
  walk_frame_at_rest  standing still in a pose of the clip: the walk's double-support keyframe
                      (STANDING_FRAME) held at rest, no physics (what the pose term cannot see)
  upright_at_rest     standing still upright: the character's default pose (every joint rotation
                      the identity) held at rest, no physics
  tracking_walk       the walk this project trained to track the clip
                      (args/run_humanoid3d_walk_args.txt with --enable_style_error true)
  hold_first_frame    the AMP walk scene (args/train_amp_humanoid3d_walk_args.txt) from its reset
                      state with every action the PD targets of the clip's first frame (zero
                      offsets from that frame): open-loop PD holding a pose, which falls
  untrained_amp       the same scene's untrained AMP policy (mean actions): where AMP training starts
Per reference: app.evaluate's summary (falls, lengths, returns, style metrics), the style error
per episode and, in the AMP scene, DeepMimic's time-warping cost (its test return, env/dtw.py).
Also the cost of one decision's style metrics (the nearest-frame search) for the walk clip and
the largest shipped dataset. The JSON is written atomically.
"""
import argparse
import sys
import tempfile
import time
from dataclasses import asdict
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
if __package__ in (None, ""):
    sys.path.insert(0, str(ROOT))

from app.build import build_world  # noqa: E402
from app.evaluate import evaluate, summarize, summarize_style  # noqa: E402
from env.deepmimic_env import DeepMimicEnv  # noqa: E402
from env.style_error import EpisodeStyle  # noqa: E402
from util.arg_parser import load_args  # noqa: E402
from util.atomic_write import write_json  # noqa: E402

AMP_WALK_ARGS = "args/train_amp_humanoid3d_walk_args.txt"
TRACKING_WALK_ARGS = "args/run_humanoid3d_walk_args.txt"
LARGEST_DATASET_ARGS = "args/train_amp_heading_getup_humanoid3d_locomotion_getup_args.txt"
DECISION_TIME = 1.0 / 30.0
STANDING_FRAME = 17     # the walk's double support: both ankles 8 cm above the ground, 0.6 m apart


def kinematic(episodes, episode_time, seed, pose_vel):
    """Style metrics of the AMP walk scene's simulated character set, at every decision (30 Hz)
    of each episode, to pose_vel(scene, start, t) = (pose, vel), start a random clip time: no
    physics, no falls."""
    env = DeepMimicEnv(load_args(["--arg_file", AMP_WALK_ARGS, "--rand_seed", str(seed)]))
    try:
        rng = np.random.default_rng(seed)
        per_episode = []
        for _ in range(episodes):
            start, style = rng.uniform(0.0, env.motion.duration), EpisodeStyle()
            for t in start + np.arange(1, int(round(episode_time / DECISION_TIME)) + 1) * DECISION_TIME:
                env.sim_char.set_state(*pose_vel(env, t))
                env._touch()
                style.add(env.calc_style_error(0))
            per_episode.append(style.means())
    finally:
        env.shutdown()
    return {"args": AMP_WALK_ARGS, "summary": {"episodes": episodes, "falls": 0, **summarize_style(per_episode)},
            "style_err_per_episode": [e["style_err"] for e in per_episode], "dtw_cost": None}


def clip_at(scene, t):
    return scene.motion.calc_frame(t), scene.motion.calc_vel(t)


def walk_frame_at_rest(scene, t):
    return scene.motion.frames[STANDING_FRAME], np.zeros(scene.char_desc.dof_size)


def upright_at_rest(scene, t):
    pose = scene.kin_char.default_pose()
    pose[1] = scene.motion.frames[0, 1]
    return pose, np.zeros(scene.char_desc.dof_size)


def hold_first_frame(world):
    """Agent 0 acts with the PD targets of the clip's first frame at every decision, from the
    scene's own reset state (instance attribute replaced, for this measurement only)."""
    scene, agent = world.env, world.agents[0]
    hold = scene.ctrl.action_layout.from_targets(*scene._ref_joint_targets(scene.motion.frames[0]))
    agent._decide_action = lambda s, g: (hold.copy(), agent.model.logp_at_mean_np)


def evaluate_policy(arg_file, extra, episodes, episode_time, seed, scratch, prepare=None):
    world = build_world(load_args(["--arg_file", arg_file, "--rand_seed", str(seed), "--output_path", scratch,
                                   "--int_output_path", f"{scratch}/intermediate", *extra]))
    try:
        if prepare:
            prepare(world)
        dtw = world.env.name == "imitate_amp" and world.env.time_warper is not None
        start = time.perf_counter()
        stats = evaluate(world, episodes, max_episode_time=episode_time)
        wall = time.perf_counter() - start
    finally:
        world.shutdown()
    summary = summarize(stats)
    return {"args": " ".join([arg_file, *extra]), "summary": summary,
            "style_err_per_episode": [s.style["style_err"] for s in stats],
            "lengths_s": [s.length_s for s in stats], "falls_per_episode": [s.fell for s in stats],
            "dtw_cost": summary["mean_return"] if dtw else None,
            "dtw_cost_per_episode": [s.episode_return for s in stats] if dtw else None,
            "episodes_detail": [asdict(s) for s in stats], "eval_wall_s": wall}


def decision_cost(arg_file, seed, calls=2000):
    """(keyframes in the reference, microseconds per call of the style metrics) in a reset scene."""
    env = DeepMimicEnv(load_args(["--arg_file", arg_file, "--rand_seed", str(seed)]))
    try:
        env.calc_style_error(0)
        ref, joint_pos = env._style_ref, env.sim_body_states().joint_pos
        pose, vel = env.sim_pose_vel()
        start = time.perf_counter()
        for _ in range(calls):
            ref.errors(joint_pos, pose, vel)
        return ref.num_frames, 1e6 * (time.perf_counter() - start) / calls
    finally:
        env.shutdown()


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--episodes", type=int, default=8)
    p.add_argument("--episode_time", type=float, default=20.0)
    p.add_argument("--seed", type=int, default=1000)
    p.add_argument("--json", default="docs/bench/style_error_calibration.json")
    p.add_argument("--only", nargs="*", help="references to measure (default: all)")
    args = p.parse_args(argv)
    n, t, seed = args.episodes, args.episode_time, args.seed
    refs = {
        "clip_playback": lambda scratch: kinematic(n, t, seed, clip_at),
        "walk_frame_at_rest": lambda scratch: kinematic(n, t, seed, walk_frame_at_rest),
        "upright_at_rest": lambda scratch: kinematic(n, t, seed, upright_at_rest),
        "tracking_walk": lambda scratch: evaluate_policy(TRACKING_WALK_ARGS, ["--enable_style_error", "true"],
                                                         n, t, seed, scratch),
        "hold_first_frame": lambda scratch: evaluate_policy(AMP_WALK_ARGS, [], n, t, seed, scratch,
                                                            prepare=hold_first_frame),
        "untrained_amp": lambda scratch: evaluate_policy(AMP_WALK_ARGS, [], n, t, seed, scratch),
    }
    results = {}
    with tempfile.TemporaryDirectory() as scratch:
        for name, measure in refs.items():
            if args.only and name not in args.only:
                continue
            print(f"{name}: {n} episodes of at most {t} s ...", flush=True)
            results[name] = measure(scratch)
            s = results[name]["summary"]
            dtw = results[name]["dtw_cost"]
            print(f"  style {100 * s['style_err']:.2f} cm, speed {s['root_speed']:.3f} m/s, "
                  f"heading {s['heading']:.2f} rad, falls {s['falls']}/{n}"
                  + (f", dtw {dtw:.2f}" if dtw is not None else ""), flush=True)
    costs = {arg_file: dict(zip(("keyframes", "us_per_decision"), decision_cost(arg_file, seed)))
             for arg_file in (AMP_WALK_ARGS, LARGEST_DATASET_ARGS)}
    write_json(args.json, {
        "what": "style metrics (env/style_error.py) of reference behaviours against the walk clip",
        "command": "nice -n 10 .venv/bin/python -m tests.bench.style_error_calibration " + " ".join(argv or sys.argv[1:]),
        "episodes": n, "episode_time": t, "seed": seed,
        "references": results, "style_cost": costs})
    print(f"written to {args.json}")


if __name__ == "__main__":
    main()
