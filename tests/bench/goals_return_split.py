"""Where an agent's external return on goals_point goes: reaching a spot, or holding it.

    .venv/bin/python -m tests.bench.goals_return_split --agent NAME=DIR [--agent NAME=DIR ...]
        [--seed 1] [--episodes 16] [--json docs/bench/goals_return_split_s1.json]

DIR: a folder that tests/bench/goals_check.py trained an agent in, holding its agent.txt and
agent0_model.ckpt (with --output OUT: OUT/ppo for flat PPO, OUT/goals for the hierarchy, OUT/goals_frozen
after --frozen_from). Each agent plays --episodes test episodes from goals_check's starts (the same for
every agent; mean actions, argmax goals). An episode's rewards r_t (the spot reward, in [0, 1], one per
decision) split at its arrival, the first decision with r_t >= ARRIVED:
    travel loss = sum over t < arrival of (1 - r_t),   hold loss = sum over t >= arrival of (1 - r_t),
so that return = decisions - travel loss - hold loss; with the arrival and the ball's mean speed while
holding (m/s, after each decision). Printed and written as JSON: per agent the means and every episode.
"""
import argparse
import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if __package__ in (None, ""):
    sys.path.insert(0, str(ROOT))

ARRIVED = 0.95      # a decision's spot reward at which the ball has reached a spot (0.10 m from its centre)


def split_episode(rewards, speeds):
    """{return, decisions, arrival, travel_loss, hold_loss, hold_speed} of one episode's per-decision
    rewards and speeds (arrival = decisions and hold_speed None when no reward reaches ARRIVED)."""
    n = len(rewards)
    arrival = next((t for t, r in enumerate(rewards) if r >= ARRIVED), n)
    return {"return": float(sum(rewards)), "decisions": n, "arrival": arrival,
            "travel_loss": float(sum(1.0 - r for r in rewards[:arrival])),
            "hold_loss": float(sum(1.0 - r for r in rewards[arrival:])),
            "hold_speed": float(sum(speeds[arrival:]) / (n - arrival)) if arrival < n else None}


def play(agent_dir, episodes, seed):
    """The per-episode splits of the agent trained in agent_dir, on goals_check's test starts."""
    import numpy as np

    from tests.bench.goals_check import play_test_episodes, train
    from app.evaluate import evaluate

    agent_dir = Path(agent_dir)
    data = json.loads((agent_dir / "agent.txt").read_text())
    with tempfile.TemporaryDirectory() as scratch:
        world, agent, *_ = train(data, Path(scratch), 0, seed, model_file=agent_dir / "agent0_model.ckpt")
        record = agent._record_reward
        steps = []

        def recording():
            record()
            s = agent.env.record_state(agent.id)       # [x, z, vx, vz] after the decision's updates
            steps.append((agent.path.rewards[-1], float(np.hypot(s[2], s[3]))))
        agent._record_reward = recording
        stats, _ = play_test_episodes(world, agent, episodes, seed, evaluate, np)
        world.shutdown()
    splits, at = [], 0
    for n, ret in ((st.num_decisions, st.mean_reward * st.num_decisions) for st in stats):
        rewards, speeds = zip(*steps[at:at + n])
        at += n
        split = split_episode(list(rewards), list(speeds))
        if abs(split["return"] - ret) > 1e-6 * max(1.0, abs(ret)):
            raise RuntimeError(f"{agent_dir}: the recorded rewards sum to {split['return']}, the episode's return "
                               f"is {ret}: the rewards and the episodes are out of step")
        splits.append(split)
    return splits


def mean_split(splits):
    """The episodes' means; hold_speed over the episodes that arrived (None if none did)."""
    speeds = [s["hold_speed"] for s in splits if s["hold_speed"] is not None]
    means = {k: sum(s[k] for s in splits) / len(splits) for k in ("return", "arrival", "travel_loss", "hold_loss")}
    return {**means, "hold_speed": sum(speeds) / len(speeds) if speeds else None}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agent", action="append", required=True, metavar="NAME=DIR",
                        help="a goals_check folder (agent.txt, agent0_model.ckpt) and a name for it")
    parser.add_argument("--seed", type=int, default=1, help="goals_check's --seed (the test starts)")
    parser.add_argument("--episodes", type=int, default=16)
    parser.add_argument("--json", default=None)
    opts = parser.parse_args(argv)
    agents = {}
    for item in opts.agent:
        name, sep, path = item.partition("=")
        if not sep or not name or not (Path(path) / "agent0_model.ckpt.index").is_file() \
                or not (Path(path) / "agent.txt").is_file():
            parser.error(f"--agent {item}: expected NAME=DIR with DIR holding agent.txt and agent0_model.ckpt")
        agents[name] = path

    from learning.tf_util import limit_tf_threads
    limit_tf_threads()
    result = {"seed": opts.seed, "episodes": opts.episodes, "arrived": ARRIVED, "agents": {}}
    for name, path in agents.items():
        splits = play(path, opts.episodes, opts.seed)
        result["agents"][name] = {"dir": str(path), "mean": mean_split(splits), "episodes": splits}
        m = result["agents"][name]["mean"]
        speed = "-" if m["hold_speed"] is None else f"{m['hold_speed']:.2f} m/s"
        print(f"{name}: return {m['return']:.2f} | arrival {m['arrival']:.1f} decisions | travel loss "
              f"{m['travel_loss']:.2f} | hold loss {m['hold_loss']:.2f} | hold speed {speed}", flush=True)
    if opts.json:
        from util.atomic_write import write_json
        write_json(opts.json, result)


if __name__ == "__main__":
    main()
