"""The heading task played by a hand-written rule choosing among a frozen goal hierarchy's skills:
what its four skills can score when chosen well, beside what its goal policy learns.

    .venv/bin/python -m tests.bench.goals_heading_rule [--arg_file ARGS] [--model_files CKPT]
        [--turn_deg 30] [--split_speed 2.4] [--goals 0 1 2 3] [--episodes 8] [--seed 1000] [--json OUT]

The arg file is a goal hierarchy on DeepMimic's heading scene (default: the frozen four skills of
args/train_goals_amp_humanoid3d_heading_task_args.txt, loaded by its --init_model_files unless
--model_files names a checkpoint). At each goal choice the rule reads the scene's goal
(cos, -sin of the target heading from the facing, the target speed) and takes: the left-turn
skill if the target lies more than --turn_deg to the left, the right-turn skill if to the right,
else the run if the target speed is above --split_speed, else the walk (--goals: the ids of walk,
run, left, right). Test episodes of 20 s as the task criterion plays them (scripts/train_skill.py
--criterion task): falls, the task reward per decision per episode and its mean, and each
episode's mean target speed. JSON written
atomically.
"""
import argparse
import math
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if __package__ in (None, ""):
    sys.path.insert(0, str(ROOT))

DEFAULT_ARGS = "args/train_goals_amp_humanoid3d_heading_task_args.txt"


def rule_goal(goal, turn_deg, split_speed, goals):
    """The goal id the rule takes for the heading scene's goal (cos, -sin, target speed)."""
    walk, run, left, right = goals
    cos_err, sin_err, speed = goal[0], -goal[1], goal[2]
    if cos_err < math.cos(math.radians(turn_deg)):
        return left if sin_err > 0 else right
    return run if speed > split_speed else walk


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--arg_file", default=DEFAULT_ARGS)
    parser.add_argument("--model_files", default="")
    parser.add_argument("--turn_deg", type=float, default=30.0)
    parser.add_argument("--split_speed", type=float, default=2.4)
    parser.add_argument("--goals", type=int, nargs=4, default=[0, 1, 2, 3], metavar=("WALK", "RUN", "LEFT", "RIGHT"))
    parser.add_argument("--episodes", type=int, default=8)
    parser.add_argument("--seed", type=int, default=1000)
    parser.add_argument("--json", default="")
    opts = parser.parse_args(argv)
    if opts.episodes < 1 or not 0 < opts.turn_deg < 180:
        parser.error("--episodes must be >= 1 and --turn_deg in (0, 180)")

    from util.cli import configure_process_env
    configure_process_env()
    import numpy as np

    from app.build import load_world
    from app.evaluate import EpisodeRecorder, run_episodes, summarize
    from env.tracking_error import SUCCESS_BODY_POS_ERR
    from learning.agents.goals_agent import GoalsAgent
    from util.atomic_write import write_json

    class TargetSpeedRecorder(EpisodeRecorder):
        """The evaluation's recorder, also keeping each episode's mean target speed (goal entry 2)."""

        def __init__(self, *args):
            super().__init__(*args)
            self.target_speeds = []

        def on_episode_end(self):
            self.target_speeds.append(float(np.mean(np.asarray(self.agent.path.goals)[:, 2])))
            super().on_episode_end()

    model = ["--model_files", opts.model_files] if opts.model_files else []
    world = load_world(["--arg_file", opts.arg_file, *model, "--train_agents", "false", "--rand_seed", str(opts.seed),
                        "--output_path", "", "--int_output_path", ""], enable_draw=False)
    try:
        agent = world.agents[0]
        if not isinstance(agent, GoalsAgent) or agent.get_goal_size() != 3:
            parser.error(f"{opts.arg_file}: agent 0 must be a goal hierarchy on the heading scene")
        if not all(0 <= g < agent.num_goals for g in opts.goals):
            parser.error(f"--goals {opts.goals}: ids must be in [0, {agent.num_goals})")
        choose = agent._choose_goal

        def by_rule(s, g):
            choose(s, g)        # the habituation bookkeeping and log-probability as the policy's choice
            agent.goal_id = rule_goal(g, opts.turn_deg, opts.split_speed, opts.goals)

        agent._choose_goal = by_rule
        recorder = TargetSpeedRecorder(world, 0, 20.0, SUCCESS_BODY_POS_ERR)
        stats = run_episodes(world, opts.episodes, recorder)
    finally:
        world.shutdown()
    summary = summarize(stats)
    per_episode = [s.mean_reward for s in stats]
    print(f"rule (turn beyond {opts.turn_deg:g} deg, run above {opts.split_speed:g} m/s): {summary['falls']} falls "
          f"of {len(stats)}, task reward per decision {summary['mean_reward']:.3f}")
    for reward, speed in zip(per_episode, recorder.target_speeds):
        print(f"  episode: task reward per decision {reward:.3f}, mean target speed {speed:.2f} m/s")
    if opts.json:
        write_json(opts.json, {"arg_file": opts.arg_file, "model_files": opts.model_files or "--init_model_files",
                               "turn_deg": opts.turn_deg, "split_speed": opts.split_speed, "goals": opts.goals,
                               "seed": opts.seed, "summary": summary, "per_episode_reward": per_episode,
                               "per_episode_mean_target_speed": recorder.target_speeds})
        print(f"written to {opts.json}")


if __name__ == "__main__":
    main()
