"""Figures of ours against DeepMimic's core, per case (cases.py), as JSON.

    .venv/bin/python -m tests.reference_core.report --deepmimic <checkout> [--json docs/bench/reference_core.json]
        [--only SUBSTRING] [--bench-decisions 600]

Per case: the largest layout difference; at each reset time the largest state / goal / AMP-agent
differences; the expert AMP observations; along the trajectory (cases.NUM_ACTIONS actions, noise
N(0, 0.05^2) around the neutral action, the same on both sides) decisions and termination on each
side and the largest and mean reward, state, goal and AMP-observation differences. Speed: decisions
per second of the same Python loop (common.bench: env update per sub-step, training-like calls,
resets after falls) over our DeepMimicEnv in this process and over the core in its own, run in
alternation, for one case per scene.
"""
import argparse
import json
import platform
import sys
import tempfile
import time
from pathlib import Path

from tests.reference_core import cases as C
from tests.reference_core import compare, harness

BENCH_CASES = ("imitate/walk/phase_rot", "imitate/backflip/phase_rot", "imitate_amp/walk/rot",
               "heading_amp/walk/rot", "target_amp/run/rot")


def run(checkout, only=None, bench_decisions=600, bench_rounds=2, log=print, build=None):
    build = build or harness.build_core(checkout)
    core = harness.CoreProcess(build, checkout)
    tmpdir = tempfile.mkdtemp(prefix="reference_core_")
    all_cases = C.all_cases(tmpdir)
    results, speed = {}, {}
    try:
        for name, case in all_cases.items():
            if only and only not in name:
                continue
            ours_argv, theirs_argv = harness.case_args(case, checkout, tmpdir)
            ours, theirs = harness.OurSide(ours_argv), harness.TheirSide(core, theirs_argv)
            try:
                layout_figs, _ = compare.compare_layout(ours, theirs)
                res = {"files": {"ours": case.ours, "theirs": case.theirs}, "layout": case.layout,
                       "mode": case.mode, "time_limit": case.time_limit,
                       "layout_max": max(layout_figs.values()),
                       "reset": compare.compare_resets(ours, theirs, case)}
                if case.amp and case.mode == 0:
                    res["expert_amp_obs"] = compare.compare_expert(ours, theirs, case)
                ro, rt = compare.run_trajectory(ours, theirs, case)
                res["trajectory"] = compare.trajectory_figures(ro, rt)
                if name in BENCH_CASES:
                    rates = {"ours": [], "theirs": []}
                    for _ in range(bench_rounds):
                        for side in ("ours", "theirs"):
                            if side == "ours":
                                ours.call("set_mode", 0)
                                out = harness.common.bench(ours.env, bench_decisions)
                            else:
                                theirs.call("set_mode", 0)
                                out = core.request("bench", decisions=bench_decisions)
                            rates[side].append(out["decisions_per_s"])
                    speed[name] = {side: max(v) for side, v in rates.items()}
                    speed[name]["runs"] = rates
                    speed[name]["ratio_ours_theirs"] = speed[name]["ours"] / speed[name]["theirs"]
            finally:
                ours.close()
            results[name] = res
            tr = res["trajectory"]
            log(f"{name:34s} reset state {max(f['state'] for f in res['reset'].values()):.1e}  "
                f"decisions {tr['decisions_ours']}/{tr['decisions_theirs']} {tr['end_ours']}/{tr['end_theirs']}  "
                f"reward max {tr['reward_max']:.1e} mean {tr['reward_mean']:.1e}  state max {tr['state_max']:.2g}"
                + (f"  speed {speed[name]['ours']:.0f} vs {speed[name]['theirs']:.0f}/s" if name in speed else ""))
    finally:
        core.close()
    return {"generated": time.strftime("%Y-%m-%d %H:%M:%S"), "machine": platform.machine(),
            "python": sys.version.split()[0], "num_actions": C.NUM_ACTIONS, "reset_times": C.RESET_TIMES,
            "expert_times": C.EXPERT_TIMES, "action_noise_std": 0.05, "cases": results, "speed": speed}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--deepmimic", required=True, help="DeepMimic checkout")
    parser.add_argument("--json", default="docs/bench/reference_core.json")
    parser.add_argument("--only", default=None, help="only cases whose name contains this")
    parser.add_argument("--bench-decisions", type=int, default=600)
    parser.add_argument("--build", default=None, help="a built core folder (default: build_core.sh's cached build)")
    args = parser.parse_args(argv)
    report = run(Path(args.deepmimic).resolve(), args.only, args.bench_decisions, build=args.build)
    Path(args.json).parent.mkdir(parents=True, exist_ok=True)
    Path(args.json).write_text(json.dumps(report, indent=1) + "\n")
    print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
