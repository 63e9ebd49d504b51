"""Goal hierarchy check (issue 12) on the small goals_point scene, one process, one rank.

    .venv/bin/python -m tests.bench.goals_check [--samples 30000] [--seed 1] [--episodes 16]
        [--json docs/bench/goals_check.json] [--agent_set KEY=JSON ...]

1. Trains AgentType Goals (data/agents/ct_agent_goals.txt, args/train_goals_goals_point_args.txt)
   for --samples samples, then a flat PPO agent with the same nets, steps, batch and exploration
   (the same file's PPO keys, AgentType PPO) for the same budget.
2. Reports, from the Goals run's log: the inverse model's goal accuracy on each iteration's fresh
   transitions before it trains on them (InvModel_Goal_Acc, the mean of the last 3 iterations)
   against chance 1 / NumGoals, and Goals_Used (goals chosen in >= 5% of the last iterations'
   choices); from --episodes test episodes (mean actions, argmax goals, the same starts for both
   agents): the external return per episode (sum of the spot rewards) of both agents, and how
   many distinct goals the goal policy picks there.
The flat PPO agent uses the file's fc_2layers_64units trunks (a registered net).
"""
import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if __package__ in (None, ""):
    sys.path.insert(0, str(ROOT))

ARGS = "args/train_goals_goals_point_args.txt"
AGENT = "data/agents/ct_agent_goals.txt"
PPO_KEYS = ("ActorNet", "ActorStepsize", "ActorMomentum", "ActorWeightDecay", "ActorInitOutputScale", "CriticNet",
            "CriticStepsize", "CriticMomentum", "CriticWeightDecay", "Discount", "BatchSize", "MiniBatchSize",
            "Epochs", "ReplayBufferSize", "InitSamples", "NormalizerSamples", "RatioClip", "NormAdvClip",
            "TDLambda", "OutputIters", "IntOutputIters", "TestEpisodes", "ExpAnnealSamples", "ExpParamsBeg",
            "ExpParamsEnd")


def train(agent_data, out_dir, samples, seed):
    import numpy as np

    from env.deepmimic_env import DeepMimicEnv
    from app.evaluate import evaluate
    from app.rollout import update_world
    from learning.rl_world import RLWorld
    from learning.tf_util import seed_rank
    from util.arg_parser import load_args

    out_dir.mkdir(parents=True, exist_ok=True)
    agent_file = out_dir / "agent.txt"
    agent_file.write_text(json.dumps(agent_data))
    seed_rank(seed)
    args = load_args(["--arg_file", str(ROOT / ARGS), "--agent_files", str(agent_file), "--output_path", str(out_dir),
                      "--int_output_path", "", "--tensorboard", "false"])
    world = RLWorld(DeepMimicEnv(args, seed=seed), args)
    agent = world.agents[0]
    start = time.time()
    while agent.total_sample_count < samples:
        update_world(world, 1 / 60)
    train_time = time.time() - start
    return world, agent, train_time, evaluate, np


def run_eval(world, agent, episodes, seed, evaluate, np):
    world.env.rng = np.random.default_rng(10_000 + seed)     # the same starts for both agents
    chosen = []
    if hasattr(agent, "_choose_goal"):
        choose = agent._choose_goal

        def counting_choose(s, g):
            choose(s, g)
            chosen.append(agent._goal)
        agent._choose_goal = counting_choose
    stats = evaluate(world, episodes)
    returns = [s.mean_reward * s.num_decisions for s in stats]
    return float(np.mean(returns)), chosen


def read_log(path):
    lines = path.read_text().splitlines()
    header = lines[0].split()
    return [dict(zip(header, map(float, line.split()))) for line in lines[1:]]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=30000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--episodes", type=int, default=16)
    parser.add_argument("--output", default="output/bench_goals_check")
    parser.add_argument("--json", default=str(ROOT / "docs/bench/goals_check.json"))
    parser.add_argument("--agent_set", action="append", default=[], metavar="KEY=JSON",
                        help="overrides a key of the agent file (both agents when it is a PPO key)")
    opts = parser.parse_args(argv)

    from learning.tf_util import limit_tf_threads
    limit_tf_threads()
    out = Path(opts.output)
    goals_data = json.loads((ROOT / AGENT).read_text())
    for item in opts.agent_set:
        name, _, value = item.partition("=")
        goals_data[name] = json.loads(value)
    ppo_data = {"AgentType": "PPO", **{k: goals_data[k] for k in PPO_KEYS}}

    world, agent, goals_time, evaluate, np = train(goals_data, out / "goals", opts.samples, opts.seed)
    goals_return, chosen = run_eval(world, agent, opts.episodes, opts.seed, evaluate, np)
    num_goals = agent.num_goals
    rows = read_log(out / "goals" / "agent0_log.txt")
    last = rows[-3:]
    goals_samples = agent.total_sample_count
    world.shutdown()

    world, agent, ppo_time, evaluate, np = train(ppo_data, out / "ppo", opts.samples, opts.seed)
    ppo_return, _ = run_eval(world, agent, opts.episodes, opts.seed, evaluate, np)
    ppo_samples = agent.total_sample_count
    world.shutdown()

    acc = float(np.mean([r["InvModel_Goal_Acc"] for r in last]))
    result = {
        "samples": opts.samples, "seed": opts.seed, "agent_set": opts.agent_set, "episodes": opts.episodes,
        "num_goals": num_goals,
        "goals": {"samples": goals_samples, "iterations": len(rows), "train_seconds": round(goals_time, 1),
                  "inverse_goal_acc_last3": acc, "chance": 1 / num_goals,
                  "inverse_goal_acc_first": rows[0]["InvModel_Goal_Acc"],
                  "inverse_action_err_first_last": [rows[0]["InvModel_Action_Err"], last[-1]["InvModel_Action_Err"]],
                  "goals_used_last": int(last[-1]["Goals_Used"]),
                  "goals_used_per_iter": [int(r["Goals_Used"]) for r in rows],
                  "stability_reward_mean_first_last": [rows[0]["Stability_Reward_Mean"],
                                                       last[-1]["Stability_Reward_Mean"]],
                  "stability_habituation_min_last": last[-1]["Stability_Habituation_Min"],
                  "reward_habituation_last": last[-1]["Reward_Habituation"],
                  "test_distinct_goals": len(set(chosen)), "test_goal_choices": len(chosen),
                  "test_external_return": goals_return},
        "ppo": {"samples": ppo_samples, "train_seconds": round(ppo_time, 1), "test_external_return": ppo_return},
        "inverse_beats_chance": acc > 1 / num_goals,
    }
    Path(opts.json).parent.mkdir(parents=True, exist_ok=True)
    Path(opts.json).write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
