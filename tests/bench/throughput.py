"""Throughput benchmark (issue 7): samples per second, measured in one run and compared as ratios.

    .venv/bin/python -m tests.bench.throughput [--quick] [--json FILE] [--arg_file FILE]

This machine's speed swings up to 2x within seconds (a shared host: see the floor's per-second
rates in docs/bench), so a rate measured in one minute cannot be compared with one measured in the
next. Every section therefore runs its work in chunks of CHUNK_SECONDS of wall time, and between
two chunks times the physics floor (physics_floor.FloorProbe: the same humanoid under stable PD,
nothing but the PD command and stepSimulation) in the same process for PROBE_SECONDS per scheme.
Work and floor see the same machine, and each ratio below compares rates measured against the same
floor scheme. Rates are per second of work (the probes' time is left out).

Sections, each in a process of its own with OPENBLAS_NUM_THREADS=1 as DeepMimic_Optimizer.py sets
it (a section whose entry point is missing reports "unavailable: <reason>", one that crashes
"failed: <reason>", and the run goes on):
  (a) the physics floor, decisions/s, from the probes of section (b): A (PD re-sent before every
      1/1200 s step), B (DeepMimic's scheme: 1/600 s steps of 2 sub-steps), C (1/240 s, the older
      port's rate).
  (b) our scene sampling: app.build.build_world (DeepMimicEnv + RLWorld) from
      args/train_humanoid3d_walk_args.txt at faithful rates, the agent acting as in training
      (exploration noise, training's episode-length limits) but storing no path, so never
      training; driven by app.rollout.update_world (1/60 s frames; an ended or invalid
      episode is reset). (b), (c) and (d) use one seed (SEED_ARGS), hence one initial policy.
      Policy decisions (env.set_action calls) per second, resets included, after one simulated
      second of warm-up. Probes: A, B, C.
  (c) training as DeepMimic_Optimizer.py trains (build_world, then update_world frames until the
      sample budget), 1 rank, and 2 ranks under the mpiexec that mpi_run.py uses: global samples
      per second over whole PPO iterations (sampling + update; from the end of one update to the
      end of the last), after the first update and its test phase. Also the update's share of
      the time. Probe: B.
  (d) as (c), 1 rank, with --num_update_substeps 4 --num_sim_substeps 1 (1/240 s physics). Probe: C.
  (e) the older port in the pybullet wheel at its own settings (older_port.py): training samples/s
      after its initial test phase. Probe: C. In the full run also its pretrained walk policy's
      mean reward per policy step.
--arg_file replaces the walk args file of (b), (c) and (d) (e.g. args/train_humanoid3d_walk_fast_args.txt:
the fast recipe's sampling and its update's share at 1 and 2 ranks).
--quick (under 3 minutes) times less, and trains with a copy of the agent file (in a temporary
folder) with BatchSize 256 (one minibatch) instead of 4096 and TestEpisodes 0: the update's share
stays roughly the same (its cost is proportional to the batch) but per-iteration overheads weigh
more. The older port is timed over 500 samples without a PPO update in quick mode.

Ratios, with the targets of issue 7 (each against the floor scheme named):
  b/a_A   (b) / floor A, both from (b)'s process
  c1/b    (c1 / its B) / (b / its B)
  c2/c1   (c2 / its B) / (c1 / its B)     (2 ranks: the mean of the two ranks' probes)
  d/e     (d / its C) / (e / its C)
Targets: b/a_A >= 1.3, c1/b >= 0.9, c2/c1 >= 1.9, d/e >= 4. The raw ratios (without the floor
normalisation) are reported beside them.
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
from util.atomic_write import write_json  # noqa: E402
from util.cli import configure_process_env  # noqa: E402

PYTHON = sys.executable
TRAIN_ARGS = "args/train_humanoid3d_walk_args.txt"
PORT_RATE_ARGS = ["--num_update_substeps", "4", "--num_sim_substeps", "1"]
FAITHFUL_RATE_ARGS = ["--num_update_substeps", "10", "--num_sim_substeps", "2"]
# One seed for (b), (c), (d): the same initial policy, so the same kind of episodes (an untrained
# policy's falls make the physics' cost per decision vary by tens of percent from one net to another)
SEED_ARGS = ["--rand_seed", "7"]
FRAME_TIME = 1.0 / 60.0
CHUNK_SECONDS = 1.0    # work between two probes
PROBE_SECONDS = 0.2    # per floor scheme and probe (at least one 30-decision episode)
TARGETS = {"b/a_A": 1.3, "c1/b": 0.9, "c2/c1": 1.9, "d/e": 4.0}
SCHEMES = {s.name: s for s in physics_floor.SCHEMES}


@dataclass(frozen=True)
class Budget:
    sampling_seconds: float  # (b): seconds of sampling work
    agent_overrides: tuple   # (key, value) pairs replacing the PPO agent file's, for training runs
    train_iters: int         # (c), (d): whole PPO iterations timed
    port_samples: int        # older port: samples timed (quick) ...
    port_iters: int          # ... or whole iterations (full)
    walk_episodes: int       # older port's pretrained walk policy; 0 skips
    timeout: float           # per subprocess


QUICK = Budget(sampling_seconds=12.0, agent_overrides=(("BatchSize", 256), ("TestEpisodes", 0)), train_iters=8,
               port_samples=500, port_iters=0, walk_episodes=0, timeout=170.0)
FULL = Budget(sampling_seconds=60.0, agent_overrides=(), train_iters=3, port_samples=0, port_iters=2,
              walk_episodes=5, timeout=1200.0)


# ---- work interleaved with the floor -------------------------------------------------------------

class Interleaved:
    """Runs work in chunks of CHUNK_SECONDS with a floor probe after each; `work_seconds` is the time
    spent in the work alone."""

    def __init__(self, schemes):
        self.probe = physics_floor.FloorProbe([SCHEMES[name] for name in schemes])
        self.work_seconds = 0.0

    def chunk(self, step, done=lambda: False):
        """Calls step() until CHUNK_SECONDS have passed or done(); then probes. Returns whether
        done() became true."""
        start = time.perf_counter()
        finished = False
        while time.perf_counter() - start < CHUNK_SECONDS:
            step()
            if done():
                finished = True
                break
        self.work_seconds += time.perf_counter() - start
        self.probe.run(PROBE_SECONDS)
        return finished

    def floor(self):
        return self.probe.rates()


# ---- subprocesses ----------------------------------------------------------------------------

def run_child(cmd, timeout):
    """(return code, stdout, stderr, seconds) of `cmd` run in the project root; the child's
    process group is ended on timeout. Every child gets single-threaded BLAS, as
    DeepMimic_Optimizer.py sets it for training, so that all sections run alike."""
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2", PYTHONUNBUFFERED="1", OPENBLAS_NUM_THREADS="1")
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
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


def child_result(cmd, timeout):
    code, out, err, _ = run_child(cmd, timeout)
    if code != 0:
        return {"status": f"failed: {last_error_line(err)}"}
    try:
        return {"status": "ok", **result_line(out)}
    except ValueError as exc:
        return {"status": f"failed: {exc}"}


def missing(*files):
    absent = [f for f in dict.fromkeys(files) if not (ROOT / f).is_file()]
    return {"status": f"unavailable: {', '.join(absent)} not found"} if absent else None


WORKER_SCRIPT = ROOT / "tests/bench/throughput.py"


def worker_args(worker, *args):
    return ["--worker", worker, "--arg_file", TRAIN_ARGS, *map(str, args)]


def worker_command(worker, *args):
    return [PYTHON, str(WORKER_SCRIPT), *worker_args(worker, *args)]


# ---- (a), (b) sampling with the floor ----------------------------------------------------------

def sampling_worker(seconds, out_dir):
    """Runs in the child process of section (b)."""
    from app.build import build_world
    from app.rollout import WorldEvent, update_world
    from util.arg_parser import load_args

    args = load_args(["--arg_file", TRAIN_ARGS, *FAITHFUL_RATE_ARGS, *SEED_ARGS, "--output_path",
                      f"{out_dir}/output", "--int_output_path", f"{out_dir}/output/intermediate"])
    world = build_world(args, enable_draw=False)
    world.agents[0]._store_path = lambda path: -1   # acts as in training, stores and trains nothing
    env = world.env
    counts = {"decisions": 0, "reward": 0.0, "rewards": 0, "episodes": 0}
    set_action, calc_reward = env.set_action, env.calc_reward

    def counted_set_action(agent_id, action):
        counts["decisions"] += 1
        set_action(agent_id, action)

    def counted_calc_reward(agent_id):
        reward = calc_reward(agent_id)
        counts["reward"] += reward
        counts["rewards"] += 1
        return reward

    def frame():
        counts["episodes"] += update_world(world, FRAME_TIME) != WorldEvent.NONE

    env.set_action, env.calc_reward = counted_set_action, counted_calc_reward
    for _ in range(60):  # one simulated second: first-call costs
        frame()
    counts.update(decisions=0, reward=0.0, rewards=0, episodes=0)
    run = Interleaved(["A", "B", "C"])
    while run.work_seconds < seconds:
        run.chunk(frame)
    return {
        "samples_per_s": counts["decisions"] / run.work_seconds,
        "floor": run.floor(),
        "decisions": counts["decisions"],
        "seconds": run.work_seconds,
        "episodes_ended": counts["episodes"],
        "mean_decisions_per_episode": counts["decisions"] / max(counts["episodes"], 1),
        "mean_reward_per_step": counts["reward"] / max(counts["rewards"], 1),
    }


def measure_sampling(budget):
    absent = missing("env/deepmimic_env.py", "learning/rl_world.py", TRAIN_ARGS)
    if absent:
        return absent
    return child_result(worker_command("sampling", "--seconds", budget.sampling_seconds), budget.timeout)


# ---- (c), (d) training -------------------------------------------------------------------------

def train_worker(arg_list, iters, scheme):
    """Runs in each rank of sections (c) and (d): training as DeepMimic_Optimizer.train runs it,
    timed over `iters` whole iterations after the first update (and the test phase after it)."""
    from env.env import Mode
    from app.build import build_world
    from app.rollout import update_world
    from util import mpi_util
    from util.arg_parser import load_args

    world = build_world(load_args(arg_list), enable_draw=False)
    agent = world.agents[0]
    update = {"seconds": 0.0, "train_seconds": 0.0}
    agent._train_step = timed(agent._train_step, update, "seconds")
    agent._train = timed(agent._train, update, "train_seconds")
    while agent.iter < 1 or agent.mode != Mode.TRAIN:
        update_world(world, FRAME_TIME)
    start_iter, start_samples = agent.iter, agent.total_sample_count
    update.update(seconds=0.0, train_seconds=0.0)
    run = Interleaved([scheme])
    while not run.chunk(lambda: update_world(world, FRAME_TIME), lambda: agent.iter >= start_iter + iters):
        pass
    seconds = mpi_util.reduce_mean(run.work_seconds)   # the ranks' windows differ by their probes
    result = {
        "ranks": mpi_util.size(),
        "samples_per_s": (agent.total_sample_count - start_samples) / seconds,
        "floor": {scheme: mpi_util.reduce_mean(run.floor()[scheme])},
        "timed_samples": int(agent.total_sample_count - start_samples),
        "timed_iterations": int(agent.iter - start_iter),
        "seconds": seconds,
        "update_seconds": update["seconds"],
        "update_fraction": update["seconds"] / run.work_seconds,
        # the rest of the training round: waiting for the other ranks at its first collective,
        # normalisers, log row (per rank, the mean over ranks)
        "train_round_other_fraction": mpi_util.reduce_mean((update["train_seconds"] - update["seconds"])
                                                           / run.work_seconds),
        "batch_size": agent.config.batch_size,
    }
    world.shutdown()
    return result


def timed(fn, totals, key):
    """fn, adding its wall time to totals[key] at every call."""
    def wrapper():
        start = time.perf_counter()
        fn()
        totals[key] += time.perf_counter() - start
    return wrapper


def agent_file_args(overrides, out_dir):
    """With overrides, a copy of the train args' agent file with those keys replaced, in out_dir,
    and --agent_files naming it; else no args."""
    from util.arg_parser import load_args
    from util.paths import resolve_data_path

    if not overrides:
        return []
    agent_file = load_args(["--arg_file", str(ROOT / TRAIN_ARGS)]).parse_strings("agent_files")[0]
    agent = json.loads(resolve_data_path(agent_file).read_text())
    agent.update(overrides)
    path = Path(out_dir) / "agent_quick.txt"
    path.write_text(json.dumps(agent, indent=1))
    return ["--agent_files", str(path)]


def measure_training(budget, ranks, scheme, extra_args=()):
    absent = missing("DeepMimic_Optimizer.py", "mpi_run.py", "learning/rl_world.py", TRAIN_ARGS)
    if absent:
        return absent
    with tempfile.TemporaryDirectory(prefix="bench_train_") as out_dir:
        try:
            agent_args = agent_file_args(budget.agent_overrides, out_dir)
        except (OSError, ValueError, KeyError, IndexError) as exc:
            return {"status": f"failed: agent file: {exc}"}
        output = f"{out_dir}/output"
        train_args = ["--iters", budget.train_iters, "--scheme", scheme, "--",
                      "--arg_file", TRAIN_ARGS, *SEED_ARGS, "--output_path", output, "--int_output_path",
                      f"{output}/intermediate", *agent_args, *extra_args]
        if ranks == 1:
            cmd = worker_command("train", *train_args)
        else:
            import mpi_run
            cmd = mpi_run.mpiexec_command(ranks, worker_args("train", *train_args), script=WORKER_SCRIPT)
        return child_result(cmd, budget.timeout)


# ---- (e) the older port ------------------------------------------------------------------------

def measure_older_port(budget):
    budget_args = ["--iters", str(budget.port_iters)] if budget.port_iters else ["--samples", str(budget.port_samples)]
    port = str(ROOT / "tests/bench/older_port.py")
    result = child_result([PYTHON, port, "train", *budget_args, "--probe", "C"], budget.timeout)
    if budget.walk_episodes and result["status"] == "ok":
        result["walk_policy"] = child_result([PYTHON, port, "walk", "--episodes", str(budget.walk_episodes)],
                                             budget.timeout)
    return result


# ---- report ------------------------------------------------------------------------------------

def ok(section):
    return section.get("status") == "ok"


def compute_ratios(r):
    """{name: (floor-normalised ratio, raw ratio)}; None where a section is missing."""
    def per_floor(key, scheme):
        section = r[key]
        return section["samples_per_s"] / section["floor"][scheme] if ok(section) else None

    def raw(key):
        return r[key]["samples_per_s"] if ok(r[key]) else None

    def ratio(num, den):
        return num / den if num is not None and den else None

    floor_a = r["b"]["floor"]["A"] if ok(r["b"]) else None
    return {
        "b/a_A": (ratio(raw("b"), floor_a), ratio(raw("b"), floor_a)),
        "c1/b": (ratio(per_floor("c1", "B"), per_floor("b", "B")), ratio(raw("c1"), raw("b"))),
        "c2/c1": (ratio(per_floor("c2", "B"), per_floor("c1", "B")), ratio(raw("c2"), raw("c1"))),
        "d/e": (ratio(per_floor("d", "C"), per_floor("e", "C")), ratio(raw("d"), raw("e"))),
    }


ROW_LABELS = [
    ("b", "A", "(a-A) floor: stable PD before every 1/1200 s step"),
    ("b", "B", "(a-B) floor: DeepMimic's 1/600 s PD, 2 sub-steps"),
    ("b", "C", "(a-C) floor: 1/240 s (older port's rate)"),
    ("b", None, "(b)   our scene sampling, faithful rates"),
    ("c1", None, "(c)   training, 1 rank, faithful rates"),
    ("c2", None, "(c)   training, 2 ranks, faithful rates"),
    ("d", None, "(d)   training, 1 rank, 1/240 s physics"),
    ("e", None, "(e)   older port training, its own settings"),
]


def format_report(results, ratios):
    lines = [f"{'section':<50} {'per second':>11}  {'its floor':>9}  unit / status"]
    for key, scheme, label in ROW_LABELS:
        section = results[key]
        if not ok(section):
            lines.append(f"{label:<50} {'-':>11}  {'':>9}  {section.get('status')}")
        elif scheme:
            lines.append(f"{label:<50} {section['floor'][scheme]:11.1f}  {'':>9}  decisions/s")
        else:
            floor = ", ".join(f"{name} {rate:.0f}" for name, rate in section["floor"].items() if key != "b" or name == "B")
            note = f" (update {100 * section['update_fraction']:.1f}% of the time)" if "update_fraction" in section else ""
            lines.append(f"{label:<50} {section['samples_per_s']:11.1f}  {floor:>9}  samples/s{note}")
    walk = results["e"].get("walk_policy")
    if walk and ok(walk):
        lines.append(f"older port's walk policy: {walk['mean_reward_per_step']:.3f} mean reward per policy step, "
                     f"{walk['falls']} falls in {walk['episodes']} episodes, {walk['ms_per_policy_step']:.1f} ms per step")
    lines.append("")
    lines.append(f"{'ratio':<8} {'vs floor':>8} {'raw':>6}  target")
    for name, (value, raw) in ratios.items():
        verdict = "-" if value is None else ("ok" if value >= TARGETS[name] else "below")
        shown = "-" if value is None else f"{value:.2f}"
        raw_shown = "-" if raw is None else f"{raw:.2f}"
        lines.append(f"{name:<8} {shown:>8} {raw_shown:>6}  >= {TARGETS[name]}  {verdict}")
    return "\n".join(lines)




def run(budget, quick, only=None):
    started, load_at_start = time.time(), os.getloadavg()
    results = {key: {"status": "not run (--only)"} for key in ("b", "c1", "c2", "d", "e")}
    steps = [
        ("b", lambda: measure_sampling(budget)),
        ("c1", lambda: measure_training(budget, 1, "B")),
        ("c2", lambda: measure_training(budget, 2, "B")),
        ("d", lambda: measure_training(budget, 1, "C", PORT_RATE_ARGS)),
        ("e", lambda: measure_older_port(budget)),
    ]
    for key, measure in steps:
        if only and key not in only:
            continue
        print(f"[{time.time() - started:6.1f} s] measuring {key} ...", file=sys.stderr, flush=True)
        try:
            results[key] = measure()
        except Exception as exc:  # a section's failure must not end the run
            results[key] = {"status": f"failed: {type(exc).__name__}: {exc}"}
    ratios = compute_ratios(results)
    meta = {"mode": "quick" if quick else "full", "seconds": time.time() - started,
            "cpus": os.cpu_count(), "load_average_at_start": load_at_start,
            "load_average_at_end": os.getloadavg(), "budget": asdict(budget),
            "chunk_seconds": CHUNK_SECONDS, "probe_seconds": PROBE_SECONDS, "arg_file": TRAIN_ARGS}
    return {"meta": meta, "sections": results, "ratios": {k: v[0] for k, v in ratios.items()},
            "raw_ratios": {k: v[1] for k, v in ratios.items()}, "targets": TARGETS}


def main(argv=None):
    global TRAIN_ARGS
    parser = argparse.ArgumentParser(description="throughput benchmark (issue 7)")
    parser.add_argument("--quick", action="store_true", help="short timings, under 3 minutes")
    parser.add_argument("--json", help="write all figures to this file")
    parser.add_argument("--only", help="comma-separated sections to run (b, c1, c2, d, e); default all")
    parser.add_argument("--arg_file", default=TRAIN_ARGS, help=f"train args file of (b)-(d) (default {TRAIN_ARGS})")
    parser.add_argument("--worker", choices=["sampling", "train"], help=argparse.SUPPRESS)
    parser.add_argument("--seconds", type=float, default=FULL.sampling_seconds, help=argparse.SUPPRESS)
    parser.add_argument("--iters", type=int, default=FULL.train_iters, help=argparse.SUPPRESS)
    parser.add_argument("--scheme", default="B", help=argparse.SUPPRESS)
    parser.add_argument("train_args", nargs="*", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    TRAIN_ARGS = args.arg_file
    configure_process_env()   # as the entry points: quiet TF, one BLAS thread
    if args.worker == "sampling":
        with tempfile.TemporaryDirectory(prefix="bench_sampling_") as out_dir:
            print("RESULT " + json.dumps(sampling_worker(args.seconds, out_dir)), flush=True)
        return
    if args.worker == "train":
        result = train_worker(args.train_args, args.iters, args.scheme)
        from util import mpi_util
        if mpi_util.rank() == 0:
            print("RESULT " + json.dumps(result), flush=True)
        return
    report = run(QUICK if args.quick else FULL, args.quick, args.only.split(",") if args.only else None)
    print(format_report(report["sections"], {k: (report["ratios"][k], report["raw_ratios"][k]) for k in TARGETS}))
    if args.json:
        write_json(args.json, report)


if __name__ == "__main__":
    main()
