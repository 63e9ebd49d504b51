"""Goal hierarchy check (issue 12) on the small goals_point scene, one process, one rank.

    .venv/bin/python -m tests.bench.goals_check [--samples 30000] [--seed 1] [--episodes 16]
        [--json docs/bench/goals_check.json] [--agent_set KEY=JSON ...] [--eval_at N ...] [--no_flat]
        [--frozen_from N [--frozen_set KEY=JSON ...] [--reuse_stage1]]

1. Trains AgentType Goals (data/agents/ct_agent_goals.txt, args/train_goals_goals_point_args.txt)
   for --samples samples, then a flat PPO agent with the same nets, steps, batch and exploration
   (the same file's PPO keys, AgentType PPO) for the same budget.
2. Reports, from the Goals run's log: the inverse model's goal accuracy on each iteration's fresh
   transitions before it trains on them (InvModel_Goal_Acc, the mean of the last 3 iterations)
   against chance 1 / NumGoals (and InvModel_Goal_Acc_Balanced, each chosen goal's accuracy alike,
   which a goal policy favouring the model's default guess does not raise), and Goals_Used (goals
   chosen in >= 5% of the last iterations' choices); from --episodes test episodes (mean actions,
   argmax goals, the same starts for both agents): the external return per episode (sum of the
   spot rewards) of both agents, and how many distinct goals the goal policy picks there.
3. --eval_at N ...: the same test (and the log's statistics up to that point) also when each run
   passes N samples, a curve in "curve" (test episodes from their own fixed starts; training then
   goes on from the generator it had). --no_flat: the hierarchy alone ("ppo" is null), for
   ablations against a flat run measured once. "test_goal_counts": the test's choices per goal.
4. --frozen_from N: the hierarchy trains as its file says to N samples, then from that checkpoint
   its goal policy alone (TrainActionPolicy false, MotionPriorWeight 0: the action policy, the
   inverse model and the normalisers frozen) on the external reward, the sample count and the
   exploration anneal going on, to --samples; --eval_at points fall in either stage. --frozen_set
   KEY=JSON overrides a key of the agent file in that stage alone (e.g. GoalSteps: how often the
   goal policy picks among the frozen skills). --reuse_stage1: the first stage's checkpoint and
   log from an earlier run in the same --output (same seed and file) instead of training it again
   (its --eval_at points are not re-measured).
5. "goal_probe": --probe_episodes test episodes (mean actions) with the goals in turn, each for
   GoalSteps decisions: the inverse model's goal accuracy per goal (every goal weighs alike, so a
   goal policy that settles on one goal does not inflate it as it does the log's accuracy) and
   that goal sequence's external return.
The flat PPO agent uses the file's fc_2layers_64units trunks (a registered net).
"""
import argparse
import json
import math
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if __package__ in (None, ""):
    sys.path.insert(0, str(ROOT))

from tests.bench.learning_check import parse_agent_set  # noqa: E402

ARGS = "args/train_goals_goals_point_args.txt"
AGENT = "data/agents/ct_agent_goals.txt"
TEST_START_SEED = 10_000     # play_test_episodes start from default_rng(TEST_START_SEED + --seed): the same for every agent
PPO_KEYS = ("ActorNet", "ActorStepsize", "ActorMomentum", "ActorWeightDecay", "ActorInitOutputScale", "CriticNet",
            "CriticStepsize", "CriticMomentum", "CriticWeightDecay", "Discount", "BatchSize", "MiniBatchSize",
            "Epochs", "ReplayBufferSize", "InitSamples", "NormalizerSamples", "RatioClip", "NormAdvClip",
            "TDLambda", "OutputIters", "IntOutputIters", "TestEpisodes", "ExpAnnealSamples", "ExpParamsBeg",
            "ExpParamsEnd")


def train(agent_data, out_dir, samples, seed, eval_at=(), on_eval=None, model_file=None, sample_offset=0):
    """Trains until the sample count reaches `samples`; calls on_eval(world, agent) when the count
    first passes each of eval_at (below samples). model_file: a checkpoint the agent starts from;
    sample_offset: the samples it was trained on (the count, and the exploration anneal, go on
    from there). The time returned excludes those evaluations."""
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
                      "--int_output_path", "", "--tensorboard", "false"]
                     + (["--model_files", str(model_file)] if model_file else []))
    world = RLWorld(DeepMimicEnv(args, seed=seed), args)
    agent = world.agents[0]
    agent.total_sample_count = agent._sample_count_offset = sample_offset
    points = sorted(n for n in eval_at if sample_offset < n < samples)
    start, eval_time = time.time(), 0.0
    while agent.total_sample_count < samples:
        update_world(world, 1 / 60)
        if points and agent.total_sample_count >= points[0]:
            points.pop(0)
            t0 = time.time()
            on_eval(world, agent)
            eval_time += time.time() - t0
    train_time = time.time() - start - eval_time
    return world, agent, train_time, evaluate, np


def play_test_episodes(world, agent, episodes, seed, evaluate, np):
    """(each episode's stats, the goals chosen) of `episodes` test episodes from the starts every
    agent gets for `seed`; the env's training generator is put back after."""
    train_rng = world.env.rng
    world.env.rng = np.random.default_rng(TEST_START_SEED + seed)
    chosen = []
    if hasattr(agent, "_choose_goal"):
        choose = agent._choose_goal

        def counting_choose(s, g):
            choose(s, g)
            chosen.append(agent.goal_id)
        agent._choose_goal = counting_choose
    stats = evaluate(world, episodes)
    agent.__dict__.pop("_choose_goal", None)
    world.env.rng = train_rng
    return stats, chosen


def run_eval(world, agent, episodes, seed, evaluate, np):
    """(mean external return per test episode, the goals chosen) on play_test_episodes' starts."""
    stats, chosen = play_test_episodes(world, agent, episodes, seed, evaluate, np)
    return float(np.mean([s.mean_reward * s.num_decisions for s in stats])), chosen


def probe_goals(world, agent, episodes, seed, evaluate, np):
    """Goals in turn, each for GoalSteps decisions (goal (e + j) mod NumGoals in episode e's j-th
    segment), mean actions, the test's starts: the inverse model's goal accuracy per goal on those
    transitions (chance 1 / NumGoals; unlike the log's accuracy every goal weighs alike, used by the
    goal policy or not) and the external return per episode of that goal sequence."""
    train_rng = world.env.rng
    world.env.rng = np.random.default_rng(TEST_START_SEED + seed)
    n, decide = agent.num_goals, agent._decide_action
    episodes_steps, segment = [], [0]

    def cycle(s, g):
        agent.goal_id = (len(episodes_steps) - 1 + segment[0]) % n
        segment[0] += 1

    def recording(s, g):
        if agent._step == 0:
            episodes_steps.append([])
            segment[0] = 0
        out = decide(s, g)
        episodes_steps[-1].append((np.array(s, dtype=np.float64), agent.goal_id))
        return out
    agent._choose_goal, agent._decide_action = cycle, recording
    stats = evaluate(world, episodes)
    for name in ("_choose_goal", "_decide_action"):
        agent.__dict__.pop(name, None)
    world.env.rng = train_rng
    pairs = [(a[0], b[0], a[1]) for steps in episodes_steps for a, b in zip(steps[:-1], steps[1:])]
    s0, s1, goals = (np.array(x) for x in zip(*pairs))
    _, logits = agent._inverse_tf(agent._norm_states(s0), agent._norm_states(s1))
    hit = np.argmax(logits.numpy(), axis=-1) == goals
    accs = [float(np.mean(hit[goals == k])) if np.any(goals == k) else 0.0 for k in range(n)]
    return {"per_goal_inverse_acc": accs, "inverse_acc_mean": float(np.mean(accs)),
            "external_return": float(np.mean([st.mean_reward * st.num_decisions for st in stats]))}


def goal_counts(chosen, num_goals):
    return [chosen.count(k) for k in range(num_goals)]


def log_stats(rows, samples=None):
    """The inverse model's goal accuracy, plain and balanced (means of the last 3 iterations; nan
    for a log without the balanced column), and Goals_Used (the last) of the log rows up to
    `samples` (all: None)."""
    rows = [r for r in rows if samples is None or r["Samples"] <= samples] or rows[:1]
    last = rows[-3:]
    balanced = [r.get("InvModel_Goal_Acc_Balanced", math.nan) for r in last]
    return {"inverse_goal_acc_last3": sum(r["InvModel_Goal_Acc"] for r in last) / len(last),
            "inverse_goal_acc_balanced_last3": sum(balanced) / len(last),
            "goals_used_last": int(last[-1]["Goals_Used"])}


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
    parser.add_argument("--eval_at", type=int, nargs="*", default=[], metavar="N",
                        help="also test when a run passes N samples (a curve)")
    parser.add_argument("--no_flat", action="store_true", help="the hierarchy alone, no flat PPO run")
    parser.add_argument("--probe_episodes", type=int, default=4, help="test episodes of the goal probe")
    parser.add_argument("--frozen_from", type=int, default=0, metavar="N",
                        help="the hierarchy trains as its file says to N samples, then its goal policy alone "
                             "(TrainActionPolicy false, MotionPriorWeight 0) on the external reward to --samples")
    parser.add_argument("--frozen_set", action="append", default=[], metavar="KEY=JSON",
                        help="overrides a key of the agent file in the frozen stage alone")
    parser.add_argument("--reuse_stage1", action="store_true",
                        help="the first stage's checkpoint and log from an earlier run in --output")
    opts = parser.parse_args(argv)
    if (opts.frozen_set or opts.reuse_stage1) and not opts.frozen_from:
        parser.error("--frozen_set and --reuse_stage1 need --frozen_from")

    from learning.tf_util import limit_tf_threads
    limit_tf_threads()
    out = Path(opts.output)
    goals_data = {**json.loads((ROOT / AGENT).read_text()), **parse_agent_set(opts.agent_set)}
    frozen_data = {**goals_data, "TrainActionPolicy": False, "MotionPriorWeight": 0,
                   **parse_agent_set(opts.frozen_set, "--frozen_set")}
    ppo_data = {"AgentType": "PPO", **{k: goals_data[k] for k in PPO_KEYS}}

    import numpy as np

    from app.evaluate import evaluate
    curve = {}

    def goals_point(world, agent):
        ret, ch = run_eval(world, agent, opts.episodes, opts.seed, evaluate, np)
        curve[agent.total_sample_count] = {"samples": agent.total_sample_count, "goals_test_external_return": ret,
                                           "test_distinct_goals": len(set(ch)),
                                           "test_goal_counts": goal_counts(ch, agent.num_goals),
                                           "goal_probe": probe_goals(world, agent, opts.probe_episodes, opts.seed,
                                                                          evaluate, np)}

    def flat_point(world, agent):
        ret, _ = run_eval(world, agent, opts.episodes, opts.seed, evaluate, np)
        curve.setdefault(agent.total_sample_count, {"samples": agent.total_sample_count})
        curve[agent.total_sample_count]["ppo_test_external_return"] = ret

    stage_samples = opts.frozen_from or opts.samples
    checkpoint = out / "goals" / "frozen_from.ckpt"
    if opts.reuse_stage1:
        if not Path(f"{checkpoint}.index").is_file():
            sys.exit(f"--reuse_stage1: no first-stage checkpoint {checkpoint} (run once without it)")
        rows, goals_time = read_log(out / "goals" / "agent0_log.txt"), 0.0
        stage1_samples = int(rows[-1]["Samples"])
    else:
        world, agent, goals_time, _, _ = train(goals_data, out / "goals", stage_samples, opts.seed, opts.eval_at,
                                               goals_point)
        rows = read_log(out / "goals" / "agent0_log.txt")
        stage1_samples = agent.total_sample_count
        if opts.frozen_from:
            agent.save_model(str(checkpoint))
            world.shutdown()
    if opts.frozen_from:
        world, agent, frozen_time, _, _ = train(frozen_data, out / "goals_frozen", opts.samples, opts.seed,
                                                opts.eval_at, goals_point, checkpoint, stage1_samples)
        goals_time += frozen_time
        rows += read_log(out / "goals_frozen" / "agent0_log.txt")
    goals_return, chosen = run_eval(world, agent, opts.episodes, opts.seed, evaluate, np)
    probe = probe_goals(world, agent, opts.probe_episodes, opts.seed, evaluate, np)
    num_goals = agent.num_goals
    last = rows[-3:]
    goals_samples = agent.total_sample_count
    world.shutdown()
    goals_curve = sorted(curve.values(), key=lambda c: c["samples"])
    for point in goals_curve:
        point.update(log_stats(rows, point["samples"]))

    ppo = None
    if not opts.no_flat:
        curve.clear()
        world, agent, ppo_time, _, _ = train(ppo_data, out / "ppo", opts.samples, opts.seed, opts.eval_at,
                                             flat_point)
        ppo_return, _ = run_eval(world, agent, opts.episodes, opts.seed, evaluate, np)
        ppo = {"samples": agent.total_sample_count, "train_seconds": round(ppo_time, 1),
               "test_external_return": ppo_return,
               "curve": sorted(curve.values(), key=lambda c: c["samples"])}
        world.shutdown()

    acc = float(np.mean([r["InvModel_Goal_Acc"] for r in last]))
    result = {
        "samples": opts.samples, "seed": opts.seed, "agent_set": opts.agent_set, "episodes": opts.episodes,
        "frozen_from": opts.frozen_from or None, "frozen_set": opts.frozen_set,
        "stage1_reused": opts.reuse_stage1,
        "num_goals": num_goals,
        "goals": {"samples": goals_samples, "iterations": len(rows), "train_seconds": round(goals_time, 1),
                  "inverse_goal_acc_last3": acc, "chance": 1 / num_goals,
                  "inverse_goal_acc_balanced_last3": log_stats(rows)["inverse_goal_acc_balanced_last3"],
                  "inverse_goal_acc_first": rows[0]["InvModel_Goal_Acc"],
                  "inverse_action_err_first_last": [rows[0]["InvModel_Action_Err"], last[-1]["InvModel_Action_Err"]],
                  "goals_used_last": int(last[-1]["Goals_Used"]),
                  "goals_used_per_iter": [int(r["Goals_Used"]) for r in rows],
                  "stability_reward_mean_first_last": [rows[0]["Stability_Reward_Mean"],
                                                       last[-1]["Stability_Reward_Mean"]],
                  "stability_habituation_min_last": last[-1]["Stability_Habituation_Min"],
                  "reward_habituation_last": last[-1]["Reward_Habituation"],
                  "test_distinct_goals": len(set(chosen)), "test_goal_choices": len(chosen),
                  "test_goal_counts": goal_counts(chosen, num_goals),
                  "test_external_return": goals_return, "goal_probe": probe, "curve": goals_curve},
        "ppo": ppo,
        "inverse_beats_chance": acc > 1 / num_goals,
    }
    Path(opts.json).parent.mkdir(parents=True, exist_ok=True)
    Path(opts.json).write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
