"""Runs the older DeepMimic port shipped in the pybullet wheel (pybullet_envs.deep_mimic) at its
own settings, for the throughput benchmark. It never enters the product: it is imported from the
installed wheel only here, and only in a process of its own (throughput.py starts this file as a
subprocess), so its TF1 graph mode never touches another process.

Two measurements, one per run:
  train  its training loop exactly as its DeepMimic_Optimizer.py runs it (testrl.build_world with
         the wheel's args/train_humanoid3d_walk_args.txt, then testrl.update_world(world, 1/240)
         forever): after its initial test phase (32 test episodes, since iteration 0 starts one),
         training samples per second of wall time over whole PPO iterations (--iters) or over a
         fixed number of samples (--samples), PPO update time included. With --probe S the work
         runs in chunks with the physics floor's scheme S timed between them (throughput.py's
         Interleaved), and the rate is per second of work.
  walk   its pretrained walk policy (args/run_humanoid3d_walk_args.txt, humanoid3d_walk.ckpt)
         in its own env, test mode: mean reward per policy step over --episodes episodes, each up
         to its own 20 s cap or a fall.
The last line printed is `RESULT {json}`.

Patches, applied at run time inside this process only: tests/oracle/wheel_port.py (gym stub, Keras 2,
TF1 graph mode), plus timing wrappers: PPOAgent._train_step is wrapped to add up the update
time. Nothing of its behaviour is changed.
Its outputs (checkpoints, log) go to a temporary directory (--output_path on its command line,
which wins over the args file).

Run: .venv/bin/python tests/bench/older_port.py train --iters 2
     .venv/bin/python tests/bench/older_port.py walk --episodes 5
"""
import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from tests.bench.throughput import Interleaved, timed  # noqa: E402
from tests.oracle.wheel_port import import_port  # noqa: E402

PORT_RATE = 1.0 / 240.0  # testrl.update_timestep


class QuietStdout:
    """The port prints a table every iteration and a line every episode: keep it off our output
    (it goes to a file, whose tail is shown if the run fails)."""

    def __init__(self, path):
        self.path = path

    def __enter__(self):
        sys.stdout.flush()
        self.saved = os.dup(1)
        self.file = open(self.path, "w")
        os.dup2(self.file.fileno(), 1)

    def __exit__(self, *exc):
        sys.stdout.flush()
        os.dup2(self.saved, 1)
        os.close(self.saved)
        self.file.close()


def measure_training(testrl, out_dir, iters, samples, probe_scheme=None):
    """Samples/s after the initial test phase, over `iters` whole PPO iterations or `samples`;
    with probe_scheme, the work runs in chunks with the physics floor's scheme timed between them
    (throughput.Interleaved) and the rate is per second of work."""
    started = time.perf_counter()
    world = testrl.build_world(["--arg_file", "train_humanoid3d_walk_args.txt",
                                "--output_path", f"{out_dir}/output",
                                "--int_output_path", f"{out_dir}/output/intermediate"], False)
    agent = world.agents[0]
    built = time.perf_counter()
    update_time = {"seconds": 0.0}
    agent._train_step = timed(agent._train_step, update_time, "seconds")
    train_mode = type(agent).Mode.TRAIN

    def in_training():
        return agent.replay_buffer_initialized and agent._mode == train_mode

    while not in_training():
        testrl.update_world(world, PORT_RATE)
    warm = time.perf_counter()
    count0, iter0 = agent.replay_buffer.total_count, agent.iter
    update_time["seconds"] = 0.0

    def done():
        if iters:
            return agent.iter - iter0 >= iters
        return agent.replay_buffer.total_count - count0 >= samples

    run = Interleaved([probe_scheme] if probe_scheme else [])
    while not run.chunk(lambda: testrl.update_world(world, PORT_RATE), done):
        pass
    count = agent.replay_buffer.total_count - count0
    return {
        "samples_per_s": count / run.work_seconds,
        "floor": run.floor(),
        "samples": count,
        "iterations": agent.iter - iter0,
        "seconds": run.work_seconds,
        "update_seconds": update_time["seconds"],
        "update_fraction": update_time["seconds"] / run.work_seconds,
        "build_seconds": built - started,
        "test_phase_seconds": warm - built,
    }


def measure_walk_policy(testrl, episodes):
    """Mean reward per policy step of the pretrained walk policy in test mode."""
    world = testrl.build_world(["--arg_file", "run_humanoid3d_walk_args.txt"], False)
    agent, env = world.agents[0], world.env
    rewards, falls, steps_time, physics_steps = [], 0, 0.0, 0
    for _ in range(episodes):
        world.reset()
        start = time.perf_counter()
        while not env.is_episode_end():
            world.update(PORT_RATE)
            physics_steps += 1
        steps_time += time.perf_counter() - start
        falls += int(env.t <= 20)
        world.end_episode()
        rewards.extend(agent.path.rewards)
    return {
        "mean_reward_per_step": sum(rewards) / len(rewards),
        "policy_steps": len(rewards),
        "episodes": episodes,
        "falls": falls,
        "ms_per_policy_step": 1000 * steps_time / len(rewards),
        "physics_steps": physics_steps,
    }


def main(argv=None):
    parser = argparse.ArgumentParser(description="the older port, at its own settings")
    sub = parser.add_subparsers(dest="what", required=True)
    train = sub.add_parser("train")
    budget = train.add_mutually_exclusive_group(required=True)
    budget.add_argument("--iters", type=int, help="whole PPO iterations to time")
    budget.add_argument("--samples", type=int, help="training samples to time")
    train.add_argument("--probe", choices=["A", "B", "C"], help="physics floor scheme timed between chunks")
    walk = sub.add_parser("walk")
    walk.add_argument("--episodes", type=int, default=5)
    args = parser.parse_args(argv)

    with tempfile.TemporaryDirectory(prefix="older_port_") as out_dir:
        log = os.environ.get("OLDER_PORT_LOG", f"{out_dir}/port_stdout.txt")
        try:
            with QuietStdout(log):
                testrl = import_port()
                if args.what == "train":
                    result = measure_training(testrl, out_dir, args.iters, args.samples, args.probe)
                else:
                    result = measure_walk_policy(testrl, args.episodes)
        except Exception:
            if os.path.exists(log):
                sys.stderr.write("".join(open(log).readlines()[-20:]))
            raise
    print("RESULT " + json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
