"""Throughput benchmark (issue 7): samples per second, measured in one run and compared as ratios.

    .venv/bin/python -m tests.bench.throughput [--quick] [--json FILE]

Sections (each of (b)-(e) runs in a process of its own, with OPENBLAS_NUM_THREADS=1 as
DeepMimic_Optimizer.py sets it; a section whose entry point is missing reports
"unavailable: <reason>", one that crashes "failed: <reason>", and the run goes on):
  (a) physics floor (physics_floor.py): the humanoid under stable PD, nothing but the PD command
      and stepSimulation, decisions/s for A (PD re-sent before every 1/1200 s step), B
      (DeepMimic's scheme: 1/600 s steps of 2 sub-steps) and C (1/240 s, the older port's rate).
      Measured at the start and again at the end of the run; the mean is used, and the change
      between the two shows how much the machine's speed drifted meanwhile.
  (b) our scene sampling: learning.rl_world.build_world(arg_parser) (DeepMimicEnv + RLWorld)
      from args/train_humanoid3d_walk_args.txt at faithful rates, set_enable_training(False)
      (the agent acts with its mean action and stores nothing) but the env kept in TRAIN mode
      (training's episode-length limits, so that episodes and resets are those of (c)), driven
      by learning.rl_world.update_world (1/60 s frames of num_update_substeps updates; an ended
      or invalid episode is reset). Policy decisions (env.set_action calls) per wall second,
      resets included, after one simulated second of warm-up.
  (c) training, DeepMimic_Optimizer.py --arg_file args/train_humanoid3d_walk_args.txt
      --max_samples N (1 rank) and mpi_run.py --num_workers 2 ... (2 ranks): samples/s read from
      output/agent0_log.txt (Iteration, Wall_Time in hours, Samples, ... a row per iteration)
      between the second and the last row (the first iteration carries TF's tracing), or
      between the first and last if there are only two; with fewer rows, from the process wall
      time (start-up included, marked so).
  (d) as (c) at 1 rank with --num_update_substeps 4 --num_sim_substeps 1 (1/240 s physics).
  (e) the older port in the pybullet wheel at its own settings (older_port.py): training
      samples/s after its initial test phase; in the full run also its pretrained walk policy's
      mean reward per policy step.
--quick (under 3 minutes) times less and trains with a copy of the agent file (in a temporary
folder) with BatchSize 256 (one minibatch) instead of 4096, and TestEpisodes 0 (no test phase
before the first iteration, which is not timed anyway): the update's share of an iteration stays
roughly the same, its cost being proportional to the batch, but per-iteration overheads weigh
more. The older port is timed over 500 samples without a PPO
update in quick mode (over 2 whole iterations in the full run).

Ratios, with the targets of issue 7: (b)/(a-A) >= 1.3, (c)/(b) >= 0.9, (c 2 ranks)/(c 1 rank)
>= 1.9, (d)/(e) >= 4. The machine is shared: compare ratios from one run, not figures across runs.
"""
import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if __package__ in (None, ""):
    sys.path.insert(0, str(ROOT))

from tests.bench import physics_floor  # noqa: E402

PYTHON = sys.executable
TRAIN_ARGS = "args/train_humanoid3d_walk_args.txt"
PORT_RATE_ARGS = ["--num_update_substeps", "4", "--num_sim_substeps", "1"]
FAITHFUL_RATE_ARGS = ["--num_update_substeps", "10", "--num_sim_substeps", "2"]
FRAME_TIME = 1.0 / 60.0
TRAIN_ITERS = 4  # PPO iterations a training section asks for; the first is not timed
TARGETS = {"b/a_A": 1.3, "c1/b": 0.9, "c2/c1": 1.9, "d/e": 4.0}


@dataclass(frozen=True)
class Budget:
    floor_seconds: float     # per scheme, per measurement (start and end)
    sampling_seconds: float
    agent_overrides: tuple   # (key, value) pairs replacing the PPO agent file's, for training runs
    port_samples: int        # older port: samples timed (quick) ...
    port_iters: int          # ... or whole iterations (full)
    walk_episodes: int       # older port's pretrained walk policy; 0 skips
    timeout: float           # per subprocess


QUICK = Budget(floor_seconds=1.5, sampling_seconds=6.0, agent_overrides=(("BatchSize", 256), ("TestEpisodes", 0)),
               port_samples=500, port_iters=0, walk_episodes=0, timeout=170.0)
FULL = Budget(floor_seconds=6.0, sampling_seconds=30.0, agent_overrides=(), port_samples=0, port_iters=2,
              walk_episodes=5, timeout=900.0)


# ---- subprocesses ----------------------------------------------------------------------------

def run_child(cmd, timeout):
    """(return code, stdout, stderr, seconds) of `cmd` run in the project root; the child's
    process group is ended on timeout. Every child gets single-threaded BLAS, as
    DeepMimic_Optimizer.py sets it for training (multi-threaded OpenBLAS halves the sampling
    rate on this loaded 2-core machine), so that all sections run alike."""
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2", PYTHONUNBUFFERED="1", OPENBLAS_NUM_THREADS="1")
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        return None, out, err + f"\ntimed out after {timeout:.0f} s", time.perf_counter() - start
    return proc.returncode, out, err, time.perf_counter() - start


def last_error_line(text):
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1].strip() if lines else "no output"


def result_line(stdout):
    """The dict printed as `RESULT {json}` by a worker."""
    for line in reversed(stdout.splitlines()):
        if line.startswith("RESULT "):
            return json.loads(line[len("RESULT "):])
    raise ValueError("no RESULT line")


def missing(*files):
    absent = [f for f in dict.fromkeys(files) if not (ROOT / f).is_file()]
    return {"status": f"unavailable: {', '.join(absent)} not found"} if absent else None


# ---- (a) floors --------------------------------------------------------------------------------

def measure_floors(budget):
    return {"status": "ok", **physics_floor.measure_all(budget.floor_seconds)}


def merge_floors(start, end):
    """Mean decisions/s of the floor measurements at the start and the end of the run, and the
    drift from one to the other (either alone if the other failed)."""
    done = [f for f in (start, end) if f.get("status") == "ok"]
    if not done:
        return start
    merged = {"status": "ok"}
    for name in (s.name for s in physics_floor.SCHEMES):
        rates = [f[name]["decisions_per_s"] for f in done]
        merged[name] = dict(done[0][name], decisions_per_s=sum(rates) / len(rates), measured_decisions_per_s=rates)
    if len(done) == 2:
        merged["drift_end_over_start"] = end["A"]["decisions_per_s"] / start["A"]["decisions_per_s"]
    return merged


# ---- (b) our scene sampling --------------------------------------------------------------------

def sampling_worker(seconds, out_dir):
    """Runs in the child process of section (b)."""
    from env.env import Mode
    from learning.rl_world import WorldEvent, build_world, update_world
    from util.arg_parser import load_args

    args = load_args(["--arg_file", TRAIN_ARGS, *FAITHFUL_RATE_ARGS, "--output_path", f"{out_dir}/output",
                      "--int_output_path", f"{out_dir}/output/intermediate"])
    world = build_world(args, enable_draw=False)
    world.set_enable_training(False)
    world.env.set_mode(Mode.TRAIN)  # training's episode-length limits, as in section (c)
    env = world.env
    counts = {"decisions": 0, "reward": 0.0, "rewards": 0}
    set_action, calc_reward = env.set_action, env.calc_reward

    def counted_set_action(agent_id, action):
        counts["decisions"] += 1
        set_action(agent_id, action)

    def counted_calc_reward(agent_id):
        reward = calc_reward(agent_id)
        counts["reward"] += reward
        counts["rewards"] += 1
        return reward

    env.set_action, env.calc_reward = counted_set_action, counted_calc_reward
    for _ in range(60):  # one simulated second: TF tracing and first-call costs
        update_world(world, FRAME_TIME)
    counts.update(decisions=0, reward=0.0, rewards=0)
    episodes, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        episodes += update_world(world, FRAME_TIME) != WorldEvent.NONE
    elapsed = time.perf_counter() - start
    return {
        "samples_per_s": counts["decisions"] / elapsed,
        "decisions": counts["decisions"],
        "seconds": elapsed,
        "episodes_ended": episodes,
        "mean_decisions_per_episode": counts["decisions"] / max(episodes, 1),
        "mean_reward_per_step": counts["reward"] / max(counts["rewards"], 1),
    }


def measure_sampling(budget):
    absent = missing("env/deepmimic_env.py", "learning/rl_world.py", TRAIN_ARGS)
    if absent:
        return absent
    cmd = [PYTHON, "-m", "tests.bench.throughput", "--worker", "sampling",
           "--seconds", str(budget.sampling_seconds)]
    return child_result(cmd, budget.timeout)


def child_result(cmd, timeout):
    code, out, err, _ = run_child(cmd, timeout)
    if code != 0:
        return {"status": f"failed: {last_error_line(err)}"}
    try:
        return {"status": "ok", **result_line(out)}
    except ValueError as exc:
        return {"status": f"failed: {exc}"}


# ---- (c), (d) training -------------------------------------------------------------------------

def read_log(path):
    """Rows of a DeepMimic log table (header line of column names, then rows of numbers)."""
    lines = [line.split() for line in Path(path).read_text().splitlines() if line.strip()]
    header = next((i for i, cols in enumerate(lines) if "Iteration" in cols), None)
    if header is None:
        raise ValueError(f"{path}: no header line with 'Iteration'")
    names = lines[header]
    return [dict(zip(names, map(float, cols))) for cols in lines[header + 1:] if len(cols) == len(names)]


def agent_file_args(overrides, out_dir):
    """(extra args, batch size): with overrides, a copy of the train args' agent file with those
    keys replaced, in out_dir, and --agent_files naming it; else no args."""
    from util.arg_parser import load_args
    from util.paths import resolve_data_path

    agent_file = load_args(["--arg_file", str(ROOT / TRAIN_ARGS)]).parse_strings("agent_files")[0]
    agent = json.loads(resolve_data_path(agent_file).read_text())
    if not overrides:
        return [], int(agent["BatchSize"])
    agent.update(overrides)
    path = Path(out_dir) / "agent_quick.txt"
    path.write_text(json.dumps(agent, indent=1))
    return ["--agent_files", str(path)], int(agent["BatchSize"])


def samples_per_s_from_log(rows, wall_seconds):
    if len(rows) >= 2:
        first = rows[1] if len(rows) >= 3 else rows[0]
        last = rows[-1]
        hours = last["Wall_Time"] - first["Wall_Time"]
        return {"samples_per_s": (last["Samples"] - first["Samples"]) / (hours * 3600),
                "timed_iterations": int(last["Iteration"] - first["Iteration"]),
                "timed_samples": int(last["Samples"] - first["Samples"]), "includes_startup": False}
    samples = rows[-1]["Samples"]
    return {"samples_per_s": samples / wall_seconds, "timed_samples": int(samples), "includes_startup": True}


def measure_training(budget, ranks, extra_args=()):
    entry = "DeepMimic_Optimizer.py" if ranks == 1 else "mpi_run.py"
    absent = missing(entry, "DeepMimic_Optimizer.py")
    if absent:
        return absent
    with tempfile.TemporaryDirectory(prefix="bench_train_") as out_dir:
        try:
            agent_args, batch = agent_file_args(budget.agent_overrides, out_dir)
        except (OSError, ValueError, KeyError, IndexError) as exc:
            return {"status": f"failed: agent file: {exc}"}
        output = f"{out_dir}/output"
        launcher = [PYTHON, entry] if ranks == 1 else [PYTHON, entry, "--num_workers", str(ranks)]
        cmd = [*launcher, "--arg_file", TRAIN_ARGS, "--max_samples", str(batch * TRAIN_ITERS + batch // 2),
               "--output_path", output, "--int_output_path", f"{output}/intermediate",
               *agent_args, *extra_args]
        code, out, err, wall = run_child(cmd, budget.timeout)
        log = Path(output) / "agent0_log.txt"
        if code != 0:
            return {"status": f"failed: {last_error_line(err)}"}
        if not log.is_file():
            return {"status": f"failed: no {log.name} written"}
        try:
            rows = read_log(log)
        except (ValueError, KeyError) as exc:
            return {"status": f"failed: {exc}"}
        if not rows:
            return {"status": f"failed: {log.name} has no iteration rows"}
    result = samples_per_s_from_log(rows, wall)
    return {"status": "ok", "ranks": ranks, "batch_size": batch, "iterations": len(rows),
            "process_seconds": wall, **result}


# ---- (e) the older port ------------------------------------------------------------------------

def measure_older_port(budget):
    budget_args = ["--iters", str(budget.port_iters)] if budget.port_iters else ["--samples", str(budget.port_samples)]
    result = child_result([PYTHON, str(ROOT / "tests/bench/older_port.py"), "train", *budget_args], budget.timeout)
    if budget.walk_episodes and result["status"] == "ok":
        walk = child_result([PYTHON, str(ROOT / "tests/bench/older_port.py"), "walk",
                             "--episodes", str(budget.walk_episodes)], budget.timeout)
        result["walk_policy"] = walk
    return result


# ---- report ------------------------------------------------------------------------------------

def rate(section, key="samples_per_s"):
    return section.get(key) if section.get("status") == "ok" else None


def compute_ratios(r):
    floor = r["a"]
    floor_a = floor["A"]["decisions_per_s"] if floor.get("status") == "ok" else None
    pairs = {
        "b/a_A": (rate(r["b"]), floor_a),
        "c1/b": (rate(r["c1"]), rate(r["b"])),
        "c2/c1": (rate(r["c2"]), rate(r["c1"])),
        "d/e": (rate(r["d"]), rate(r["e"])),
    }
    return {name: (num / den if num is not None and den else None) for name, (num, den) in pairs.items()}


ROW_LABELS = [
    ("a", "A", "(a-A) floor: stable PD before every 1/1200 s step"),
    ("a", "B", "(a-B) floor: DeepMimic's 1/600 s PD, 2 sub-steps"),
    ("a", "C", "(a-C) floor: 1/240 s (older port's rate)"),
    ("b", None, "(b)   our scene sampling, faithful rates"),
    ("c1", None, "(c)   training, 1 rank, faithful rates"),
    ("c2", None, "(c)   training, 2 ranks, faithful rates"),
    ("d", None, "(d)   training, 1 rank, 1/240 s physics"),
    ("e", None, "(e)   older port training, its own settings"),
]


def format_report(results, ratios):
    lines = [f"{'section':<50} {'per second':>12}  unit / status"]
    for key, scheme, label in ROW_LABELS:
        section = results[key]
        if section.get("status") != "ok":
            lines.append(f"{label:<50} {'-':>12}  {section.get('status')}")
        elif scheme:
            lines.append(f"{label:<50} {section[scheme]['decisions_per_s']:12.1f}  decisions/s")
        else:
            note = " (start-up included)" if section.get("includes_startup") else ""
            if section.get("iterations") == 0:
                note += " (no PPO update in the timed window)"
            lines.append(f"{label:<50} {section['samples_per_s']:12.1f}  samples/s{note}")
    if results["a"].get("status") == "ok" and "drift_end_over_start" in results["a"]:
        lines.append(f"machine speed drift over the run (floor A end/start): {results['a']['drift_end_over_start']:.2f}")
    walk = results["e"].get("walk_policy")
    if walk and walk.get("status") == "ok":
        lines.append(f"older port's walk policy: {walk['mean_reward_per_step']:.3f} mean reward per policy step, "
                     f"{walk['falls']} falls in {walk['episodes']} episodes, {walk['ms_per_policy_step']:.1f} ms per step")
    lines.append("")
    lines.append(f"{'ratio':<12} {'value':>7}  target")
    for name, value in ratios.items():
        verdict = "-" if value is None else ("ok" if value >= TARGETS[name] else "below")
        shown = "-" if value is None else f"{value:.2f}"
        lines.append(f"{name:<12} {shown:>7}  >= {TARGETS[name]}  {verdict}")
    return "\n".join(lines)


def write_json(path, data):
    tmp = Path(f"{path}.tmp")
    tmp.write_text(json.dumps(data, indent=2))
    os.replace(tmp, path)


def run(budget, quick):
    started, load_at_start = time.time(), os.getloadavg()
    results = {}
    steps = [
        ("a_start", lambda: measure_floors(budget)),
        ("b", lambda: measure_sampling(budget)),
        ("c1", lambda: measure_training(budget, 1)),
        ("c2", lambda: measure_training(budget, 2)),
        ("d", lambda: measure_training(budget, 1, PORT_RATE_ARGS)),
        ("e", lambda: measure_older_port(budget)),
        ("a_end", lambda: measure_floors(budget)),
    ]
    for key, measure in steps:
        print(f"[{time.time() - started:6.1f} s] measuring {key} ...", file=sys.stderr, flush=True)
        try:
            results[key] = measure()
        except Exception as exc:  # a section's failure must not end the run
            results[key] = {"status": f"failed: {type(exc).__name__}: {exc}"}
    results["a"] = merge_floors(results.pop("a_start"), results.pop("a_end"))
    ratios = compute_ratios(results)
    meta = {"mode": "quick" if quick else "full", "seconds": time.time() - started,
            "cpus": os.cpu_count(), "load_average_at_start": load_at_start,
            "load_average_at_end": os.getloadavg(), "budget": asdict(budget)}
    return {"meta": meta, "sections": results, "ratios": ratios, "targets": TARGETS}


def main(argv=None):
    parser = argparse.ArgumentParser(description="throughput benchmark (issue 7)")
    parser.add_argument("--quick", action="store_true", help="short timings, under 3 minutes")
    parser.add_argument("--json", help="write all figures to this file")
    parser.add_argument("--worker", choices=["sampling"], help=argparse.SUPPRESS)
    parser.add_argument("--seconds", type=float, default=FULL.sampling_seconds, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        with tempfile.TemporaryDirectory(prefix="bench_sampling_") as out_dir:
            print("RESULT " + json.dumps(sampling_worker(args.seconds, out_dir)), flush=True)
        return
    report = run(QUICK if args.quick else FULL, args.quick)
    print(format_report(report["sections"], report["ratios"]))
    if args.json:
        write_json(args.json, report)


if __name__ == "__main__":
    main()
