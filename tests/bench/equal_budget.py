"""Learning at equal budget (issue 14, part 3): our PPO against the older port's, walk, same samples.

    .venv/bin/python -m tests.bench.equal_budget [--samples 300000] [--seeds 1 2] [--output DIR]
        [--stage all|train_port|train_ours|evaluate] [--episodes 8] [--json FILE]

Both sides train the walk clip with the agent file the pybullet wheel ships (its 2019
ct_agent_humanoid_ppo.txt: ActorStepsize 2.5e-6, CriticStepsize 0.01, BatchSize 4096, ...), for
the same number of training samples, once per seed:
  port  the older port in the wheel, as its DeepMimic_Optimizer.py trains (testrl.build_world with
        its args/train_humanoid3d_walk_args.txt, update_world at 1/240 s), one process, seeded
        (random, numpy, TF) in a process of its own (tests/oracle/wheel_port.py); the checkpoint is
        saved when its replay buffer has taken the budget.
  ours  mpi_run.py --num_workers 2 with args/train_humanoid3d_walk_args.txt, the wheel's agent file
        and the 2018 controller (state 197, action 36: the layout the port's checkpoints share).
Then every policy (each side's, each seed) is evaluated in test mode (mean actions) in both
scenes: ours (DeepMimic's reward and falls; episodes cut at --episode_time) and the port's (its own
reward, its own 20 s cap and fall rule). Our checkpoints load into the port only when ours are
written under the 2018 names (learning/checkpoint.py); otherwise that cell says why not.

Stages keep their results in DIR (port_<seed>/, ours_<seed>/ with training.json and eval.json,
results.json), so a long run can be continued stage by stage (--sides evaluates one side). The
port's training is the long pole (~90-130 samples/s on this machine).
"""
import argparse
import json
import random
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if __package__ in (None, ""):
    sys.path.insert(0, str(ROOT))

from tests.bench.learning_check import (MODEL_NAME, LOG_NAME, PYTHON, RESULT_PREFIX, child_env,  # noqa: E402
                                        eval_worker, read_log, run_worker, train, training_summary,
                                        write_json)

PORT_RATE = 1.0 / 240.0
OUR_ARGS = "args/train_humanoid3d_walk_args.txt"
CTRL_2018 = "data/controllers/humanoid3d_ctrl_2018.txt"
MODULE = "tests.bench.equal_budget"


def wheel_agent_file():
    import pybullet_data
    return str(Path(pybullet_data.getDataPath()) / "data/agents/ct_agent_humanoid_ppo.txt")


def our_agent_args():
    return ["--agent_files", wheel_agent_file(), "--char_ctrl_files", CTRL_2018]


# ---- the port, in processes of its own -----------------------------------------------------------

def port_world(testrl, args, seed):
    import numpy as np
    import tensorflow.compat.v1 as tf
    random.seed(seed)
    np.random.seed(seed)
    tf.set_random_seed(seed)
    return testrl.build_world(args, False)


def port_train_worker(spec):
    """Trains the port for spec['samples'] training samples; saves DIR/agent0_model.ckpt."""
    from tests.bench.older_port import QuietStdout
    from tests.oracle.wheel_port import import_port

    out = Path(spec["out"])
    with QuietStdout(out / "port_stdout.txt"):
        testrl = import_port()
        start = time.perf_counter()
        world = port_world(testrl, ["--arg_file", "train_humanoid3d_walk_args.txt", "--output_path", str(out),
                                    "--int_output_path", str(out / "intermediate")], spec["seed"])
        agent = world.agents[0]
        while agent.replay_buffer.total_count < spec["samples"]:
            testrl.update_world(world, PORT_RATE)
        wall = time.perf_counter() - start
        agent.save_model(str(out / MODEL_NAME))
    return {"samples": int(agent.replay_buffer.total_count), "iterations": int(agent.iter), "wall_s": wall,
            "samples_per_s_overall": agent.replay_buffer.total_count / wall}


def port_eval_worker(spec):
    """The port's own walk scene (run_humanoid3d_walk_wheel_args.txt) with spec['model'] loaded, test
    mode: per episode (up to its 20 s cap or a fall) its reward per policy step."""
    from tests.bench.older_port import QuietStdout
    from tests.oracle.wheel_port import import_port

    with tempfile.TemporaryDirectory(prefix="port_eval_") as tmp:
        with QuietStdout(Path(tmp) / "stdout.txt"):
            testrl = import_port()
            world = port_world(testrl, ["--arg_file", "run_humanoid3d_walk_wheel_args.txt"], spec["seed"])
            agent, env = world.agents[0], world.env
            agent.load_model(spec["model"])
            episodes = []
            for _ in range(spec["episodes"]):
                world.reset()
                while not env.is_episode_end():
                    world.update(PORT_RATE)
                episodes.append({"length_s": env.t, "fell": env.t <= 20,
                                 "mean_reward": sum(agent.path.rewards) / max(len(agent.path.rewards), 1),
                                 "num_decisions": len(agent.path.rewards)})
                world.end_episode()
    n = len(episodes)
    return {"episodes": n, "falls": sum(e["fell"] for e in episodes),
            "mean_reward_per_decision": sum(e["mean_reward"] for e in episodes) / n,
            "mean_length_s": sum(e["length_s"] for e in episodes) / n,
            "mean_return": sum(e["mean_reward"] * e["num_decisions"] for e in episodes) / n}


WORKERS = {"port_train": port_train_worker, "port_eval": port_eval_worker, "ours_eval": eval_worker}


def run_child(kind, spec, timeout):
    return run_worker(MODULE, {**spec, "kind": kind}, timeout=timeout)


# ---- stages --------------------------------------------------------------------------------------

def train_port(out_dir, seeds, samples):
    """The port's seeds in parallel, one process each (it runs one process per training)."""
    import subprocess
    procs = {}
    for seed in seeds:
        run = out_dir / f"port_{seed}"
        run.mkdir(parents=True, exist_ok=True)
        spec = {"kind": "port_train", "out": str(run), "seed": seed, "samples": samples}
        procs[seed] = subprocess.Popen([PYTHON, "-m", MODULE, "--worker", json.dumps(spec)], cwd=ROOT,
                                       env=child_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    for seed, proc in procs.items():
        stdout, stderr = proc.communicate()
        line = next((l for l in reversed(stdout.splitlines()) if l.startswith(RESULT_PREFIX)), None)
        if line is None:
            raise SystemExit(f"port training, seed {seed}, failed (exit {proc.returncode}):\n{stderr[-2000:]}")
        write_json(out_dir / f"port_{seed}" / "training.json", json.loads(line[len(RESULT_PREFIX):]))
        print(f"port seed {seed}: {line}", flush=True)


def train_ours(out_dir, seeds, samples, num_workers):
    for seed in seeds:
        run = out_dir / f"ours_{seed}"
        run.mkdir(parents=True, exist_ok=True)
        training = train(OUR_ARGS, run, samples, num_workers, seed, our_agent_args())
        training.update(training_summary(read_log(run / LOG_NAME), training["wall_s"]))
        write_json(run / "training.json", training)


def evaluate_all(out_dir, seeds, episodes, episode_time, sides=("port", "ours")):
    """{side_seed: {"in_ours": ..., "in_port": ...}} for every trained policy of `sides`; each
    policy's cell is also kept in its run folder (eval.json), so sides can be evaluated apart."""
    results = {}
    for side in sides:
        for seed in seeds:
            run = out_dir / f"{side}_{seed}"
            model = str(run / MODEL_NAME)
            if not (run / "training.json").is_file():
                results[f"{side}_{seed}"] = {"status": f"not trained: no {run / 'training.json'}"}
                continue
            cell = {}
            ours_spec = {"arg_file": OUR_ARGS, "seed": 100 + seed, "agent_args": our_agent_args(),
                         "episodes": episodes, "episode_time": episode_time, "model": model,
                         "scratch": str(run / "eval_scratch")}
            for name, kind, spec in (("in_ours", "ours_eval", ours_spec),
                                     ("in_port", "port_eval", {"model": model, "seed": 100 + seed,
                                                               "episodes": episodes})):
                try:
                    cell[name] = run_child(kind, spec, timeout=3600)
                except SystemExit as failure:
                    cell[name] = {"status": f"unavailable: {str(failure).splitlines()[-1]}"}
                print(f"{side} seed {seed} {name}: {json.dumps(cell[name])[:300]}", flush=True)
            write_json(run / "eval.json", cell)
            results[f"{side}_{seed}"] = cell
    return results


def stored_evaluations(out_dir, seeds):
    """The eval.json of every run folder that has one."""
    cells = {}
    for side in ("port", "ours"):
        for seed in seeds:
            path = out_dir / f"{side}_{seed}" / "eval.json"
            if path.is_file():
                cells[f"{side}_{seed}"] = json.loads(path.read_text())
    return cells


def spread(values):
    import numpy as np
    return {"mean": float(np.mean(values)), "min": float(np.min(values)), "max": float(np.max(values))}


def summarise(out_dir, seeds, evaluation):
    """Per side and scene: reward per decision, length and falls over the seeds (mean, min, max)."""
    summary = {}
    for side in ("port", "ours"):
        for scene in ("in_ours", "in_port"):
            cells = [evaluation.get(f"{side}_{s}", {}).get(scene, {}) for s in seeds]
            cells = [c for c in cells if "mean_reward_per_decision" in c]
            if cells:
                summary[f"{side}_{scene}"] = {
                    "seeds": len(cells),
                    "return": spread([c["mean_return"] for c in cells]),
                    "reward_per_decision": spread([c["mean_reward_per_decision"] for c in cells]),
                    "length_s": spread([c["mean_length_s"] for c in cells]),
                    "falls": [c["falls"] for c in cells], "episodes": cells[0]["episodes"]}
    training = {}
    for side in ("port", "ours"):
        rates = []
        for seed in seeds:
            path = out_dir / f"{side}_{seed}" / "training.json"
            if path.is_file():
                rates.append(json.loads(path.read_text())["samples_per_s_overall"])
        if rates:
            training[side] = {"samples_per_s_overall": spread(rates)}
    return {"evaluation": summary, "training": training}


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--worker"]:
        spec = json.loads(argv[1])
        print(RESULT_PREFIX + json.dumps(WORKERS[spec.pop("kind")](spec)), flush=True)
        return 0
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--samples", type=int, default=300000)
    p.add_argument("--seeds", type=int, nargs="+", default=[1, 2])
    p.add_argument("--num_workers", type=int, default=2, help="our ranks")
    p.add_argument("--output", default="output/equal_budget")
    p.add_argument("--stage", default="all", choices=["all", "train_port", "train_ours", "evaluate"])
    p.add_argument("--episodes", type=int, default=8)
    p.add_argument("--episode_time", type=float, default=20.0, help="our scene's episode cut (s)")
    p.add_argument("--sides", nargs="+", default=["port", "ours"], choices=["port", "ours"],
                   help="which side's policies the evaluate stage evaluates")
    p.add_argument("--json", help="write the result to this file as well")
    args = p.parse_args(argv)
    out_dir = Path(args.output).resolve()
    out_dir.mkdir(parents=True, exist_ok=True)
    if args.stage in ("all", "train_port"):
        train_port(out_dir, args.seeds, args.samples)
    if args.stage in ("all", "train_ours"):
        train_ours(out_dir, args.seeds, args.samples, args.num_workers)
    if args.stage in ("all", "evaluate"):
        evaluate_all(out_dir, args.seeds, args.episodes, args.episode_time, args.sides)
        evaluation = stored_evaluations(out_dir, args.seeds)
        result = {"config": vars(args), "per_policy": evaluation,
                  **summarise(out_dir, args.seeds, evaluation)}
        write_json(out_dir / "results.json", result)
        if args.json:
            write_json(args.json, result)
        print(json.dumps(result["evaluation"], indent=1), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
