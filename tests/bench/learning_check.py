"""Learning check (issue 4): does PPO on the walk skill improve the test return within a budget?

    .venv/bin/python -m tests.bench.learning_check [--samples 300000] [--num_workers 2]
        [--output DIR] [--seed 1] [--episodes 16] [--episode_time 4] [--json FILE]
        [--actor_stepsize X] [--critic_stepsize Y] [--eval_only]

1. Training: mpi_run.py --num_workers N --arg_file args/train_humanoid3d_walk_args.txt
   --max_samples S --rand_seed SEED into DIR (a temporary folder unless --output is given; the
   optimizer's output goes to DIR/train_stdout.txt and to this terminal). The agent file is the
   args file's (DeepMimic's hyperparameters); --actor_stepsize / --critic_stepsize write a copy of
   it with ActorStepsize / CriticStepsize replaced (DIR/agent_file.txt) and train with that copy.
   --eval_only skips training and evaluates DIR's existing run.
2. Evaluation, each policy in a process of its own built with the same --rand_seed (so both see
   the same initial states): the untrained policy (a fresh agent: the weights training started
   from) and the trained checkpoint DIR/agent0_model.ckpt, in test mode (mean actions), over
   --episodes episodes cut at --episode_time seconds (app/evaluate.py).
3. Report: per policy the mean return per episode (sum of rewards), mean reward per decision and
   mean episode length (and falls); training wall time and samples/s; the log's rows
   (Iteration, Samples, Train_Return, Test_Return). The log's Test_Return comes from the agent's
   own test phases, which run after the first batch (the untrained policy) and then every
   IntOutputIters (200) iterations, i.e. not within a 300k budget: the evaluation of step 2 is
   the test return after the budget.
PASS when the trained policy's mean test return per episode beats the untrained policy's.
"""
import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if __package__ in (None, ""):
    sys.path.insert(0, str(ROOT))

from app.eval_worker import PYTHON, RESULT_PREFIX, build_eval_world, child_env, run_worker  # noqa: E402,F401
from util.atomic_write import write_json  # noqa: E402

TRAIN_ARGS = "args/train_humanoid3d_walk_args.txt"
MODEL_NAME = "agent0_model.ckpt"
LOG_NAME = "agent0_log.txt"
LOG_COLUMNS = ("Iteration", "Samples", "Train_Return", "Test_Return")
STEPSIZE_KEYS = {"actor_stepsize": "ActorStepsize", "critic_stepsize": "CriticStepsize"}


# ---- training ------------------------------------------------------------------------------------

def write_agent_copy(arg_file, overrides, out_dir):
    """--agent_files args naming a copy of arg_file's agent file with `overrides` (JSON keys)
    replaced or added (the agent's config rejects unknown keys), written to
    out_dir/agent_file.txt; no args without overrides."""
    from util.arg_parser import load_args
    from util.paths import resolve_data_path

    if not overrides:
        return []
    agent_file = load_args(["--arg_file", str(ROOT / arg_file)]).parse_strings("agent_files")[0]
    agent = json.loads(resolve_data_path(agent_file).read_text())
    agent.update(overrides)
    path = Path(out_dir) / "agent_file.txt"
    path.write_text(json.dumps(agent, indent=1) + "\n")
    return ["--agent_files", str(path)]


def run_logged(cmd, log_path):
    """Runs cmd in the project root, its output (stdout and stderr) copied to log_path and to this
    terminal; (return code, seconds). Ctrl-C ends the child's whole process group."""
    start = time.perf_counter()
    with open(log_path, "w") as log:
        proc = subprocess.Popen(cmd, cwd=ROOT, env=child_env(), stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True, start_new_session=True)
        try:
            for line in proc.stdout:
                log.write(line)
                log.flush()
                print(line, end="", flush=True)
            code = proc.wait()
        except KeyboardInterrupt:
            os.killpg(proc.pid, signal.SIGTERM)
            raise
    return code, time.perf_counter() - start


def train(arg_file, out_dir, samples, num_workers, seed, agent_args):
    """Trains into out_dir; {wall_s, command}. Raises SystemExit if the run fails."""
    cmd = [PYTHON, "mpi_run.py", "--num_workers", str(num_workers), "--arg_file", arg_file,
           "--max_samples", str(samples), "--rand_seed", str(seed), "--output_path", str(out_dir),
           "--int_output_path", str(Path(out_dir) / "intermediate"), *agent_args]
    print("training:", " ".join(cmd[1:]), flush=True)
    code, wall = run_logged(cmd, Path(out_dir) / "train_stdout.txt")
    if code != 0:
        raise SystemExit(f"training failed (exit code {code}); see {out_dir}/train_stdout.txt")
    return {"wall_s": wall, "command": " ".join(cmd[1:])}


def read_log(path):
    """Rows of a DeepMimic log table (a header of column names, then one row per iteration)."""
    if not Path(path).is_file():
        raise SystemExit(f"{path}: no log (the budget must exceed the first batch, BatchSize samples)")
    lines = [line.split() for line in Path(path).read_text().splitlines() if line.strip()]
    if not lines or "Iteration" not in lines[0]:
        raise SystemExit(f"{path}: no header line with 'Iteration'")
    names = lines[0]
    return [dict(zip(names, map(float, cols))) for cols in lines[1:] if len(cols) == len(names)]


def training_summary(rows, wall_s, columns=LOG_COLUMNS):
    """Samples/s (from the log's Wall_Time between its second and last rows, so without start-up
    and the first iteration's tracing; and over the whole process), and the logged columns."""
    if not rows:
        raise SystemExit("the training log has no iteration rows")
    last = rows[-1]
    summary = {"iterations": int(last["Iteration"]) + 1, "samples": int(last["Samples"]),
               "samples_per_s_overall": last["Samples"] / wall_s}
    if len(rows) >= 3:
        first = rows[1]
        summary["samples_per_s_steady"] = ((last["Samples"] - first["Samples"])
                                           / ((last["Wall_Time"] - first["Wall_Time"]) * 3600))
    summary["last_rows"] = [{k: r[k] for k in columns} for r in rows[-3:]]
    summary["rows"] = [[r[k] for k in columns] for r in rows]
    summary["row_columns"] = list(columns)
    return summary


# ---- evaluation ----------------------------------------------------------------------------------

def episode_summary(stats):
    """Means over the episodes of app.evaluate's EpisodeStats."""
    import numpy as np

    returns = [s.mean_reward * s.num_decisions for s in stats]
    return {"episodes": len(stats), "falls": int(sum(s.fell for s in stats)),
            "mean_return": float(np.mean(returns)),
            "mean_reward_per_decision": float(np.mean([s.mean_reward for s in stats])),
            "mean_length_s": float(np.mean([s.length_s for s in stats])),
            "mean_decisions": float(np.mean([s.num_decisions for s in stats])),
            "returns": [float(r) for r in returns],
            "lengths_s": [float(s.length_s) for s in stats]}


def eval_worker(spec):
    from app.evaluate import evaluate

    world = build_eval_world(spec)
    try:
        start = time.perf_counter()
        stats = evaluate(world, spec["episodes"], max_episode_time=spec["episode_time"])
        return {**episode_summary(stats), "eval_wall_s": time.perf_counter() - start}
    finally:
        world.shutdown()


def evaluate_policies(module, base_spec, out_dir):
    """{"untrained": ..., "trained": ...}: the same episodes' seed, fresh agent vs checkpoint."""
    results = {}
    for name, model in (("untrained", "none"), ("trained", str(Path(out_dir) / MODEL_NAME))):
        print(f"evaluating the {name} policy ({base_spec['episodes']} episodes of at most "
              f"{base_spec['episode_time']} s)...", flush=True)
        results[name] = run_worker(module, {**base_spec, "model": model,
                                            "scratch": str(Path(out_dir) / f"eval_{name}")})
    return results


# ---- report --------------------------------------------------------------------------------------



def format_policy(name, r):
    return (f"{name:>9}: return/episode {r['mean_return']:8.3f} | reward/decision "
            f"{r['mean_reward_per_decision']:.4f} | length {r['mean_length_s']:.2f} s "
            f"({r['mean_decisions']:.1f} decisions) | falls {r['falls']}/{r['episodes']}")


def format_report(result):
    t, ev = result["training"], result["evaluation"]
    lines = [f"training: {t['samples']:,} samples, {t['iterations']} iterations, {t['wall_s'] / 60:.1f} min, "
             f"{t['samples_per_s_overall']:.1f} samples/s overall"
             + (f", {t['samples_per_s_steady']:.1f} samples/s steady" if "samples_per_s_steady" in t else ""),
             "log, last rows: " + "; ".join(
                 f"iter {int(r['Iteration'])} samples {int(r['Samples'])} Train_Return {r['Train_Return']:.4f} "
                 f"Test_Return {r['Test_Return']:.4f}" for r in t["last_rows"]),
             format_policy("untrained", ev["untrained"]), format_policy("trained", ev["trained"]),
             f"{'PASS' if result['pass'] else 'FAIL'}: {result['criterion']} "
             f"({ev['trained']['mean_return']:.3f} vs {ev['untrained']['mean_return']:.3f})"]
    return "\n".join(lines)


def parse_args(argv, samples=300000, arg_file=TRAIN_ARGS, description=__doc__):
    p = argparse.ArgumentParser(description=description.split("\n")[0])
    p.add_argument("--samples", type=int, default=samples, help="training sample budget (all ranks)")
    p.add_argument("--num_workers", type=int, default=2)
    p.add_argument("--arg_file", default=arg_file)
    p.add_argument("--output", help="run folder (default: a temporary one, deleted afterwards)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--episodes", type=int, default=16)
    p.add_argument("--episode_time", type=float, default=4.0, help="seconds an episode is cut at")
    p.add_argument("--eval_only", action="store_true", help="evaluate --output's existing run")
    p.add_argument("--json", help="write the result to this file")
    for flag, json_key in STEPSIZE_KEYS.items():
        p.add_argument(f"--{flag}", type=float, help=f"override the agent file's {json_key}")
    p.add_argument("--agent_set", action="append", default=[], metavar="KEY=JSON",
                   help="set an agent-file key (repeatable), e.g. --agent_set DiscLoss='\"bce\"'")
    args = p.parse_args(argv)
    if args.eval_only and not args.output:
        p.error("--eval_only needs --output (the run to evaluate)")
    return args


def train_or_reuse(args, out_dir, agent_args):
    """Trains into out_dir (its wall time kept in out_dir/train_wall.json), or with eval_only
    reads that file of an earlier run."""
    wall_file = Path(out_dir) / "train_wall.json"
    if args.eval_only:
        if not wall_file.is_file():
            raise SystemExit(f"{wall_file}: not found (--eval_only needs a run made by this script)")
        return json.loads(wall_file.read_text())
    training = train(args.arg_file, out_dir, args.samples, args.num_workers, args.seed, agent_args)
    write_json(wall_file, training)
    return training


def parse_agent_set(items, flag="--agent_set"):
    """{key: value} of KEY=JSON items (agent-file overrides); a malformed item exits with one line."""
    overrides = {}
    for item in items:
        json_key, sep, value = item.partition("=")
        if not sep:
            raise SystemExit(f"{flag} {item!r}: expected KEY=JSON")
        try:
            overrides[json_key] = json.loads(value)
        except json.JSONDecodeError:
            raise SystemExit(f"{flag} {item!r}: {value!r} is not JSON") from None
    return overrides


def run_check(args, out_dir, worker_module, log_columns=LOG_COLUMNS, evaluate_fn=evaluate_policies):
    """Trains (unless eval_only) and evaluates; {config, training, evaluation}."""
    overrides = {json_key: getattr(args, flag) for flag, json_key in STEPSIZE_KEYS.items()
                 if getattr(args, flag) is not None}
    overrides.update(parse_agent_set(args.agent_set))
    agent_args = write_agent_copy(args.arg_file, overrides, out_dir)
    training = train_or_reuse(args, out_dir, agent_args)
    training.update(training_summary(read_log(Path(out_dir) / LOG_NAME), training["wall_s"], log_columns))
    spec = {"arg_file": args.arg_file, "seed": args.seed, "agent_args": agent_args,
            "episodes": args.episodes, "episode_time": args.episode_time}
    evaluation = evaluate_fn(worker_module, spec, out_dir)
    config = {"arg_file": args.arg_file, "samples": args.samples, "num_workers": args.num_workers,
              "seed": args.seed, "episodes": args.episodes, "episode_time": args.episode_time,
              "agent_overrides": overrides, "output": str(out_dir)}
    return {"config": config, "training": training, "evaluation": evaluation}


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--worker"]:
        print(RESULT_PREFIX + json.dumps(eval_worker(json.loads(argv[1]))), flush=True)
        return 0
    args = parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="learning_check_") as tmp:
        out_dir = Path(args.output or tmp).resolve()
        out_dir.mkdir(parents=True, exist_ok=True)
        result = run_check(args, out_dir, "tests.bench.learning_check")
    ev = result["evaluation"]
    result["criterion"] = "test return after the budget beats the untrained policy's"
    result["pass"] = ev["trained"]["mean_return"] > ev["untrained"]["mean_return"]
    print(format_report(result), flush=True)
    if args.json:
        write_json(args.json, result)
    return 0 if result["pass"] else 1


if __name__ == "__main__":
    sys.exit(main())
