"""Cost of the PPO update (issue 35): PPOStep.step, one iteration's update, with the fast recipe's
nets on a synthetic PolicyBatch of the real sizes; the joint update (learning/solvers/
joint_update.py) against the straightforward one it replaced (tests/ppo_step_reference.py).

    .venv/bin/python -m tests.bench.update_cost [--ranks 1|2] [--rounds 3] [--sweep] [--check_equal]
        [--json FILE]

Sizes: the state and action sizes of the walk scene that args/train_humanoid3d_walk_fast_args.txt
builds (state 410 with tar_obs_steps 1 2 3, action 28: ref-relative actions, rotation vectors);
the nets, optimizers, BatchSize, MiniBatchSize and Epochs of its agent file
(data/agents/ct_agent_humanoid_ppo_fast.txt: Adam, 4096, 256, 5, fc_2layers_1024units);
BatchSize / ranks decisions per rank in 20 paths (tests/ppo_step_reference.synthetic_batch).
--ranks 2 re-runs this script on 2 ranks under the venv's mpiexec (as the MPI tests launch it,
with mpi_run.MPI_WAIT_ENV unless the environment sets OMPI_MCA_mpi_yield_when_idle: 0 makes the
waiting ranks spin, Open MPI's default); rank 0 reports. Each process is set up as DeepMimic_Optimizer.py sets
up a rank (configure_process_env: quiet TF, one BLAS thread; one intra-op and one inter-op TF
thread).

A/B (default): per round one step of each path, the order alternating between rounds (old, new,
new, old, ...) on the same agent, so the machine's load hits both; then the floor: Epochs x
ceil(BatchSize / MiniBatchSize) calls of one compiled function computing the two nets' losses and
gradients (forward + backward, no solver, inputs already tensors) on local-minibatch rows.
Reported: per path the median seconds per iteration, the median over rounds of old / new (the
speed-up) and of floor / new; with --check_equal also whether both paths leave bitwise the same
weights after one step from the same weights, solver states and shuffles.
--sweep (instead): the joint update's seconds per iteration (median over rounds) for the nets
1024-512 (fc_2layers_1024units) and 512-256, at Epochs 5, 3 and 1 (each round runs every case).

The machine's 2 cores are shared: absolute times swing with the load (os.getloadavg() is
recorded), ratios of interleaved rounds are the robust figures. Output: the numbers as JSON on
stdout and, with --json FILE, in FILE (written atomically).
"""
import argparse
import dataclasses
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if __package__ in (None, ""):
    sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from util.atomic_write import write_json  # noqa: E402
from util.cli import configure_process_env  # noqa: E402

ARG_FILE = "args/train_humanoid3d_walk_fast_args.txt"
AGENT_FILE = "data/agents/ct_agent_humanoid_ppo_fast.txt"
SMALL_NET = "fc_2layers_512units"
NETS = {"1024-512": "fc_2layers_1024units", "512-256": SMALL_NET}
SWEEP_EPOCHS = (5, 3, 1)


def scene_sizes():
    """(state size, action size) of the fast recipe's walk scene."""
    from env.deepmimic_env import DeepMimicEnv
    from util.arg_parser import load_args

    env = DeepMimicEnv(load_args(["--arg_file", ARG_FILE]), seed=1)
    return env.get_state_size(0), env.get_action_size(0)


def build_agent(state_size, action_size, net, tmp_dir):
    """A PPO agent of the fast recipe's agent file with both nets `net`, on a ShapedEnv."""
    from learning.rl_world import RLWorld
    from tests.toy_env import ShapedEnv, toy_args

    agent_data = dict(json.loads((ROOT / AGENT_FILE).read_text()), ActorNet=net, CriticNet=net)
    path = Path(tmp_dir) / f"agent_{net}.txt"
    path.write_text(json.dumps(agent_data))
    return RLWorld(ShapedEnv(state_size, action_size), toy_args(path)).agents[0]


def timed(fn):
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def floor_fn(agent, batch):
    """A call of Epochs x minibatches compiled loss-and-gradient calls of both nets (no solver)."""
    import tensorflow as tf

    step = agent.policy_step
    grads = tf.function(step._grads)
    n = agent.local_mini_batch_size
    crit, act = batch.valid_pos[:n], batch.exp_pos[:n]
    as_tensor = lambda x: tf.constant(np.asarray(x, np.float32))
    args = ((as_tensor(batch.critic_inputs[0][crit]),), as_tensor(batch.returns[crit]),
            (as_tensor(batch.inputs[0][act]),), as_tensor(batch.norm_actions[act]), as_tensor(batch.logps[act]),
            as_tensor(batch.vals[act]), as_tensor(batch.norm_bound_min), as_tensor(batch.norm_bound_max))
    calls = agent.config.epochs * minibatches(agent)
    grads(*args)

    def run():
        for _ in range(calls):
            grads(*args)
    return run


def minibatches(agent):
    return int(np.ceil(agent.config.batch_size / agent.mini_batch_size))


def same_after_one_step(agent, batch):
    """Both paths from the same weights, solver states and shuffles: bitwise the same weights?"""
    from tests.ppo_step_reference import both_steps

    (_, (new, _), _), (_, (old, _), _) = both_steps(agent, batch)
    return all(np.array_equal(a, b) for a, b in zip(new, old))


def ab_rounds(agent, batch, rounds, check_equal):
    from tests.ppo_step_reference import straightforward_step

    old, new = straightforward_step(agent), agent.policy_step
    paths = {"old": lambda: old.step(batch, 10), "new": lambda: new.step(batch, 10)}
    floor = floor_fn(agent, batch)
    for fn in paths.values():
        fn()                                # tracing
    times = {"old": [], "new": [], "floor": []}
    for r in range(rounds):
        for name in (("old", "new") if r % 2 == 0 else ("new", "old")):
            times[name].append(timed(paths[name]))
        times["floor"].append(timed(floor))
    t = {k: np.array(v) for k, v in times.items()}
    return {"rounds": {k: [round(float(x), 4) for x in v] for k, v in times.items()},
            "median_s": {k: round(float(np.median(v)), 4) for k, v in t.items()},
            "speedup_old_over_new": round(float(np.median(t["old"] / t["new"])), 3),
            "floor_over_new": round(float(np.median(t["floor"] / t["new"])), 3),
            "floor_over_old": round(float(np.median(t["floor"] / t["old"])), 3),
            **({"bitwise_equal_after_one_step": same_after_one_step(agent, batch)} if check_equal else {})}


def sweep_rounds(agents, batches, rounds):
    """{net: {epochs: median seconds per iteration of the joint update}}."""
    times = {net: {e: [] for e in SWEEP_EPOCHS} for net in agents}
    configs = {net: agent.config for net, agent in agents.items()}
    for net, agent in agents.items():
        agent.policy_step.step(batches[net], 10)      # tracing
    for _ in range(rounds):
        for net, agent in agents.items():
            for epochs in SWEEP_EPOCHS:
                agent.policy_step.config = dataclasses.replace(configs[net], epochs=epochs)
                times[net][epochs].append(timed(lambda: agent.policy_step.step(batches[net], 10)))
    for net, agent in agents.items():
        agent.policy_step.config = configs[net]
    return {net: {str(e): round(float(np.median(v)), 4) for e, v in per.items()} for net, per in times.items()}


def measure(args):
    """On every rank: the measurement; rank 0 returns the result (None elsewhere)."""
    from learning.nets.fc_2layers_1024units import FCNet
    from learning.nets.net_builder import register_net
    from learning.tf_util import limit_tf_threads
    from tests.ppo_step_reference import synthetic_batch
    import util.mpi_util as mpi_util

    limit_tf_threads()
    register_net(SMALL_NET, lambda sizes, scope: FCNet(sizes, scope, layers=(512, 256)))
    state_size, action_size = scene_sizes()
    ranks = mpi_util.size()
    with tempfile.TemporaryDirectory() as tmp:
        nets = NETS if args.sweep else {"1024-512": NETS["1024-512"]}
        agents = {name: build_agent(state_size, action_size, net, tmp) for name, net in nets.items()}
    first = agents["1024-512"]
    batches = {name: synthetic_batch(a, np.random.default_rng(mpi_util.rank()), a.local_batch_size)
               for name, a in agents.items()}
    result = {"ranks": ranks, "state_size": state_size, "action_size": action_size,
              "batch": first.config.batch_size, "minibatch": first.mini_batch_size,
              "local_minibatch": first.local_mini_batch_size, "epochs": first.config.epochs,
              "minibatches_per_iter": first.config.epochs * minibatches(first),
              "mpi_yield_when_idle": os.environ.get("OMPI_MCA_mpi_yield_when_idle"),
              "loadavg_before": [round(x, 2) for x in os.getloadavg()]}
    if args.sweep:
        result["sweep_s_per_iter"] = sweep_rounds(agents, batches, args.rounds)
    else:
        result.update(ab_rounds(first, batches["1024-512"], args.rounds, args.check_equal))
    result["loadavg_after"] = [round(x, 2) for x in os.getloadavg()]
    return result if mpi_util.is_root() else None


def report(result, json_path):
    print(json.dumps(result, indent=1))
    if json_path:
        write_json(json_path, result)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ranks", type=int, choices=(1, 2), default=1)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--sweep", action="store_true")
    parser.add_argument("--check_equal", action="store_true")
    parser.add_argument("--json")
    parser.add_argument("--on_ranks", action="store_true", help=argparse.SUPPRESS)   # a rank of --ranks 2
    args = parser.parse_args(argv)
    configure_process_env()     # as DeepMimic_Optimizer.py: TF's settings of training, before TF loads
    if args.ranks == 1 or args.on_ranks:
        result = measure(args)
        if result is not None:
            report(result, args.json)
        return
    from tests.mpi_helpers import run_module_on_two_ranks

    forwarded = ["--rounds", args.rounds, "--on_ranks", "--ranks", 2] + [f"--{flag}" for flag in ("sweep", "check_equal")
                                                                          if getattr(args, flag)]
    if args.json:
        forwarded += ["--json", Path(args.json).resolve()]
    print(run_module_on_two_ranks("tests.bench.update_cost", *forwarded).stdout, end="")


if __name__ == "__main__":
    main()
