"""Each goal of a trained goal hierarchy held through test episodes: what it does, and whether
the inverse model reads it back.

    .venv/bin/python -m tests.bench.goals_per_goal --arg_file ARGS --model_files CKPT
        [--episodes 4] [--episode_time 20] [--seed 1000] [--json OUT.json]

For each goal g of the hierarchy (AgentType Goals or GoalsAMP): --episodes test episodes (mean
actions, the goal held as `DeepMimic.py --hold_goal g` holds it), cut at --episode_time seconds,
from the same starts for every goal (the scene's generator is put back to one state before each
goal's episodes). Per goal:
- falls and the mean episode length;
- speed: the mean horizontal speed of the scene's camera focus (the character's root; the point
  of goals_point), its path length over the episode's time, m/s;
- turn rate: the travel direction's mean signed change per second (rad/s, positive to the left,
  about +y as DeepMimic's heading), the direction taken over windows of --window seconds (1)
  so that a gait's sway does not count as turning;
- inverse accuracy: the share of the episodes' transitions (s_t, s_t+1) whose goal the inverse
  model names (chance 1 / NumGoals);
- the mean reward per decision (the scene's reward).
The JSON is written atomically.
"""
import argparse
import math
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if __package__ in (None, ""):
    sys.path.insert(0, str(ROOT))


def travel_speed_and_turn_rate(points, dt, window):
    """(mean horizontal speed, mean signed turn rate) of a path of points (n, 3) sampled every dt
    seconds; the direction is the displacement over `window` seconds."""
    import numpy as np

    xz = np.asarray(points, dtype=float)[:, [0, 2]]
    duration = dt * (len(xz) - 1)
    if duration <= 0:
        return 0.0, 0.0
    speed = float(np.sum(np.linalg.norm(np.diff(xz, axis=0), axis=1)) / duration)
    step = max(1, int(round(window / dt)))
    moves = xz[step::step] - xz[:-step:step]
    if len(moves) < 2:
        return speed, 0.0
    # DeepMimic's heading of a direction (x, z): atan2(-z, x), so a left turn (about +y) is positive
    headings = np.unwrap(np.arctan2(-moves[:, 1], moves[:, 0]))
    return speed, float((headings[-1] - headings[0]) / (dt * step * (len(moves) - 1)))


def per_goal_report(world, episodes, episode_time, seed, window=1.0):
    """{goal: stats} for every goal of world.agents[0], each held through `episodes` test episodes."""
    import numpy as np

    from app.evaluate import EpisodeRecorder, run_episodes
    from env.env import FRAME_TIME

    agent, scene = world.agents[0], world.env
    rng_state = np.random.default_rng(seed).bit_generator.state

    class Recorder(EpisodeRecorder):
        each_update = True

        def __init__(self):
            super().__init__(world, 0, episode_time, 1.0)
            self.points, self.paths = [], []
            self.update_dt = FRAME_TIME / world.env.get_num_update_substeps()

        def after_update(self):
            self.points.append(scene.camera_focus().copy())
            return super().after_update()

        def on_episode_end(self):
            path = agent.path
            self.paths.append((np.array(path.states), np.array(path.extras["goal_ids"]), self.points))
            self.points = []
            super().on_episode_end()

        def on_invalid_episode(self):
            self.points = []
            super().on_invalid_episode()

    report = {}
    held = agent.held_goal
    for goal in range(agent.num_goals):
        agent.held_goal = goal
        scene.rng.bit_generator.state = rng_state
        recorder = Recorder()
        stats = run_episodes(world, episodes, recorder)
        s0 = np.concatenate([states[:-1] for states, _, _ in recorder.paths])
        s1 = np.concatenate([states[1:] for states, _, _ in recorder.paths])
        _, logits = agent._inverse_tf(agent._norm_states(s0), agent._norm_states(s1))
        motion = [travel_speed_and_turn_rate(points, recorder.update_dt, window) for _, _, points in recorder.paths]
        report[goal] = {
            "falls": int(sum(s.fell for s in stats)),
            "mean_length_s": float(np.mean([s.length_s for s in stats])),
            "speed": float(np.mean([m[0] for m in motion])),
            "turn_rate": float(np.mean([m[1] for m in motion])),
            "inverse_acc": float(np.mean(np.argmax(logits.numpy(), axis=-1) == goal)),
            "goal_held": bool(all(np.all(ids == goal) for _, ids, _ in recorder.paths)),
            "mean_reward": float(np.mean([s.mean_reward for s in stats])),
        }
    agent.held_goal = held
    return report


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--arg_file", required=True)
    parser.add_argument("--model_files", required=True)
    parser.add_argument("--episodes", type=int, default=4)
    parser.add_argument("--episode_time", type=float, default=20.0)
    parser.add_argument("--seed", type=int, default=1000)
    parser.add_argument("--window", type=float, default=1.0)
    parser.add_argument("--json", default="")
    opts = parser.parse_args(argv)
    if opts.episodes < 1 or opts.episode_time <= 0 or opts.window <= 0:
        parser.error("--episodes must be >= 1, --episode_time and --window > 0")

    from util.cli import configure_process_env
    configure_process_env()
    from app.build import load_world
    from learning.agents.goals_agent import GoalsAgent
    from util.atomic_write import write_json

    world = load_world(["--arg_file", opts.arg_file, "--model_files", opts.model_files, "--train_agents", "false",
                        "--rand_seed", str(opts.seed), "--output_path", "", "--int_output_path", ""],
                       enable_draw=False)
    try:
        if not isinstance(world.agents[0], GoalsAgent):
            parser.error(f"{opts.arg_file}: agent 0 is not a goal hierarchy (AgentType Goals or GoalsAMP)")
        report = per_goal_report(world, opts.episodes, opts.episode_time, opts.seed, opts.window)
    finally:
        world.shutdown()
    chance = 1.0 / len(report)
    for goal, r in report.items():
        print(f"goal {goal}: {r['falls']} falls of {opts.episodes}, {r['mean_length_s']:.2f} s, speed {r['speed']:.2f} "
              f"m/s, turn rate {r['turn_rate']:+.2f} rad/s ({math.degrees(r['turn_rate']):+.0f} deg/s), inverse "
              f"accuracy {r['inverse_acc']:.2f} (chance {chance:.2f}), reward {r['mean_reward']:.3f}")
    if opts.json:
        write_json(opts.json, {"arg_file": opts.arg_file, "model_files": opts.model_files, "episodes": opts.episodes,
                               "episode_time": opts.episode_time, "seed": opts.seed, "window": opts.window,
                               "chance": chance, "goals": {str(g): r for g, r in report.items()}})
        print(f"written to {opts.json}")


if __name__ == "__main__":
    main()
