"""Our DeepMimicEnv against DeepMimic's C++ core in DeepMimic_Optimizer's loop (issue 27).

    .venv/bin/python -m tests.bench.core_loop --deepmimic <DeepMimic checkout> [--rounds 4]
        [--seconds 15] [--variants fall long] [--clips walk backflip] [--broadphase_margin 0]
        [--json docs/bench/core_loop.json]
    .venv/bin/python -m tests.bench.core_loop --profile ours [--variants long] [--clips walk] [--seconds 15]

The loop is tests/reference_core/common.bench (DeepMimic_Optimizer's update_world and RLAgent
calls with a noise policy: N(0, 0.05^2) around the neutral action, clipped to the action bounds).
Ours runs it over env.deepmimic_env.DeepMimicEnv in this process; theirs runs it inside the core's
own process (core_server.py's bench command), so no per-step message is timed. Per variant and
clip, after an untimed warm-up of WARMUP_DECISIONS on each side, the sides alternate (ours,
theirs, ours, theirs, ...) for --rounds rounds of --seconds each; reported: decisions/s per round,
the median per side and the ratio of the medians ours / theirs, printed as a table and written
(atomically) to --json with the load averages before and after (a busy machine skews the ratio).
--broadphase_margin M runs our side with that Bullet broadphase margin (our default and the core's
are Bullet's 0.05; pybullet's is 0, env/sim/broadphase_margin.py).

Variants (imitate scene, DeepMimic's 2021 layout: phase input, world root rotation):
  fall  each side's arg file as it stands: fall termination on, and the episode timer at sample
        count 0 (DeepMimic's curriculum start, 0.5 s for walk and backflip: the loop never calls
        set_sample_count). Short episodes: resets weigh.
  long  20 s time limits and --enable_fall_end false (both sides read enable_fall_end: our
        RLSceneSimChar, their cRLSceneSimChar::ParseArgs): 600 decisions per episode, so the
        per-decision cost dominates.
Clips: walk, backflip. Each side reads its own args/train_humanoid3d_<clip>_args.txt behind the
same overrides, as the reference tests make them match (harness.case_args: a copy of each side's
controller file with the same layout flags, the checkout's clip on both sides).

--profile ours: our side of each selected variant and clip under cProfile for --seconds (no core
needed; with a checkout, its clips), then per decision where the time goes (profile_groups).

Without a DeepMimic checkout, or when its core does not build, one line says how to get it and the
exit status is 2.
"""
import argparse
import cProfile
import os
import platform
import pstats
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if __package__ in (None, ""):
    sys.path.insert(0, str(ROOT))

from tests.reference_core import common, harness  # noqa: E402
from env.sim.broadphase_margin import BULLET_DEFAULT_MARGIN  # noqa: E402
from util.atomic_write import write_json  # noqa: E402

CLIPS = ("walk", "backflip")
VARIANTS = {"fall": {"time_limit": None},
            "long": {"time_limit": 20.0, "overrides": ["--enable_fall_end", "false"]}}
WARMUP_DECISIONS = 30
SIDES = ("ours", "theirs")


class CoreMissing(RuntimeError):
    pass


def make_case(variant, clip):
    """The harness Case of a variant and clip: each side's own imitate args file for the clip."""
    files = f"args/train_humanoid3d_{clip}_args.txt"
    return harness.Case(f"{variant}/{clip}", files, files, layout="phase_rot", clip=clip, **VARIANTS[variant])


def build_ours(argv):
    """Our env, in training mode. Not harness.OurSide: it wraps the scene's generator for pins."""
    from env.deepmimic_env import DeepMimicEnv
    from util.arg_parser import load_args
    env = DeepMimicEnv(load_args(argv), seed=0)
    env.set_mode(0)
    return env


def core_build(checkout, build=None):
    """The folder of the built core (build_core.sh, cached), or CoreMissing with the reason."""
    if checkout is None:
        raise CoreMissing("no DeepMimic checkout given")
    if not (checkout / "DeepMimicCore").is_dir():
        raise CoreMissing(f"{checkout} is not a DeepMimic checkout (no DeepMimicCore/)")
    if build is not None:
        if not (Path(build) / "_DeepMimicCore.so").is_file():
            raise CoreMissing(f"--build {build} holds no _DeepMimicCore.so")
        return Path(build)
    try:
        return harness.build_core(checkout)
    except harness.CoreError as err:
        lines = [line.strip() for line in str(err).splitlines() if line.strip()]
        raise CoreMissing(next((line for line in lines if line.startswith("build_core.sh:")), lines[0])) from None


def how_to_build(reason):
    return (f"core_loop.py: error: {reason}; DeepMimic's core is built from a checkout (git clone "
            f"https://github.com/xbpeng/DeepMimic) with: apt-get install {harness.APT_PACKAGES}; "
            "then run with --deepmimic <checkout> (or DEEPMIMIC=<checkout>)")


def compare(core, checkout, variant, clip, rounds, seconds, log=print, margin=BULLET_DEFAULT_MARGIN):
    """Interleaved rounds of one variant and clip: {side: [common.bench result per round]}. margin:
    our --broadphase_margin (the core runs Bullet's 0.05)."""
    case = make_case(variant, clip)
    with tempfile.TemporaryDirectory(prefix="core_loop_") as tmpdir:
        ours_argv, theirs_argv = harness.case_args(case, checkout, tmpdir)
        harness.TheirSide(core, theirs_argv).call("set_mode", 0)
        env = build_ours(ours_argv + ["--broadphase_margin", str(margin)])
    loops = {"ours": lambda **kw: common.bench(env, **kw), "theirs": lambda **kw: core.request("bench", **kw)}
    runs = {side: [] for side in SIDES}
    try:
        for loop in loops.values():
            loop(decisions=WARMUP_DECISIONS)
        for r in range(rounds):
            for side in SIDES:
                runs[side].append(loops[side](seconds=seconds, seed=r))
                log(f"{case.name:14s} round {r + 1}/{rounds} {side:6s} {runs[side][-1]['decisions_per_s']:8.1f} "
                    "decisions/s")
    finally:
        env.shutdown()
    return runs


def summary(runs):
    """Per side and round: decisions/s, decisions, episodes ended, invalid episodes; the median
    decisions/s per side and the ratio of the medians."""
    out = {}
    for side, rounds in runs.items():
        out[side] = {key: [r[key] for r in rounds] for key in ("decisions_per_s", "decisions", "episodes", "invalid")}
        out[side]["median"] = statistics.median(out[side]["decisions_per_s"])
    out["ratio_ours_theirs"] = out["ours"]["median"] / out["theirs"]["median"]
    return out


def run(checkout, build, variants, clips, rounds, seconds, log=print, margin=BULLET_DEFAULT_MARGIN):
    load_before = os.getloadavg()
    core = harness.CoreProcess(build, checkout)
    try:
        results = {f"{v}/{c}": summary(compare(core, checkout, v, c, rounds, seconds, log, margin))
                   for v in variants for c in clips}
    finally:
        core.close()
    return {"generated": time.strftime("%Y-%m-%d %H:%M:%S"), "machine": platform.machine(),
            "python": sys.version.split()[0], "cpus": os.cpu_count(), "load_avg_before": load_before,
            "load_avg_after": os.getloadavg(), "deepmimic": str(checkout), "rounds": rounds,
            "round_seconds": seconds, "warmup_decisions": WARMUP_DECISIONS, "action_noise_std": 0.05,
            "variants": VARIANTS, "our_broadphase_margin": margin, "results": results}


def table(report):
    rounds = report["rounds"]
    lines = [f"{'decisions/s':22s}" + "".join(f"{f'round {r + 1}':>10s}" for r in range(rounds))
             + f"{'median':>10s}{'resets':>8s}{'ours/theirs':>13s}"]
    for name, res in report["results"].items():
        for side in SIDES:
            row = res[side]
            lines.append(f"{name:15s}{side:7s}" + "".join(f"{x:10.1f}" for x in row["decisions_per_s"])
                         + f"{row['median']:10.1f}{sum(row['episodes']) + sum(row['invalid']):8d}"
                         + (f"{res['ratio_ours_theirs']:13.3f}" if side == "ours" else ""))
    return "\n".join(lines)


# ---- profile of our side -----------------------------------------------------------------

PROFILE_GROUPS = ("pybullet step", "PD", "state", "reward", "reference", "resets", "other Python")
# (file ending, function name or None for all the file's functions, group): the functions that head
# a group. "~" is cProfile's file of C functions (named here without their module).
PROFILE_HEADS = (
    ("env/scenes/rl_scene_sim_char.py", "reset", "resets"),
    ("~", "stepSimulation", "pybullet step"),
    ("env/sim/pd_controller.py", None, "PD"),
    ("env/sim/tree_dynamics.py", None, "PD"),
    ("env/scenes/rl_scene_sim_char.py", "record_state", "state"),
    ("env/scenes/imitate.py", "record_state", "state"),
    ("env/sim/ct_state.py", None, "state"),
    ("env/sim/sim_character.py", "get_body_states", "state"),
    ("env/scenes/imitate.py", "calc_reward", "reward"),
    ("env/anim/kin_character.py", None, "reference"),
    ("env/anim/motion.py", None, "reference"),
    *(("env/scenes/imitate.py", name, "reference") for name in
      ("_pre_physics", "_sync_new_cycle", "_pose_kin", "_pose_ref_twin", "ref_snapshot", "ref_body_states")),
)


def _short_name(name):
    """'<built-in method pybullet.stepSimulation>' -> 'stepSimulation'; Python function names unchanged."""
    return name[1:-1].split()[-1].rsplit(".", 1)[-1] if name.startswith("<") else name


def profile_group(func):
    """The group a function heads (PROFILE_HEADS), None when it runs in its caller's. func: a pstats
    key (file, line, name)."""
    path, _, name = func
    short = _short_name(name)
    return next((group for end, fn, group in PROFILE_HEADS if path.endswith(end) and fn in (None, short)), None)


def profile_groups(stats, top):
    """Seconds of `top`'s inclusive time per PROFILE_GROUPS entry. A function heading a group puts
    its own time and its callees' there (the nearest head wins: the reference posing inside a
    reward is reference), except that everything under a reset is resets; other functions count in
    their caller's group; "other Python" is the rest (the loop, the env wrappers, the updates'
    Python: timers, fall contacts, controller time). stats: pstats.Stats(...).stats.

    Groups:
      pybullet step  stepSimulation, one per env update (20 per decision: 600 Hz updates, 30 Hz policy)
      PD             pd_controller / tree_dynamics: the state read, stable-PD solve, torque command
                     per update, and setting the targets of an action
      state          record_state, incl. the body-state read it needs (SimCharacter.get_body_states,
                     which the validity check may run first: its result is cached per update)
      reward         calc_reward except the reference posing it asks for
      reference      the kinematic reference: its clock per update, posing it and its twin at
                     decisions and cycle wraps
      resets         the scene's reset (RLSceneSimChar.reset), all of it
    cProfile keeps one level of callers, so a function's callees' time is shared among its callers
    in proportion to the time each spent in it: exact for leaves (pybullet and numpy calls), near
    for shared helpers (RLSceneSimChar._cached runs reads for state, reward and the validity check)."""
    children = defaultdict(dict)
    for func, (_, _, _, _, callers) in stats.items():
        for caller, (_, _, _, cum) in callers.items():
            children[caller][func] = cum
    shares = {}

    def share(func, outer):
        """Fraction of func's inclusive time per group when its caller runs in group `outer`."""
        group = outer if outer == "resets" else profile_group(func) or outer
        key = (func, group)
        if key not in shares:
            shares[key] = {group: 1.0}        # a recursive call under way counts as own time
            _, _, own, cum, _ = stats[func]
            out = defaultdict(float, {group: own / cum if cum > 0 else 1.0})
            for child, child_cum in children[func].items():
                if child != func and cum > 0:
                    for g, frac in share(child, group).items():
                        out[g] += child_cum / cum * frac
            shares[key] = dict(out)
        return shares[key]

    total = stats[top][3]
    seconds = {g: total * frac for g, frac in share(top, "other Python").items() if g != "other Python"}
    seconds["other Python"] = total - sum(seconds.values())
    return {g: seconds.get(g, 0.0) for g in PROFILE_GROUPS}


def profile_ours(variant, clip, seconds, checkout=None, top_functions=12):
    """Our side of a variant and clip under cProfile for `seconds` (after the warm-up): the bench
    result, the seconds per group and the functions of most own time [(ms per decision, calls per
    decision, name)]."""
    with tempfile.TemporaryDirectory(prefix="core_loop_") as tmpdir:
        env = build_ours(harness.our_args(make_case(variant, clip), checkout, tmpdir))
    try:
        common.bench(env, WARMUP_DECISIONS)
        profiler = cProfile.Profile()
        result = profiler.runcall(common.bench, env, seconds=seconds)
    finally:
        env.shutdown()
    stats = pstats.Stats(profiler).stats
    top = next(f for f in stats if f[2] == "bench" and f[0].endswith("reference_core/common.py"))
    n = result["decisions"]
    own = sorted(stats.items(), key=lambda item: -item[1][2])[:top_functions]
    functions = [(1e3 * tt / n, nc / n, f"{Path(path).name}:{line} {name}" if path != "~" else name)
                 for (path, line, name), (_, nc, tt, _, _) in own]
    return result, profile_groups(stats, top), functions


def print_profile(variant, clip, result, groups, functions):
    n, total = result["decisions"], sum(groups.values())
    print(f"our side, {variant}/{clip}, under cProfile: {n} decisions, {result['episodes'] + result['invalid']} "
          f"resets in {result['seconds']:.1f} s ({result['decisions_per_s']:.1f} decisions/s with the profiler on)")
    print(f"  {'group':16s}{'ms/decision':>12s}{'share':>8s}")
    for group, secs in groups.items():
        print(f"  {group:16s}{1e3 * secs / n:12.3f}{secs / total:8.1%}")
    print(f"  {'total':16s}{1e3 * total / n:12.3f}")
    print(f"  functions of most own time:\n  {'ms/decision':>11s}{'calls/decision':>16s}  function")
    for ms, calls, name in functions:
        print(f"  {ms:11.3f}{calls:16.1f}  {name}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--deepmimic", default=None, help="DeepMimic checkout (default: $DEEPMIMIC)")
    parser.add_argument("--build", default=None, help="a built core folder (default: build_core.sh's cached build)")
    parser.add_argument("--rounds", type=int, default=4, help="rounds per side, alternating")
    parser.add_argument("--seconds", type=float, default=15.0, help="seconds per round (per profile with --profile)")
    parser.add_argument("--variants", nargs="+", choices=tuple(VARIANTS), default=list(VARIANTS))
    parser.add_argument("--clips", nargs="+", choices=CLIPS, default=list(CLIPS))
    parser.add_argument("--json", default=str(ROOT / "docs/bench/core_loop.json"))
    parser.add_argument("--broadphase_margin", type=float, default=BULLET_DEFAULT_MARGIN,
                        help="our side's --broadphase_margin (default ours and the core's, Bullet's 0.05; pybullet's is 0)")
    parser.add_argument("--profile", choices=("ours",), default=None,
                        help="profile our side of each selected variant and clip instead (no core needed)")
    args = parser.parse_args(argv)
    if args.rounds < 1 or args.seconds <= 0:
        parser.error("--rounds must be >= 1 and --seconds > 0")
    checkout = Path(args.deepmimic).resolve() if args.deepmimic else harness.checkout_path()
    if args.profile:
        for variant in args.variants:
            for clip in args.clips:
                print_profile(variant, clip, *profile_ours(variant, clip, args.seconds, checkout))
        return 0
    try:
        build = core_build(checkout, args.build)
    except CoreMissing as err:
        print(how_to_build(err), file=sys.stderr)
        return 2
    report = run(checkout, build, args.variants, args.clips, args.rounds, args.seconds, margin=args.broadphase_margin)
    write_json(args.json, report)
    print(table(report))
    print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
