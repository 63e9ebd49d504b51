"""How close the AMP discriminator's step runs to this machine's matrix-multiply speed: the floor
under AMP's training cost.

    .venv/bin/python -m tests.bench.disc_floor [--ranks 2] [--steps 20] [--rounds 5] [--json FILE]

Per AMP recipe (tests/bench/amp_cost.py's AMP runs: DeepMimic's AMP walk files; the shipped AMP
walk's), as one of --ranks ranks runs it (one TF thread, its share of DiscBatchSize: ceil(DiscBatchSize / ranks) expert and as
many agent observations):
1. The agent's own discriminator step (learning/agents/amp_agent.py: loss, weight decay, logit
   regulariser, gradient penalty, gradients): its floating-point operations, counted by
   TensorFlow's profiler on the traced graph, and its time.
2. The multiply that dominates it, alone: the rank's batch by the net's largest kernel, 8 of them in
   one call, timed the same way, as the rate this machine attains on such work.
Steps and multiplies alternate over --rounds rounds of --steps calls; the best round of each.
Reported: the step's GFLOP, ms and GFLOP/s, the multiply's GFLOP/s, their ratio, and per rank and
4096-sample iteration the discriminator's steps (learning/agents/amp_agent.disc_steps), the
seconds they take and the seconds their operations would take at the multiply's rate (the floor
under AMP's extra update time while the maths stays DeepMimic's).
Output: a summary on stdout and, with --json FILE, every figure (written atomically).
"""
import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if __package__ in (None, ""):
    sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

from app.build import load_world  # noqa: E402
from learning.agents.amp_agent import disc_steps  # noqa: E402
from learning.tf_util import limit_tf_threads  # noqa: E402
from tests.bench import amp_cost  # noqa: E402
from tests.bench.interleaved import recipe_names  # noqa: E402
from util.atomic_write import write_json  # noqa: E402

# amp_cost's AMP runs (its args file and the options after it), so both benches measure one step
RECIPES = {name: (amp_cost.RECIPES[name][1], *amp_cost.RECIPES[name][2]) for name in ("deepmimic", "shipped")}
ITERATION_SAMPLES = 4096
MULTIPLIES_PER_CALL = 8     # a step runs its multiplies in one call; one multiply a call would time the call too


def graph_flops(concrete):
    """Floating-point operations of a traced function's graph, by TensorFlow's own profiler."""
    options = tf.compat.v1.profiler.ProfileOptionBuilder.float_operation()
    options["output"] = "none"
    return tf.compat.v1.profiler.profile(graph=concrete.graph, options=options).total_float_ops


def best_seconds(calls, steps, rounds):
    """The best over rounds of the mean time of one call, for each named call (alternating)."""
    best = {}
    for _ in range(rounds):
        for name, call in calls.items():
            start = time.perf_counter()
            for _ in range(steps):
                call()
            best[name] = min(best.get(name, np.inf), (time.perf_counter() - start) / steps)
    return best


def measure(recipe, ranks, steps, rounds):
    world = load_world(["--arg_file", *RECIPES[recipe], "--rand_seed", "1"], enable_draw=False)
    agent = world.agents[0]
    cfg, size = agent.config, agent.get_amp_obs_size()
    batch = int(np.ceil(cfg.disc_batch_size / ranks))
    rng = np.random.default_rng(0)
    obs = [tf.constant(rng.normal(size=(batch, size)), tf.float32) for _ in range(2)]
    spec = tf.TensorSpec((batch, size), tf.float32)
    step = tf.function(agent._disc_grads).get_concrete_function(spec, spec)
    rows, cols = max((tuple(v.shape) for v in agent.disc.trainable_variables if len(v.shape) == 2), key=np.prod)
    a = tf.constant(rng.normal(size=(MULTIPLIES_PER_CALL, batch, rows)), tf.float32)
    b = tf.constant(rng.normal(size=(rows, cols)), tf.float32)
    matmul = tf.function(tf.linalg.matmul).get_concrete_function(a, b)
    step_flops, matmul_flops = graph_flops(step), MULTIPLIES_PER_CALL * 2 * batch * rows * cols
    seconds = best_seconds({"step": lambda: step(*obs)[0]["loss"].numpy(),
                            "matmul": lambda: matmul(a, b).numpy()}, steps, rounds)
    steps_per_iteration = disc_steps(cfg.disc_steps_per_batch, ITERATION_SAMPLES, ranks, batch)
    step_rate, matmul_rate = step_flops / seconds["step"] / 1e9, matmul_flops / seconds["matmul"] / 1e9
    return {"args": list(RECIPES[recipe]), "amp_obs_size": size, "rank_disc_batch_size": batch,
            "grad_penalty_inputs": cfg.disc_grad_penalty_inputs, "step_gflop": step_flops / 1e9,
            "step_ms": 1e3 * seconds["step"], "step_gflops_per_s": step_rate,
            "matmul_shape": [[batch, rows], [rows, cols]], "multiplies_per_call": MULTIPLIES_PER_CALL,
            "matmul_call_ms": 1e3 * seconds["matmul"],
            "matmul_gflops_per_s": matmul_rate, "step_over_matmul_rate": step_rate / matmul_rate,
            "steps_per_iteration": steps_per_iteration,
            "disc_seconds_per_iteration": steps_per_iteration * seconds["step"],
            "disc_seconds_per_iteration_at_matmul_rate": steps_per_iteration * step_flops / 1e9 / matmul_rate}


def main(argv=None):
    parser = argparse.ArgumentParser(description="The AMP discriminator step's rate against a plain matrix multiply's")
    parser.add_argument("--ranks", type=int, default=2, help="the ranks whose one the step is measured as")
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--recipes", default=",".join(RECIPES), help=f"comma-separated: {', '.join(RECIPES)}")
    parser.add_argument("--json", help="write every figure to this file")
    args = parser.parse_args(argv)
    names = recipe_names(parser, args.recipes, RECIPES)
    if args.steps < 1 or args.rounds < 1 or args.ranks < 1:
        parser.error("--ranks, --steps and --rounds must be >= 1")
    limit_tf_threads()
    result = {"ranks": args.ranks, "steps": args.steps, "rounds": args.rounds, "iteration_samples": ITERATION_SAMPLES,
              "recipes": {name: measure(name, args.ranks, args.steps, args.rounds) for name in names}}
    for name, r in result["recipes"].items():
        (m, k), (_, n) = r["matmul_shape"]
        print(f"{name}: step {r['step_gflop']:.2f} GFLOP in {r['step_ms']:.1f} ms = {r['step_gflops_per_s']:.0f} GFLOP/s; "
              f"[{m}, {k}] x [{k}, {n}] multiply {r['matmul_gflops_per_s']:.0f} GFLOP/s (step at "
              f"{r['step_over_matmul_rate']:.2f} of it); per rank and {ITERATION_SAMPLES}-sample iteration "
              f"{r['steps_per_iteration']} steps = {r['disc_seconds_per_iteration']:.2f} s "
              f"({r['disc_seconds_per_iteration_at_matmul_rate']:.2f} s at the multiply's rate)")
    if args.json:
        write_json(args.json, result)


if __name__ == "__main__":
    main()
