"""Training a skill until it meets its criterion: train, evaluate, resume; then ship it.

    .venv/bin/python scripts/train_skill.py --clip backflip [--num_workers 2]      (make skill CLIP=backflip)
    .venv/bin/python -m tests.bench.time_to_skill --arg_file args/train_humanoid3d_walk_fast_args.txt \\
        --output RUN_DIR [--resume] [--num_workers 2] [--eval_every 250000] \\
        [--max_samples 10000000] [--episodes 8] [--episode_time 20] [--seed 1] \\
        [--json docs/bench/time_to_skill_walk_fast.json] [--plot docs/bench/time_to_skill_walk.png]
        [--label fast] [--eval_intermediate] [--ship]
    .venv/bin/python -m tests.bench.time_to_skill --compare CURVE.json ... [--plot PNG] [--at 500000 ...]

--clip CLIP trains a clip of the library (app/skill_recipes.py: a row per clip, DeepMimic's per-clip args
file with the project's recipe on top) and --motion FILE a user's humanoid3d clip with the walk's row,
into output/skills/<name> (or --output); it goes on with a run already there, applies the recipe's
rules (the discount switch of stalled runs, the ship decision) and ships the policy
(app/skill_package.py: data/policies/<character>_<clip>_trained/ with its metadata, and DeepMimic's
own run_ file, args/run_<character>_<clip>_args.txt, to play it).

The run folder (--output) holds the training's output (checkpoint, resume state, log, intermediate
checkpoints) and the curve, time_to_skill.json. Rounds until the criterion or --max_samples:
1. Training: mpi_run.py --num_workers N --arg_file A --max_samples <next multiple of eval_every>
   --output_path DIR (--resume true once DIR holds a resume state). The optimizer's output goes to
   DIR/train_stdout.txt.
2. Evaluation of DIR's checkpoint in a child process, always with the same seed (so every point
   sees the same initial states): --episodes test-mode episodes (mean actions) cut at
   --episode_time s (app/evaluate.py): falls, DeepMimic's reward per decision, the imitation
   metrics (env/tracking_error.py) and successes.
3. The point (samples, iteration, training wall hours from the log, workers, cores, the evaluation,
   whether the criterion holds, the commit and the experiment's args hash: app/skill_package.py)
   is appended to the curve, written atomically, with the --json copy and the --plot PNG.
Criterion: app/skill_config.Criterion (per episode: full length without a fall, and the
tracking, style or task bound; all --episodes fixed-seed episodes succeed).

The recipe's rules (--clip and --motion runs; app/skill_recipes.py says why): after each
evaluation the discount switch may start the next leg at discount 0.99 or back at 0.95 (an entry
of the run's agent_schedule and of the curve's `rules`, with its reason), and once a few test
episodes keep falling every leg from there draws half its training resets where training
episodes fell (the config's fall_weighted_from, and an entry of `rules`); every point that meets
the criterion is also evaluated on ROBUST_EPISODES episodes of another seed (its `robustness`),
and the run ends when ship_point picks the point to ship (the curve's `ship`, with its reason),
not at the criterion's first point (the curve's `reached`).

Stopping and going on: Ctrl-C, SIGTERM, a closed terminal or SIGKILL may stop it at any moment;
rerun with --resume on the same folder (--clip goes on by itself). The training saves its checkpoint
every OutputIters iterations and on a signal (a training child whose parent dies gets SIGTERM), so
at most those iterations are redone; a point is keyed by the checkpoint's iteration, so a checkpoint
already on the curve is not evaluated again and one trained but not yet evaluated is evaluated
first: the curve goes on without a gap or a repeat. --eval_intermediate also evaluates the
intermediate checkpoints (DIR/intermediate/agent0_models, every IntOutputIters) not on the curve,
e.g. of a run started without this script.

--agent_schedule SAMPLES:FILE ...: from SAMPLES samples on, train with agent file FILE (before the
first entry: the args file's, or --train_args'); a round of training ends at each entry, so the next
leg starts there. The legs may change what trains (Discount, step sizes), not the networks: the
evaluations build the policy from the first leg's file. A resumed run keeps its schedule unless
given a new one. E.g. the backflip as shipped: discount 0.99 from 1.32M samples,
0.95 again from 4.61M (docs/README_time_to_skill.md).

--train_on PACKAGE: the run goes on from a shipped skill (start_from_package): its first point is the
package's own evaluation, and shipping may replace that package.

--compare: the curves on one plot, and a table at equal budgets (--at: for each budget, each
curve's point nearest to it, within 10%).
"""
import ctypes
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from app.eval_worker import PYTHON, RESULT_PREFIX, build_eval_world, child_env, run_worker
from app.skill_config import (CURVE_NAME, MODEL_NAME, PACKAGE_METADATA, ROOT, criterion_met, episode_successes,
                              load_or_start, parse_args)
from app.skill_curve import compare, format_point, log_rows_by_iter, pending_checkpoints, read_resume, save_curve
from app.skill_package import check_free, provenance, run_args_name, write_package
from app.skill_recipes import (FALL_WEIGHT_ARGS, FAR_AGENT_FILE, PUSH_TRAINING_ARGS, ROBUST_EPISODES, ROBUST_SEED,
                               discount_switch, fall_weight_switch, ship_point)
from env.style_error import clip_root_speed
from util.cli import configure_process_env

PR_SET_PDEATHSIG = 1


class Interrupted(Exception):
    """The training child stopped on a signal (the curve stays as it is)."""


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--worker"]:
        configure_process_env()
        spec = json.loads(argv[1])
        worker = start_worker if spec.get("job") == "train_on" else eval_worker
        print(RESULT_PREFIX + json.dumps(worker(spec)), flush=True)
        return 0
    if argv[:1] == ["--compare"]:
        return compare_main(argv)
    args = parse_args(argv, __doc__.split("\n")[0])
    configure_process_env()   # after --help and bad options, which need no TensorFlow
    stop_on_signals()
    cfg, curve = load_or_start(args)
    ship_dir, ship_args_dir = (ROOT / args.ship_dir, ROOT / args.ship_args_dir)
    try:
        if args.ship and not curve.get("shipped"):
            check_free(cfg.skill, ship_dir, ship_args_dir, cfg.package, cfg.run_args_name, cfg.train_on_path)
        run(cfg, curve)
        if args.ship and curve.get("reached") and not curve.get("shipped"):
            ship(cfg, curve, ship_dir, ship_args_dir)
            curve["shipped"] = True
            save_curve(cfg, curve)
    except ValueError as e:
        raise SystemExit(f"time_to_skill: {e}")
    except (Interrupted, KeyboardInterrupt) as e:
        print(f"time_to_skill: stopped ({str(e) or 'Ctrl-C'}); {len(curve['points'])} points kept in "
              f"{Path(cfg.output) / CURVE_NAME}; rerun with --resume to go on", flush=True)
        return 130
    return 0


def stop_on_signals():
    """SIGTERM and SIGHUP (a closed terminal) stop the run as Ctrl-C does: the training child is
    told to stop after its iteration and waited for (run_logged), and the curve is kept."""
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, _stop_as_ctrl_c)


def _stop_as_ctrl_c(signum, frame):
    raise KeyboardInterrupt(signal.Signals(signum).name)


def run(cfg, curve, train_fn=None):
    """Evaluates what is pending, then trains and evaluates round by round until the run is done
    (the criterion met; with the recipe's rules, a point picked to ship) or the budget is spent;
    returns the curve."""
    train_fn = train_fn or train_chunk
    out = Path(cfg.output)
    if cfg.train_on and read_resume(out) is None:
        start_from_package(cfg, curve)
    while True:
        for iteration, model in pending_checkpoints(cfg, curve):
            add_point(cfg, curve, iteration, model)
        if cfg.recipe_rules:
            apply_rules(cfg, curve)
            decide_ship(cfg, curve)
        if curve.get("reached") and (curve.get("ship") or not cfg.recipe_rules):
            r = curve["reached"]
            print(f"criterion met at {r['samples']:,} samples, {r['wall_hours']:.2f} h of training", flush=True)
            return curve
        state = read_resume(out)
        samples = int(state["total_sample_count"]) if state else 0
        if samples >= cfg.max_samples:
            if cfg.recipe_rules:
                decide_ship(cfg, curve, final=True)
            print(f"budget of {int(cfg.max_samples):,} samples reached"
                  + ("" if curve.get("reached") else " without the criterion"), flush=True)
            return curve
        every = cfg.eval_every
        target = min((samples // every + 1) * every, cfg.next_switch(samples), cfg.max_samples)
        code = train_fn(cfg.scheduled(samples), target)
        if code != 0:
            if code in (128 + signal.SIGINT, 128 + signal.SIGTERM, -signal.SIGTERM, -signal.SIGINT):
                raise Interrupted("training stopped by a signal; rerun with --resume to go on")
            raise SystemExit(f"time_to_skill: training failed (exit code {code}); see {out}/train_stdout.txt")


# ---- 1. training --------------------------------------------------------------------------------

def _die_with_parent():
    """In the training child: SIGTERM when this script dies (even by SIGKILL), so no training
    goes on writing into the folder behind a resumed run's back (Linux prctl)."""
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


def train_chunk(cfg, target_samples):
    """Trains the run up to target_samples (all ranks), pushed with --push_training; the child's exit
    code."""
    out = Path(cfg.output)
    state = read_resume(out)
    cmd = [PYTHON, "mpi_run.py", "--num_workers", str(cfg.num_workers), "--arg_file", cfg.arg_file,
           "--max_samples", str(int(target_samples)), "--rand_seed", str(cfg.seed + int(state["iter"] if state else 0)),
           "--output_path", str(out), "--int_output_path", str(out / "intermediate"), *cfg.train_args,
           *(PUSH_TRAINING_ARGS if cfg.push_training else ())]
    if state:
        cmd += ["--resume", "true"]
    print(f"training to {int(target_samples):,} samples: {' '.join(cmd[1:])}", flush=True)
    return run_logged(cmd, out / "train_stdout.txt", cfg.echo)


def run_logged(cmd, log_path, echo, poll_seconds=0.2):
    """Runs the training child with its stdout and stderr appended to log_path; its exit code.
    The child never writes to this process, so it outlives this process cleanly: when this process
    dies (even by SIGKILL) the child gets SIGTERM (_die_with_parent) and still has its log to say
    so while it stops after its iteration with a final checkpoint (a pipe to a dead parent would
    fail its first write). With echo (the skill command) this process prints the log's new lines as
    they come. Ctrl-C or SIGTERM here (main) is passed on as SIGINT, and the child is waited for."""
    with open(log_path, "a") as log, open(log_path) as follow:
        follow.seek(0, os.SEEK_END)

        def echo_new_lines():
            if echo:
                print(follow.read(), end="", flush=True)

        proc = subprocess.Popen(cmd, cwd=ROOT, env=child_env(), stdout=log, stderr=subprocess.STDOUT, text=True,
                                preexec_fn=_die_with_parent)
        try:
            while proc.poll() is None:
                echo_new_lines()
                time.sleep(poll_seconds)
        except KeyboardInterrupt:
            proc.send_signal(signal.SIGINT)       # the optimizer saves after its current iteration
            proc.wait()
            echo_new_lines()
            raise
        echo_new_lines()
        return proc.returncode


def start_from_package(cfg, curve):
    """--train_on: the run folder starts as the shipped package's run stood when it shipped (its
    weights and normalisers, iteration, samples and training hours in a checkpoint and resume
    state of the run's own; the optimizers' moments start afresh), so training goes on from it and
    the curve's first point is the package's own evaluation; the package is the curve's `trained_on`."""
    package = cfg.train_on
    meta = json.loads((cfg.train_on_path / PACKAGE_METADATA).read_text())
    spec = {"job": "train_on", "arg_file": cfg.arg_file, "seed": cfg.seed, "model": str(cfg.train_on_path / MODEL_NAME),
            "scratch": str(Path(cfg.output)), "agent_args": [], "extra_args": cfg.train_args,
            "iteration": meta["iteration"], "samples": meta["samples"], "hours": meta["training_hours"]}
    print(f"starting from {package}: iteration {meta['iteration']}, {meta['samples']:,} samples, "
          f"{meta['training_hours']:.2f} h", flush=True)
    run_worker("app.skill_training", spec, timeout=None, preexec_fn=_die_with_parent)
    curve["trained_on"] = {"package": str(package), "iteration": meta["iteration"], "samples": meta["samples"],
                           "training_hours": meta["training_hours"], "commit": meta.get("commit")}
    save_curve(cfg, curve)


def start_worker(spec):
    """In a child process: the run folder (spec["scratch"]) seeded from the package's checkpoint
    (start_from_package), with the run's args.txt."""
    from DeepMimic_Optimizer import copy_run_inputs

    world = build_eval_world(spec)
    try:
        agent = world.agents[0]
        agent.iter = int(spec["iteration"])
        agent.total_sample_count = int(spec["samples"])
        agent.start_time = time.time() - float(spec["hours"]) * 3600
        agent.need_normalizer_update = agent.config.normalizer_samples > agent.total_sample_count
        agent.save_model_and_resume_state(agent.get_output_path())
        copy_run_inputs(world.arg_parser, spec["scratch"])
    finally:
        world.shutdown()
    return {"model": agent.get_output_path()}


# ---- 2. evaluation ------------------------------------------------------------------------------

def eval_worker(spec):
    """In a child process: the evaluation of spec["model"] (app/evaluate.py)."""
    from app.evaluate import evaluate, summarize

    world = build_eval_world(spec)
    try:
        start = time.perf_counter()
        stats = evaluate(world, spec["episodes"], max_episode_time=spec["episode_time"],
                         success_body_pos_err=spec["max_body_pos_err"])
        styled = bool(stats and stats[0].style)
        clip_speed = clip_root_speed(world.env.style_motions()) if styled else None
    finally:
        world.shutdown()
    result = {**summarize(stats), "lengths_s": [s.length_s for s in stats], "clip_ended": [s.clip_ended for s in stats],
              "rewards": [s.mean_reward for s in stats],
              "body_pos_errs": [s.tracking.get("body_pos_err") for s in stats],
              "eval_wall_s": time.perf_counter() - start}
    if styled:
        result.update({"style_errs": [s.style["style_err"] for s in stats],
                       "root_speeds": [s.style["root_speed"] for s in stats], "clip_speed": clip_speed})
    return result


def evaluate_checkpoint(cfg, model, seed=None, episodes=None):
    """The evaluation of `model` in a child process (the criterion's seed and episodes unless given)."""
    crit = cfg.criterion
    spec = {"arg_file": cfg.arg_file, "seed": crit.eval_seed if seed is None else seed, "model": str(model),
            "scratch": str(Path(cfg.output) / "eval_scratch"), "agent_args": [], "extra_args": cfg.train_args,
            "episodes": episodes or crit.episodes, "episode_time": crit.episode_time,
            "max_body_pos_err": crit.max_body_pos_err}
    return run_worker("app.skill_training", spec, timeout=None, preexec_fn=_die_with_parent)


# ---- 3. the point -------------------------------------------------------------------------------

def add_point(cfg, curve, iteration, model):
    """Evaluates the checkpoint of `iteration` and appends its point (samples and wall hours from
    the log row of that iteration, or the resume state for DIR's own checkpoint); with the
    recipe's rules, a point that meets the criterion is also evaluated for robustness."""
    out = Path(cfg.output)
    row = log_rows_by_iter(out).get(iteration)
    state = read_resume(out)
    state = state if state and Path(state["model"]) == Path(model) else None
    samples = int(state["total_sample_count"]) if state else int(row["Samples"])
    hours = float(state["wall_time"]) if state else float(row["Wall_Time"])
    workers = state["workers"] if state and state["workers"] else cfg.num_workers    # a checkpoint of an earlier leg
    crit = cfg.criterion
    print(f"evaluating iteration {iteration} ({samples:,} samples, {hours:.2f} h): {crit.episodes} episodes "
          f"of {crit.episode_time} s...", flush=True)
    ev = evaluate_checkpoint(cfg, model)
    point = {"iteration": iteration, "samples": samples, "wall_hours": hours, "workers": workers,
             "cores": os.cpu_count(), "evaluation": ev, "successes": sum(episode_successes(crit, ev)),
             "criterion_met": criterion_met(crit, ev),
             "checkpoint": str(model), **provenance(out, ROOT)}
    if point["criterion_met"] and cfg.recipe_rules:
        point["kept_checkpoint"] = keep_checkpoint(out, model, iteration)
        print(f"robustness: {ROBUST_EPISODES} episodes of seed {ROBUST_SEED}...", flush=True)
        robust = evaluate_checkpoint(cfg, model, seed=ROBUST_SEED, episodes=ROBUST_EPISODES)
        point["robustness"] = {"seed": ROBUST_SEED, "episodes": robust["episodes"], "falls": robust["falls"],
                               "successes": sum(episode_successes(crit, robust)),
                               "body_pos_err": robust.get("body_pos_err"), "mean_reward": robust["mean_reward"]}
    curve["points"].append(point)
    curve["points"].sort(key=lambda p: p["iteration"])
    if point["criterion_met"] and curve.get("reached") is None:
        curve["reached"] = {k: point[k] for k in ("iteration", "samples", "wall_hours")}
    print(format_point(point), flush=True)
    save_curve(cfg, curve)


KEPT = "kept"          # in the run folder: the checkpoints of points that met the criterion


def keep_checkpoint(out, model, iteration):
    """A copy of the checkpoint `model` (a prefix) as KEPT/iter_<iteration>/agent0_model.ckpt in the
    run folder, since training on overwrites the run's own and the ship decision may pick an
    earlier point; its path relative to the run folder."""
    from learning.checkpoint import copy_checkpoint

    rel = Path(KEPT) / f"iter_{iteration}" / MODEL_NAME
    (Path(out) / rel).parent.mkdir(parents=True, exist_ok=True)
    copy_checkpoint(model, Path(out) / rel)
    return str(rel)


# ---- 4. the recipe's rules ----------------------------------------------------------------------

def apply_rules(cfg, curve):
    """The recipe's rules after the curve's last point (app/skill_recipes.py), each recorded with its
    reason in the curve's `rules`: the discount switch, a new leg in the run's agent_schedule from
    that point's samples; the fall-weighted starts, once, for every leg from there
    (cfg.fall_weighted_from). Idempotent: the discount switch reads the points after the last leg's
    start, and the fall-weighted starts stay on once on."""
    schedule = cfg.agent_schedule
    since = schedule[-1][0] if schedule else -1
    points = [p for p in curve["points"] if p["samples"] > since]
    switch = discount_switch(points, far=bool(schedule) and schedule[-1][1] == FAR_AGENT_FILE)
    if switch:
        agent_file, reason = switch
        schedule.append([points[-1]["samples"], agent_file])
        record_rule(cfg, curve, {"agent_file": agent_file}, reason)
    reason = fall_weight_switch(curve["points"]) if cfg.fall_weighted_from is None else None
    if reason:
        cfg.fall_weighted_from = curve["points"][-1]["samples"]
        record_rule(cfg, curve, {"train_args": list(FALL_WEIGHT_ARGS)}, reason)


def record_rule(cfg, curve, change, reason):
    """The rule's change at the curve's last point, with its reason, in the curve's `rules`; the
    curve saved with the run's config as it now is."""
    last = curve["points"][-1]
    curve.setdefault("rules", []).append({"samples": last["samples"], "iteration": last["iteration"], **change,
                                          "reason": reason})
    print(f"rule: {reason}", flush=True)
    save_curve(cfg, curve)


def shippable(cfg, points):
    """The points whose weights are still at hand: a kept copy, or the run's own checkpoint of that
    iteration (a point evaluated without a kept copy is gone once training went on)."""
    state = read_resume(cfg.output)
    latest = int(state["iter"]) if state else None
    return [p for p in points if p.get("kept_checkpoint") or p["iteration"] == latest]


def decide_ship(cfg, curve, final=False):
    """With the recipe's rules: the point to ship once ship_point picks one (final: the budget is
    spent, so the best point that met the criterion), kept as the curve's `ship`."""
    if curve.get("ship") or not curve.get("reached"):
        return
    decided = ship_point(shippable(cfg, curve["points"]), curve["reached"]["samples"], cfg.criterion.max_body_pos_err,
                         final)
    if decided:
        point, reason = decided
        curve["ship"] = {**{k: point[k] for k in ("iteration", "samples", "wall_hours")}, "reason": reason}
        print(f"to ship: {point['samples']:,} samples ({reason})", flush=True)
        save_curve(cfg, curve)


# ---- 5. shipping --------------------------------------------------------------------------------

def ship(cfg, curve, dest, args_dir):
    """Writes the skill's package from the checkpoint of the point picked to ship (the recipe's
    ship decision), else of the point that first met the criterion."""
    picked = curve.get("ship") or curve["reached"]
    point = next(p for p in curve["points"] if p["iteration"] == picked["iteration"])
    if point.get("kept_checkpoint"):
        checkpoint = Path(cfg.output) / point["kept_checkpoint"]
    else:
        checkpoint = point.get("checkpoint") or str(Path(cfg.output) / MODEL_NAME)
    record = {**cfg.to_json(), **{k: curve[k] for k in ("trained_on", "rules", "reached", "ship") if curve.get(k)}}
    path = write_package(cfg.skill, cfg.output, point, checkpoint, record, dest, args_dir, ROOT,
                         package=cfg.package, run_args=cfg.run_args_name, replaces=cfg.train_on_path)
    played = Path(args_dir) / (cfg.run_args_name or run_args_name(cfg.skill))
    print(f"shipped: {path} (watch it: DeepMimic.py --arg_file {played})", flush=True)


def compare_main(argv):
    import argparse

    p = argparse.ArgumentParser(prog="time_to_skill --compare")
    p.add_argument("--compare", nargs="+", required=True)
    p.add_argument("--plot")
    p.add_argument("--at", nargs="*", type=float, default=[])
    opts = p.parse_args(argv)
    compare(opts.compare, opts.plot, opts.at)
    return 0


if __name__ == "__main__":
    sys.exit(main())
