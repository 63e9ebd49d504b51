"""What a bfloat16 discriminator (DiscComputeDtype, opt-in) changes: its step's time and the style
reward it pays, against float32 from the same weights.

    .venv/bin/python -m tests.bench.disc_precision [--steps 20] [--rounds 5] [--json FILE]

1. Step time: the shipped AMP walk's own discriminator step, its gradients (the 1024-512 net, BCE,
   the gradient penalty on expert and agent inputs, DiscBatchSize 256 of each) on one TF thread, as
   a rank runs it: float32 and bfloat16 alternate over --rounds rounds of --steps steps; the best
   round of each and their ratio.
2. Reward: the shipped AMP walk (data/policies/humanoid3d_amp_walk_ref_conditioned_trained) plays 20 s (seed 1);
   its discriminator, in float32 and in bfloat16 with the same weights, scores the 600 AMP
   observations of its decisions and 600 of the clip's: the style reward's mean and spread in
   float32 and the mean and largest |bfloat16 - float32| per observation.
Output: a summary on stdout and, with --json FILE, every figure (written atomically).
"""
import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if __package__ in (None, ""):
    sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

from app.build import load_world  # noqa: E402
from app.rollout import update_world  # noqa: E402
from learning.models.amp_discriminator import COMPUTE_DTYPES  # noqa: E402
from tests.bench.disc_floor import best_seconds  # noqa: E402
from util.atomic_write import write_json  # noqa: E402

RUN_ARGS = "args/run_humanoid3d_amp_walk_ref_conditioned_trained_args.txt"
EPISODE_TIME = 20.0
DECISION_PERIOD = 1 / 30


def in_dtype(agent, fn, dtype, *args):
    """fn traced with the agent's discriminator computing in dtype (its own step or logits, no
    second copy of its maths), and fn's first result on args."""
    disc, saved = agent.disc, agent.disc.compute_dtype
    disc.compute_dtype = COMPUTE_DTYPES[dtype]
    try:
        traced = tf.function(fn)
        return traced, traced(*args)
    finally:
        disc.compute_dtype = saved


def time_steps(agent, steps, rounds):
    """The agent's own discriminator step (learning/agents/amp_agent.py, its loss and penalty) in
    float32 and bfloat16, gradients only (the solver's step is the same float32 work in both)."""
    cfg, size = agent.config, agent.get_amp_obs_size()
    rng = np.random.default_rng(0)
    batch = [tf.constant(rng.normal(size=(cfg.disc_batch_size, size)), tf.float32) for _ in range(2)]
    steps_by_dtype = {dtype: in_dtype(agent, agent._disc_grads, dtype, *batch)[0] for dtype in ("float32", "bfloat16")}
    best = best_seconds({dtype: lambda step=step: step(*batch)[0]["loss"].numpy()
                         for dtype, step in steps_by_dtype.items()}, steps, rounds)
    return {"float32_ms": 1e3 * best["float32"], "bfloat16_ms": 1e3 * best["bfloat16"],
            "bfloat16_over_float32": best["bfloat16"] / best["float32"]}


def reward_change(world):
    """The style reward of the policy's and the clip's AMP observations, float32 against bfloat16."""
    agent, env = world.agents[0], world.env
    cfg = agent.config
    observations = []
    for _ in range(int(round(EPISODE_TIME / DECISION_PERIOD))):
        update_world(world, DECISION_PERIOD)
        observations.append(np.asarray(env.record_amp_obs_agent(0)))
    sets = {"policy": np.array(observations),
            "clip": np.asarray(env.record_amp_obs_expert_batch(0, len(observations)))}
    out = {}
    for name, obs in sets.items():
        norm_obs = tf.constant(agent._norm_amp_obs(obs))
        r32, r16 = (agent.style_reward_fn(in_dtype(agent, agent.disc, dtype, norm_obs)[1].numpy().astype(np.float64),
                                          cfg.reward_scale) for dtype in ("float32", "bfloat16"))
        diff = np.abs(r16 - r32)
        out[name] = {"observations": len(obs), "reward_float32_mean": float(r32.mean()),
                     "reward_float32_std": float(r32.std()), "reward_bfloat16_mean": float(r16.mean()),
                     "abs_diff_mean": float(diff.mean()), "abs_diff_max": float(diff.max())}
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description="A bfloat16 discriminator's step time and style reward against float32's")
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--json", help="write every figure to this file")
    args = parser.parse_args(argv)
    if args.steps < 1 or args.rounds < 1:
        parser.error("--steps and --rounds must be >= 1")
    world = load_world(["--arg_file", RUN_ARGS, "--rand_seed", "1"], enable_draw=False)
    result = {"run_args": RUN_ARGS, "steps": args.steps, "rounds": args.rounds,
              "step": time_steps(world.agents[0], args.steps, args.rounds), "reward": reward_change(world)}
    step = result["step"]
    print(f"discriminator step: float32 {step['float32_ms']:.1f} ms, bfloat16 {step['bfloat16_ms']:.1f} ms "
          f"({step['bfloat16_over_float32']:.2f}x)")
    for name, r in result["reward"].items():
        print(f"style reward on the {name}'s {r['observations']} observations: float32 {r['reward_float32_mean']:.4f} "
              f"+- {r['reward_float32_std']:.4f}, bfloat16 {r['reward_bfloat16_mean']:.4f}; "
              f"|bfloat16 - float32| mean {r['abs_diff_mean']:.4f}, max {r['abs_diff_max']:.4f}")
    if args.json:
        write_json(args.json, result)


if __name__ == "__main__":
    main()
