"""Body position error floor and character size: what success bound is fair for the dog.

    nice -n 10 .venv/bin/python -m tests.bench.body_error_floor [--episodes 8] [--episode_time 5]
        [--early_time 0.2] [--seed 1000] [--json docs/bench/body_error_floor.json]

The tracking success criterion bounds an episode's mean body position error (env/tracking_error.py:
mean over bodies b of |(p_b - p_0) - (p'_b - p'_0)|, p the joint world positions, 0 the root, in
the character file's metres) by SUCCESS_BODY_POS_ERR = 8 cm, a bound set for the humanoid. The
metric is root-relative, so its natural scale is how far the bodies are from the root. If the
simulated pose is the reference pose turned by an angle theta about the root, every body moves by
2 sin(theta / 2) |p_b - p_0|, so

    body_pos_err = 2 sin(theta / 2) * D,   D = mean over bodies of |p_b - p_0|   (root included)

and the same angular accuracy gives errors proportional to D. A bound of equal strictness for
another character is therefore 8 cm x D_dog / D_humanoid.

Per clip (args/train_<character>_<clip>_args.txt: humanoid3d walk, run, jog, spinkick; dog3d
canter, pace, trot, spin):
  scales    of the clip sampled at the decision rate (30 Hz) over one period, through env/anim's
            forward kinematics (env/anim/kin_character.py), each a mean over the samples:
              height_m           the collision shapes' vertical extent (highest top minus lowest
                                 bottom of the bodies' bounding boxes, CharacterDesc.body_aabbs)
              root_height_m      the root joint above the lowest bottom: how high the legs carry it
              body_root_dist_m   D above, on the metric's points (the joint positions)
            and the same of each character's default pose (every rotation the identity: the
            humanoid standing straight, the dog on straight legs), its standing size.
  pd_floor  the imitate scene built with --ref_relative_actions true and acted on with the zero
            action at every decision: the PD targets are the reference's pose at the next decision
            (env/sim/ref_relative_action.py), from reference state initialisation (a random clip
            time, the reference's pose and velocity), test mode. app/evaluate's episodes, cut at
            --episode_time, seeded by --seed: per episode its length, whether it fell (a fall-contact
            body touched the ground; all eight clips loop, so no episode ends with its clip), its
            mean body_pos_err, and the mean over its first --early_time seconds (decisions): the
            floor before most falls, where the characters compare on the same span.
Per character the means over its clips; the ratios dog / humanoid of every scale and of the PD
floors; the recommended dog bound 8 cm x the body_root_dist_m ratio, and how the PD floor's
dog / humanoid ratio (early window) compares with that scale ratio (recommend).
The JSON is written atomically.
"""
import argparse
import sys
import tempfile
import time

import numpy as np

from app.build import build_world
from app.evaluate import EpisodeRecorder, run_episodes, summarize
from env.anim.character import CharacterDesc
from env.anim.kin_character import KinCharacter
from env.anim.motion import Motion
from env.tracking_error import SUCCESS_BODY_POS_ERR
from learning.agents.rl_agent import RLAgent
from learning.test_metrics import EpisodeMetrics
from util.arg_parser import load_args
from util.atomic_write import write_json

CLIPS = {"humanoid3d": ("walk", "run", "jog", "spinkick"), "dog3d": ("canter", "pace", "trot", "spin")}
REFERENCE_CHAR, SCALED_CHAR = "humanoid3d", "dog3d"
SCALES = ("height_m", "root_height_m", "body_root_dist_m")
BOUND_SCALE = "body_root_dist_m"
SAMPLE_RATE = 30.0          # Hz: the clips sampled at the decision rate, as the metric is averaged
SUPPORT_TOLERANCE = 0.25    # the PD floor's ratio "matches" the scale ratio within +-25 %


def args_file(character, clip):
    return f"args/train_{character}_{clip}_args.txt"


# ---- size ---------------------------------------------------------------------------------

def pose_scales(char_desc, poses):
    """{scale: mean over poses} of SCALES for poses (k, pose_size) of char_desc (module docstring):
    with p the joint world positions and [lo, hi] the bodies' bounding boxes in y, per pose
    height = max hi - min lo, root_height = p_0.y - min lo, body_root_dist = mean_b |p_b - p_0|."""
    kin = KinCharacter(char_desc)
    joint_pos = kin.calc_joint_world(poses)[0]
    body_pos, body_rot = kin.calc_body_world(poses)
    boxes = [char_desc.body_aabbs(pos, rot) for pos, rot in zip(body_pos, body_rot)]
    lowest = np.array([lo[:, 1].min() for lo, _ in boxes])
    highest = np.array([hi[:, 1].max() for _, hi in boxes])
    dist = np.linalg.norm(joint_pos - joint_pos[:, :1], axis=2)
    return {"height_m": float(np.mean(highest - lowest)),
            "root_height_m": float(np.mean(joint_pos[:, 0, 1] - lowest)),
            "body_root_dist_m": float(np.mean(dist))}


def clip_samples(motion, rate=SAMPLE_RATE):
    """The clip's poses at times k / rate over one period (k < duration * rate, at least one)."""
    count = max(int(np.ceil(motion.duration * rate - 1e-9)), 1)
    return motion.calc_frames(np.arange(count) / rate)


def character_and_motion(character, clip):
    """The character file's CharacterDesc and the clip's Motion, as the clip's args file names them."""
    args = load_args(["--arg_file", args_file(character, clip)])
    desc = CharacterDesc.load(args.parse_strings("character_files")[0])
    return desc, Motion.load(args.parse_string("motion_file"), desc)


def clip_scales(character, clip):
    """(the clip's scales, its duration)."""
    desc, motion = character_and_motion(character, clip)
    return pose_scales(desc, clip_samples(motion)), motion.duration


def default_pose_scales(character):
    desc = character_and_motion(character, CLIPS[character][0])[0]
    return pose_scales(desc, KinCharacter(desc).default_pose()[None])


# ---- PD floor -----------------------------------------------------------------------------

class ZeroActionAgent(RLAgent):
    """Acts with the zero action at every decision and never trains: with --ref_relative_actions
    true the PD targets are the reference's pose at the next decision."""

    NAME = "ZeroAction"

    def set_enable_training(self, enable):
        super().set_enable_training(False)

    def _decide_action(self, s, g):
        return np.zeros(self.get_action_size()), 0.0


class SeriesMetrics(EpisodeMetrics):
    """EpisodeMetrics that also keep the episode's body_pos_err after each decision."""

    def reset(self):
        super().reset()
        self.body_pos_errs = []

    def add_decision(self):
        super().add_decision()
        self.body_pos_errs.append(self.env.calc_tracking_error(self.id)["body_pos_err"])


class SeriesRecorder(EpisodeRecorder):
    """app/evaluate's recorder of agent 0, plus each finished episode's body_pos_err series."""

    def __init__(self, world, max_episode_time):
        super().__init__(world, 0, max_episode_time, SUCCESS_BODY_POS_ERR)
        self.metrics = SeriesMetrics(self.env, 0)
        self.series = []

    def on_episode_end(self):
        self.series.append(self.metrics.body_pos_errs)
        super().on_episode_end()


def early_mean(series, decision_time, early_time):
    """Mean of the errors recorded within early_time s of the reset (the k-th, from 0, is recorded
    one update after decision k + 1); all of them when the episode is shorter."""
    count = max(int(round(early_time / decision_time)), 1)
    return float(np.mean(series[:count]))


def floor_world(character, clip, seed, scratch):
    """The clip's imitate world with --ref_relative_actions true (outputs under scratch), agent 0
    a ZeroActionAgent."""
    world = build_world(load_args(["--arg_file", args_file(character, clip), "--ref_relative_actions", "true",
                                   "--rand_seed", str(seed), "--output_path", scratch,
                                   "--int_output_path", f"{scratch}/intermediate", "--tensorboard", "false"]))
    world.agents[0] = ZeroActionAgent(world, 0, world.agents[0].config)
    return world


def pd_floor(character, clip, episodes, episode_time, early_time, seed, scratch):
    """The clip's PD-floor episodes (module docstring) and their summary."""
    world = floor_world(character, clip, seed, scratch)
    try:
        recorder = SeriesRecorder(world, episode_time)
        stats = run_episodes(world, episodes, recorder)
        decision_time = world.env.ctrl.update_period
    finally:
        world.shutdown()
    per_episode = [{"length_s": s.length_s, "fell": s.fell, "body_pos_err": s.tracking["body_pos_err"],
                    "body_pos_err_early": early_mean(series, decision_time, early_time)}
                   for s, series in zip(stats, recorder.series)]
    fall_times = [e["length_s"] for e in per_episode if e["fell"]]
    summary = summarize(stats)
    return {"episodes": per_episode, "falls": summary["falls"], "mean_length_s": summary["mean_length_s"],
            "mean_time_to_fall_s": float(np.mean(fall_times)) if fall_times else None,
            "body_pos_err": summary["body_pos_err"],
            "body_pos_err_early": float(np.mean([e["body_pos_err_early"] for e in per_episode])),
            "evaluate_summary": summary}


# ---- comparison ---------------------------------------------------------------------------

def character_means(clips):
    """Means over a character's clips of its scales and PD floors."""
    return {**{s: float(np.mean([c["scales"][s] for c in clips])) for s in SCALES},
            **{f"pd_floor_{k}": float(np.mean([c["pd_floor"][k] for c in clips]))
               for k in ("body_pos_err", "body_pos_err_early")}}


def recommend(means, bound=SUCCESS_BODY_POS_ERR):
    """(ratios dog / humanoid of every character mean, the recommendation): the dog's bound is
    bound x D_dog / D_humanoid (D = body_root_dist_m). The PD floor's own ratio (early window), over
    that scale ratio, is r = (floor_dog / bound_dog) / (floor_humanoid / bound): near 1 (within
    SUPPORT_TOLERANCE) the floor scales as the size does; below, the floor is smaller for the dog
    relative to its bound (the bound is not stricter for the dog); above, larger (it is stricter)."""
    ref, scaled = means[REFERENCE_CHAR], means[SCALED_CHAR]
    ratios = {k: scaled[k] / ref[k] for k in ref}
    scale_ratio, floor_ratio = ratios[BOUND_SCALE], ratios["pd_floor_body_pos_err_early"]
    r = floor_ratio / scale_ratio
    verdict = ("matches the scale ratio" if abs(r - 1.0) <= SUPPORT_TOLERANCE else
               "below the scale ratio: the bound is not stricter for the dog" if r < 1.0 else
               "above the scale ratio: the bound is stricter for the dog")
    return ratios, {"reference_bound_m": bound, "scale": BOUND_SCALE, "scale_ratio": scale_ratio,
                    "bound_m": bound * scale_ratio, "pd_floor_ratio_early": floor_ratio,
                    "pd_floor_over_scale_ratio": r, "pd_floor_verdict": verdict}


def measure(episodes, episode_time, early_time, seed):
    results = {name: [] for name in CLIPS}
    with tempfile.TemporaryDirectory() as scratch:
        for character, clips in CLIPS.items():
            for clip in clips:
                start = time.perf_counter()
                scales, duration = clip_scales(character, clip)
                floor = pd_floor(character, clip, episodes, episode_time, early_time, seed, scratch)
                results[character].append({"clip": clip, "args": args_file(character, clip),
                                           "clip_duration_s": duration, "scales": scales, "pd_floor": floor,
                                           "wall_s": time.perf_counter() - start})
                print(format_clip(character, results[character][-1]), flush=True)
    means = {character: character_means(clips) for character, clips in results.items()}
    return results, means


def format_clip(character, r):
    s, f = r["scales"], r["pd_floor"]
    fall = f"{f['mean_time_to_fall_s']:.2f} s" if f["mean_time_to_fall_s"] is not None else "-"
    return (f"{character:<10} {r['clip']:<8} height {s['height_m']:.3f} m, root height {s['root_height_m']:.3f} m, "
            f"body-root {s['body_root_dist_m']:.3f} m | PD floor {100 * f['body_pos_err']:.1f} cm "
            f"(first part {100 * f['body_pos_err_early']:.1f} cm), falls {f['falls']}/{len(f['episodes'])}, "
            f"mean time to fall {fall}")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--episodes", type=int, default=8)
    p.add_argument("--episode_time", type=float, default=5.0, help="s: episodes are cut here")
    p.add_argument("--early_time", type=float, default=0.2, help="s: the early window of each episode")
    p.add_argument("--seed", type=int, default=1000)
    p.add_argument("--json", help="write the results to this file")
    args = p.parse_args(argv)
    results, means = measure(args.episodes, args.episode_time, args.early_time, args.seed)
    ratios, rec = recommend(means)
    for name in SCALES + ("pd_floor_body_pos_err", "pd_floor_body_pos_err_early"):
        print(f"{name:<30} humanoid {means[REFERENCE_CHAR][name]:.4f}  dog {means[SCALED_CHAR][name]:.4f}  "
              f"ratio {ratios[name]:.3f}")
    print(f"dog bound: {100 * rec['bound_m']:.1f} cm (8 cm x {rec['scale_ratio']:.3f}); PD floor ratio "
          f"{rec['pd_floor_ratio_early']:.3f}: {rec['pd_floor_verdict']}")
    if args.json:
        write_json(args.json, {
            "what": "PD-floor body position error and size of the humanoid and dog clips: the dog's success bound",
            "command": ".venv/bin/python -m tests.bench.body_error_floor " + " ".join(argv or sys.argv[1:]),
            "episodes": args.episodes, "episode_time": args.episode_time, "early_time": args.early_time,
            "seed": args.seed, "clips": results,
            "default_pose": {character: default_pose_scales(character) for character in CLIPS},
            "characters": means, "ratios_dog_over_humanoid": ratios, "recommendation": rec})
        print(f"written to {args.json}")


if __name__ == "__main__":
    main()
