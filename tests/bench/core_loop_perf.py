"""Where each side of tests/bench/core_loop.py spends its time inside Bullet, by Linux `perf` (issue 27).

    .venv/bin/python -m tests.bench.core_loop_perf --deepmimic <DeepMimic checkout> [--variant fall]
        [--clip walk] [--rounds 2] [--seconds 10] [--broadphase_margin 0] [--json docs/bench/core_loop_perf.json]

Both sides step the same btMultiBodyDynamicsWorld: ours through the pybullet wheel's statically
linked Bullet, DeepMimic's core through the system's libBullet. cProfile sees one opaque
stepSimulation call, so this runs core_loop under `perf record --call-graph dwarf` and reads, per
process, the CPU time spent inside Bullet functions (inclusive, from the call graphs), divided by
the decisions that side ran (its rounds plus the warm-up): milliseconds per decision of
  step              btDiscreteDynamicsWorld::stepSimulation: all of Bullet's stepping
  aabb updates      btCollisionWorld::updateAabbs: the broadphase's bounding boxes, each sub-step
  broadphase pairs  btDbvtBroadphase::collide: the broadphase's tree-against-tree pair search
  forward dynamics  btMultiBodyDynamicsWorld::solveExternalForces: the articulated-body algorithm
(the solver's own share is not reported: the system library's inlined call paths split it
between callers, so its inclusive time is not comparable between the two builds)
and the rest of each process's time per decision (everything outside Bullet's stepping: our
Python, PD, state and reward; the core's C++ and its SWIG calls). Needs `perf` (linux-perf) with
permission to profile the user's own processes (kernel.perf_event_paranoid <= 2).
"""
import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if __package__ in (None, ""):
    sys.path.insert(0, str(ROOT))

from env.sim.broadphase_margin import BULLET_DEFAULT_MARGIN  # noqa: E402
from tests.bench import core_loop  # noqa: E402
from util.atomic_write import write_json  # noqa: E402

FREQUENCY = 499
PIECES = {
    "step": "btDiscreteDynamicsWorld::stepSimulation",
    "aabb updates": "btCollisionWorld::updateAabbs",
    "broadphase pairs": "btDbvtBroadphase::collide",
    "forward dynamics": "btMultiBodyDynamicsWorld::solveExternalForces",
}
SIDE_MARKERS = {"ours": "pybullet_stepSimulation", "theirs": "cWorld::Update"}
ROW = re.compile(r"^\s*([\d.]+)%\s+([\d.]+)%\s+(\d+):\S+\s+\[\.\]\s+(.+?)\s*$")


def perf_report(data, *args):
    return subprocess.run(["perf", "report", "-i", str(data), "--stdio", *args], capture_output=True, text=True,
                          check=True).stdout


def parse_children(text):
    """{pid: {symbol: inclusive %}} from `perf report --children --sort pid,sym` (the largest entry per
    symbol: an inlined function can be listed under several call paths)."""
    rows = {}
    for line in text.splitlines():
        m = ROW.match(line)
        if m:
            pid, sym = int(m.group(3)), re.sub(r"\s*\(inlined\)$", "", m.group(4))
            pcts = rows.setdefault(pid, {})
            pcts[sym] = max(pcts.get(sym, 0.0), float(m.group(1)))
    return rows


def parse_pid_samples(text):
    """{pid: samples} from `perf report --no-children --sort pid -n`."""
    samples = {}
    for line in text.splitlines():
        m = re.match(r"^\s*[\d.]+%\s+(\d+)\s+(\d+):", line)
        if m:
            samples[int(m.group(2))] = int(m.group(1))
    return samples


def split(rows, samples, decisions, seconds_per_decision):
    """Per side: ms per decision of each piece, and of the process's other time."""
    total = sum(samples.values())
    result = {}
    for side, marker in SIDE_MARKERS.items():
        pid = next((pid for pid, pcts in rows.items() if marker in pcts), None)
        if pid is None:
            raise RuntimeError(f"no process with {marker} in the profile")
        ms = {name: 1e3 * rows[pid].get(sym, 0.0) / 100 * total / FREQUENCY / decisions[side]
              for name, sym in PIECES.items()}
        ms["outside Bullet's step"] = 1e3 * seconds_per_decision[side] - ms["step"]
        result[side] = {"ms_per_decision": ms, "decisions": decisions[side],
                        "measured_ms_per_decision": 1e3 * seconds_per_decision[side]}
    result["step_ratio_ours_theirs"] = result["ours"]["ms_per_decision"]["step"] / \
        result["theirs"]["ms_per_decision"]["step"]
    return result


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--deepmimic", default=None)
    parser.add_argument("--variant", choices=tuple(core_loop.VARIANTS), default="fall")
    parser.add_argument("--clip", choices=core_loop.CLIPS, default="walk")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--broadphase_margin", type=float, default=BULLET_DEFAULT_MARGIN,
                        help="our side's (default ours and the core's, 0.05)")
    parser.add_argument("--json", default=str(ROOT / "docs/bench/core_loop_perf.json"))
    args = parser.parse_args(argv)
    if shutil.which("perf") is None:
        print("core_loop_perf: needs Linux perf (apt-get install linux-perf)", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="core_loop_perf_") as tmp:
        data, report_json = Path(tmp) / "perf.data", Path(tmp) / "core_loop.json"
        cmd = ["perf", "record", "-q", "-F", str(FREQUENCY), "--call-graph", "dwarf,16384", "-o", str(data), "--",
               sys.executable, "-m", "tests.bench.core_loop", "--variants", args.variant, "--clips", args.clip,
               "--rounds", str(args.rounds), "--seconds", str(args.seconds), "--json", str(report_json),
               "--broadphase_margin", str(args.broadphase_margin)]
        if args.deepmimic:
            cmd += ["--deepmimic", args.deepmimic]
        code = subprocess.run(cmd, cwd=ROOT).returncode
        if code != 0:
            return code
        report = json.loads(report_json.read_text())
        res = report["results"][f"{args.variant}/{args.clip}"]
        decisions = {side: sum(res[side]["decisions"]) + core_loop.WARMUP_DECISIONS for side in core_loop.SIDES}
        seconds_per_decision = {side: 1.0 / res[side]["median"] for side in core_loop.SIDES}
        result = split(parse_children(perf_report(data, "--children", "--sort", "pid,sym")),
                       parse_pid_samples(perf_report(data, "--no-children", "--sort", "pid", "-n")),
                       decisions, seconds_per_decision)
    out = {"variant": args.variant, "clip": args.clip, "our_broadphase_margin": args.broadphase_margin,
           "rounds": args.rounds, "round_seconds": args.seconds,
           "perf_frequency": FREQUENCY, "decisions_per_s": {s: res[s]["median"] for s in core_loop.SIDES},
           "load_avg": report["load_avg_after"], **result}
    write_json(args.json, out)
    print(f"{args.variant}/{args.clip}, ms per decision (perf, inclusive)  ours   theirs")
    for name in [*PIECES, "outside Bullet's step"]:
        print(f"  {name:34s}{out['ours']['ms_per_decision'][name]:7.3f}{out['theirs']['ms_per_decision'][name]:9.3f}")
    print(f"  {'measured (1 / decisions per s)':34s}{out['ours']['measured_ms_per_decision']:7.3f}"
          f"{out['theirs']['measured_ms_per_decision']:9.3f}")
    print(f"Bullet's step ours / theirs: {out['step_ratio_ours_theirs']:.2f}; wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
