"""AMP check (issue 5): style reward per step of the trained policy versus the untrained one.

    .venv/bin/python -m tests.bench.amp_check [--samples 150000] [--num_workers 2] [--output DIR]
        [--seed 1] [--episodes 16] [--episode_time 4] [--json FILE] [--eval_only]
        [--agent_set KEY=JSON ...]    (e.g. --agent_set DiscObsSteps=4 --agent_set 'DiscLoss="bce"')

1. Training as tests/bench/learning_check.py does it, with args/train_amp_humanoid3d_walk_args.txt
   (imitate_amp on the walk clip, data/agents/ct_agent_humanoid_amp.txt) for --samples samples.
2. Evaluation, each policy in a process of its own with the same --rand_seed: the untrained policy
   (a fresh agent) and the trained checkpoint, in test mode (mean actions), --episodes episodes cut
   at --episode_time seconds (the time-warping test cost is switched off: it is not used here).
   The agent's AMP observations are recorded as in training (one per decision from the second
   on, plus one at the episode's end) and scored by the TRAINED discriminator (the checkpoint's
   disc and amp_obs_norm, loaded after the rollouts in the untrained policy's process):
       style reward r = max(0, 1 - 0.25 (1 - D)^2) x RewardScale    (lsgan, in [0, RewardScale];
                        bce: -log(max(1 - sigmoid(D), 1e-4)) x RewardScale)
   reported per step (mean over all transitions) and as the mean of the per-episode means,
   with the episodes' lengths and falls. For scale: the same discriminator's reward on expert
   observations drawn from the clip (2048 samples).
3. The log's discriminator columns over the iterations: Disc_Acc_Expert, Disc_Acc_Agent,
   Disc_Reward_Mean (the style reward of the training batch), Disc_Loss.
PASS when the trained policy's style reward per step beats the untrained policy's.
"""
import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if __package__ in (None, ""):
    sys.path.insert(0, str(ROOT))

from tests.bench import learning_check as lc  # noqa: E402

TRAIN_ARGS = "args/train_amp_humanoid3d_walk_args.txt"
DEFAULT_SAMPLES = 150000
EXPERT_SAMPLES = 2048
LOG_COLUMNS = ("Iteration", "Samples", "Train_Return", "Test_Return", "Disc_Loss", "Disc_Acc_Expert",
               "Disc_Acc_Agent", "Disc_Reward_Mean")
WORKER_MODULE = "tests.bench.amp_check"


def capture_amp_obs(agent):
    """Makes `agent` record its AMP observations in test mode too; returns the list that each
    ended episode's observations (n decisions, obs size) are appended to."""
    captured = []
    end_episode = agent.end_episode

    def end_and_capture():
        end_episode()
        if agent.path.pathlength() > 0:
            captured.append(list(agent.path.extras["amp_obs_agent"]))

    agent._records_amp_obs = lambda: True
    agent.end_episode = end_and_capture
    return captured


def eval_worker(spec):
    import time

    import numpy as np

    from app.evaluate import evaluate

    world = lc.build_eval_world({**spec, "extra_args": ["--enable_test_time_warp", "false"]})
    try:
        agent = world.agents[0]
        captured = capture_amp_obs(agent)
        start = time.perf_counter()
        stats = evaluate(world, spec["episodes"], max_episode_time=spec["episode_time"])
        eval_wall = time.perf_counter() - start
        if spec["disc_model"] != spec["model"]:
            agent.load_model(spec["disc_model"])

        def rewards_of(obs):
            return agent.style_reward_fn(agent.calc_disc_logits(np.asarray(obs)), agent.config.reward_scale)

        per_episode = [rewards_of(obs) for obs in captured]
        expert = rewards_of([world.env.record_amp_obs_expert(0) for _ in range(EXPERT_SAMPLES)])
        summary = lc.episode_summary(stats)
        del summary["mean_return"], summary["returns"], summary["mean_reward_per_decision"]  # zero rewards
        return {**summary, "style_reward_per_step": float(np.mean(np.concatenate(per_episode))),
                "style_reward_episode_means": [float(np.mean(r)) for r in per_episode],
                "style_reward_mean_of_episodes": float(np.mean([np.mean(r) for r in per_episode])),
                "expert_style_reward": float(np.mean(expert)), "reward_scale": agent.config.reward_scale,
                "eval_wall_s": eval_wall}
    finally:
        world.shutdown()


def evaluate_policies(module, base_spec, out_dir):
    trained = str(Path(out_dir) / lc.MODEL_NAME)
    results = {}
    for name, model in (("untrained", "none"), ("trained", trained)):
        print(f"evaluating the {name} policy ({base_spec['episodes']} episodes of at most "
              f"{base_spec['episode_time']} s)...", flush=True)
        results[name] = lc.run_worker(module, {**base_spec, "model": model, "disc_model": trained,
                                               "scratch": str(Path(out_dir) / f"eval_{name}")})
    return results


def format_policy(name, r):
    return (f"{name:>9}: style reward/step {r['style_reward_per_step']:.4f} (mean of episodes "
            f"{r['style_reward_mean_of_episodes']:.4f}, of {r['reward_scale']:g} max) | length "
            f"{r['mean_length_s']:.2f} s | falls {r['falls']}/{r['episodes']}")


def format_disc_rows(training, max_lines=12):
    cols = training["row_columns"]
    rows = [dict(zip(cols, r)) for r in training["rows"]]
    step = max(1, -(-len(rows) // max_lines))
    shown = rows[::step] + ([rows[-1]] if (len(rows) - 1) % step else [])
    return [f"  iter {int(r['Iteration']):4d} samples {int(r['Samples']):7d} | Disc_Acc_Expert "
            f"{r['Disc_Acc_Expert']:.3f} Disc_Acc_Agent {r['Disc_Acc_Agent']:.3f} | Disc_Reward_Mean "
            f"{r['Disc_Reward_Mean']:.4f} | Disc_Loss {r['Disc_Loss']:.4f}" for r in shown]


def format_report(result):
    t, ev = result["training"], result["evaluation"]
    lines = [f"training: {t['samples']:,} samples, {t['iterations']} iterations, {t['wall_s'] / 60:.1f} min, "
             f"{t['samples_per_s_overall']:.1f} samples/s overall"
             + (f", {t['samples_per_s_steady']:.1f} samples/s steady" if "samples_per_s_steady" in t else ""),
             "discriminator over the iterations (log):", *format_disc_rows(t),
             format_policy("untrained", ev["untrained"]), format_policy("trained", ev["trained"]),
             f"expert observations under the same discriminator: {ev['trained']['expert_style_reward']:.4f} "
             f"(trained policy / expert {ev['trained']['style_reward_per_step'] / ev['trained']['expert_style_reward']:.3f})",
             f"{'PASS' if result['pass'] else 'FAIL'}: {result['criterion']} "
             f"({ev['trained']['style_reward_per_step']:.4f} vs {ev['untrained']['style_reward_per_step']:.4f})"]
    return "\n".join(lines)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--worker"]:
        print(lc.RESULT_PREFIX + json.dumps(eval_worker(json.loads(argv[1]))), flush=True)
        return 0
    args = lc.parse_args(argv, samples=DEFAULT_SAMPLES, arg_file=TRAIN_ARGS, description=__doc__)
    with tempfile.TemporaryDirectory(prefix="amp_check_") as tmp:
        out_dir = Path(args.output or tmp).resolve()
        out_dir.mkdir(parents=True, exist_ok=True)
        result = lc.run_check(args, out_dir, WORKER_MODULE, LOG_COLUMNS, evaluate_policies)
    ev = result["evaluation"]
    result["criterion"] = ("style reward per step (trained discriminator) of the trained policy beats "
                           "the untrained policy's")
    result["pass"] = ev["trained"]["style_reward_per_step"] > ev["untrained"]["style_reward_per_step"]
    print(format_report(result), flush=True)
    if args.json:
        lc.write_json(args.json, result)
    return 0 if result["pass"] else 1


if __name__ == "__main__":
    sys.exit(main())
