"""Where a heading policy falls: each test episode of the heading_amp scene with the turn it opens
with, so failures can be told apart by how far the character must first turn.

    .venv/bin/python -m tests.bench.heading_turns --model_files CKPT [--episodes 24] [--seed 1000]
        [--arg_file args/train_amp_heading_humanoid3d_locomotion_fast_args.txt] [--json FILE]
        [--train_args --ref_relative_actions true --motion_file data/datasets/...]

Every episode starts with the target heading along world +x and the character's facing drawn at
random (env/scenes/heading_amp.py, DeepMimic's --enable_rand_rot_reset), so it opens with a turn of
up to half a circle. Per test episode (mean actions, at most 20 s, app/evaluate.py's recorder): the
opening turn (target heading minus the root's heading after the reset, degrees in (-180, 180]),
the target speed, the clip the reset drew and, if that clip does not loop, the time its reference
had left before stopping at its last frame (a relative action, --ref_relative_actions, is an offset
from that reference), the length, whether it fell and its task reward per decision (the test reward);
the summary counts falls and episodes meeting the heading criterion (the full 20 s, task reward per
decision >= 0.7: app/skill_config.episode_successes) for opening turns above and up to 90
degrees and, when some resets drew a non-looping clip, for looping and non-looping clips (with the
falls that came after the clip ended). --train_args go to the world's command line (e.g. another
--motion_file or --reset_motion_file: the resets are drawn from its clips). The JSON is written
atomically.
"""
import argparse
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
if __package__ in (None, ""):
    sys.path.insert(0, str(ROOT))

from util.cli import configure_process_env  # noqa: E402

configure_process_env()

from app.build import load_world  # noqa: E402
from app.evaluate import EpisodeRecorder, run_episodes  # noqa: E402
from app.skill_config import Criterion, episode_successes  # noqa: E402
from util import math_util  # noqa: E402
from util.atomic_write import write_json  # noqa: E402

DEFAULT_ARGS = "args/train_amp_heading_humanoid3d_locomotion_fast_args.txt"
CRITERION = Criterion(kind="task")
WIDE_TURN_DEG = 90.0


def opening_turn_deg(scene):
    """The target heading minus the root's heading, degrees wrapped to (-180, 180]."""
    root_heading = float(math_util.quat_heading(scene.sim_pose_vel()[0][3:7]))
    delta = np.degrees(scene.tar_heading - root_heading)
    return float(180.0 - (180.0 - delta) % 360.0)


class OpeningRecorder(EpisodeRecorder):
    """app.evaluate's recorder that also notes, before each episode's first update, its opening
    turn, target speed, clip and the clip's time left (None for a looping clip)."""

    def __init__(self, world, max_episode_time):
        super().__init__(world, 0, max_episode_time, success_body_pos_err=None)
        self.openings = []

    def before_update(self, timestep):
        if self.elapsed == 0.0:
            motion = self.env.motion
            left = None if motion.loop == "wrap" else float(motion.duration - self.env.kin_char.time)
            self.openings.append((opening_turn_deg(self.env), float(self.env.tar_speed), motion.path.name, left))
        super().before_update(timestep)

    def on_invalid_episode(self):
        self.openings.pop()             # discarded, as its stats are
        super().on_invalid_episode()


def run(argv, episodes):
    world = load_world(argv, enable_draw=False)
    recorder = OpeningRecorder(world, CRITERION.episode_time)
    stats = run_episodes(world, episodes, recorder)
    meets = episode_successes(CRITERION, {"lengths_s": [s.length_s for s in stats],
                                          "rewards": [s.mean_reward for s in stats]})
    return [{"opening_turn_deg": turn, "target_speed": speed, "clip": clip, "clip_time_left_s": left,
             "length_s": s.length_s, "fell": s.fell, "task_reward": s.mean_reward, "meets_criterion": ok}
            for (turn, speed, clip, left), s, ok in zip(recorder.openings, stats, meets)]


def summary(rows):
    def part(sel):
        return {"episodes": len(sel), "falls": sum(r["fell"] for r in sel),
                "meeting_criterion": sum(r["meets_criterion"] for r in sel)}
    wide = [r for r in rows if abs(r["opening_turn_deg"]) > WIDE_TURN_DEG]
    narrow = [r for r in rows if abs(r["opening_turn_deg"]) <= WIDE_TURN_DEG]
    result = {"all": part(rows), "opening_turn_above_90": part(wide), "opening_turn_up_to_90": part(narrow)}
    stopping = [r for r in rows if r.get("clip_time_left_s") is not None]
    if stopping:
        result["looping_clip"] = part([r for r in rows if r.get("clip_time_left_s") is None])
        result["non_looping_clip"] = {**part(stopping), "falls_after_the_clip_ended": sum(
            r["fell"] and r["length_s"] > r["clip_time_left_s"] for r in stopping)}
    return result


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--model_files", required=True, help="the heading policy's checkpoint")
    p.add_argument("--arg_file", default=DEFAULT_ARGS)
    p.add_argument("--episodes", type=int, default=24)
    p.add_argument("--seed", type=int, default=1000)
    p.add_argument("--json")
    p.add_argument("--train_args", nargs=argparse.REMAINDER, default=[])
    args = p.parse_args(argv)
    if args.episodes < 1:
        p.error("--episodes must be >= 1")
    world_argv = ["--arg_file", args.arg_file, "--rand_seed", str(args.seed), "--model_files", args.model_files,
                  "--output_path", str(ROOT / "output" / "heading_turns"), "--int_output_path", "",
                  *args.train_args]
    rows = run(world_argv, args.episodes)
    for i, r in enumerate(rows):
        left = "" if r["clip_time_left_s"] is None else f" ({r['clip_time_left_s']:.2f} s left)"
        print(f"episode {i:2d}: opening turn {r['opening_turn_deg']:+7.1f} deg, target speed {r['target_speed']:.2f} m/s"
              f" | {r['clip']}{left} | {r['length_s']:5.2f} s{' fell' if r['fell'] else ''},"
              f" task reward {r['task_reward']:.3f}")
    result = summary(rows)
    for name, part in result.items():
        after = (f" ({part['falls_after_the_clip_ended']} after the clip ended)"
                 if "falls_after_the_clip_ended" in part else "")
        print(f"{name}: {part['episodes']} episodes, {part['falls']} falling{after}, "
              f"{part['meeting_criterion']} meeting the criterion")
    if args.json:
        write_json(args.json, {"config": {k: v for k, v in vars(args).items() if k != "json"},
                               "summary": result, "episodes": rows})
    return 0


if __name__ == "__main__":
    sys.exit(main())
