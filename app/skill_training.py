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
(app/skill_package.py: data/policies/<character>_<name>_trained/ with its metadata, and DeepMimic's
own run_ file, args/run_<character>_<name>_args.txt, to play it).

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
Criterion, per episode: an episode succeeds when it runs --episode_time s (or, for a non-looping
clip, to the clip's end) without a fall and
- (--criterion tracking, the default: the clip followed in time) its own mean body position error
  is at most --max_body_pos_err (0.08 m);
- (--criterion style: AMP, which does not follow the clip in time) its own style error (the body
  position error to the nearest frame of the motion data, env/style_error.py) is at most
  --max_style_err (0.061 m: the tracking walk's 4.1 cm plus 2 cm,
  docs/bench/style_error_calibration.json) and its mean root speed is within --speed_tol (20%) of
  the motion data's (clip_root_speed);
- (--criterion task: an AMP task scene, e.g. heading_amp) its own mean task reward per decision (the
  test reward of a task scene) is at least --min_task_reward (0.7); its style error is reported;
the skill is learned when every one of the --episodes fixed-seed episodes succeeds. The reward per
decision is reported, not gated on (clips' reward scales differ).

The recipe's rules (--clip and --motion runs; app/skill_recipes.py says why): after each
evaluation the discount switch may start the next leg at discount 0.99 or back at 0.95 (an entry
of the run's agent_schedule and of the curve's `rules`, with its reason); every point that meets
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

--compare: the curves on one plot, and a table at equal budgets (--at: for each budget, each
curve's point nearest to it, within 10%).
"""
import argparse
import ctypes
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from app.eval_worker import PYTHON, RESULT_PREFIX, build_eval_world, child_env, run_worker
from app.skill_package import MODEL_NAME, check_free, provenance, run_args_name, write_package
from app.skill_recipes import (FAR_AGENT_FILE, RECIPES, ROBUST_EPISODES, ROBUST_SEED, RecipeError, discount_switch,
                               motion_recipe, recipe_for, ship_point)
from env.style_error import clip_root_speed
from util.atomic_write import atomic_path, write_json
from util.cli import configure_process_env
from util.log_plot import read_log
from util.paths import project_root, resolve_data_path

ROOT = project_root()
CRITERIA = ("tracking", "style", "task")
# what the evaluations mean: fixed when a run begins, kept on resume (a curve without a key began
# with its default)
EVAL_KEYS = {"eval_seed": 1000, "episodes": 8, "episode_time": 20.0, "max_body_pos_err": 0.08, "seed": 1,
             "train_args": [], "criterion": "tracking", "max_style_err": 0.061, "speed_tol": 0.2,
             "min_task_reward": 0.7}
CURVE_NAME = "time_to_skill.json"
LOG_NAME = "agent0_log.txt"
INT_MODELS = Path("intermediate") / "agent0_models"
PR_SET_PDEATHSIG = 1
BUDGET_TOLERANCE = 0.1      # --compare --at: a point within 10% of a budget stands for it


class Interrupted(Exception):
    """The training child stopped on a signal (the curve stays as it is)."""


# ---- training --------------------------------------------------------------------------------

def _die_with_parent():
    """In the training child: SIGTERM when this script dies (even by SIGKILL), so no training
    goes on writing into the folder behind a resumed run's back (Linux prctl)."""
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


def train_chunk(cfg, target_samples):
    """Trains DIR up to target_samples (all ranks); the child's exit code."""
    out = Path(cfg["output"])
    cmd = [PYTHON, "mpi_run.py", "--num_workers", str(cfg["num_workers"]), "--arg_file", cfg["arg_file"],
           "--max_samples", str(int(target_samples)), "--rand_seed", str(cfg["seed"] + checkpoint_iter(out)),
           "--output_path", str(out), "--int_output_path", str(out / "intermediate"), *cfg["train_args"]]
    if (out / f"{MODEL_NAME}.resume.npz").is_file():
        cmd += ["--resume", "true"]
    print(f"training to {int(target_samples):,} samples: {' '.join(cmd[1:])}", flush=True)
    with open(out / "train_stdout.txt", "a") as log:
        proc = subprocess.Popen(cmd, cwd=ROOT, env=child_env(), stdout=subprocess.PIPE if cfg.get("echo") else log,
                                stderr=subprocess.STDOUT, text=True, preexec_fn=_die_with_parent)
        try:
            if cfg.get("echo"):             # the skill command: the optimizer's progress lines here too
                for line in proc.stdout:
                    log.write(line)
                    log.flush()
                    print(line, end="", flush=True)
            return proc.wait()
        except KeyboardInterrupt:
            proc.send_signal(signal.SIGINT)       # the optimizer saves after its current iteration
            proc.wait()
            raise


def checkpoint_iter(out):
    """The iteration of DIR's checkpoint (0 when there is none)."""
    state = read_resume(out)
    return int(state["iter"]) if state else 0


def read_resume(out):
    """DIR's resume state (iteration, samples, wall hours) and "model": the checkpoint saved with
    it (learning/resume_state.py: the previous one when a save was cut short); None when none."""
    from learning.checkpoint import CheckpointError
    from learning.resume_state import paired_checkpoint

    if not (Path(out) / f"{MODEL_NAME}.resume.npz").is_file():
        return None
    try:
        model, state = paired_checkpoint(Path(out) / MODEL_NAME)
    except CheckpointError as e:
        raise SystemExit(f"time_to_skill: {e}")
    return {"model": model, **{k: float(state[k]) for k in ("iter", "total_sample_count", "wall_time")}}


def scheduled(cfg, samples):
    """cfg for a round of training from `samples` on: the agent file of the last --agent_schedule
    entry at or below `samples` first in its train_args (the first --agent_files on a command line
    wins); cfg itself before the first entry."""
    files = [path for at, path in cfg.get("agent_schedule", []) if at <= samples]
    return {**cfg, "train_args": ["--agent_files", files[-1], *cfg["train_args"]]} if files else cfg


def next_switch(cfg, samples):
    """The first --agent_schedule entry beyond `samples` (inf: none)."""
    return min((at for at, _ in cfg.get("agent_schedule", []) if at > samples), default=float("inf"))


def parse_agent_schedule(items):
    """[[samples, file]] of `SAMPLES:FILE` items, samples increasing; ValueError naming the item."""
    schedule = []
    for item in items:
        at, sep, path = item.partition(":")
        try:
            samples = int(float(at))
        except (ValueError, OverflowError):
            samples = -1
        if not sep or not path or samples <= 0:
            raise ValueError(f"--agent_schedule {item}: expected SAMPLES:AGENT_FILE with SAMPLES > 0")
        try:
            resolve_data_path(path)     # where training will look for it
        except FileNotFoundError:
            raise ValueError(f"--agent_schedule {item}: no such agent file {path}") from None
        if schedule and samples <= schedule[-1][0]:
            raise ValueError(f"--agent_schedule {item}: samples must increase ({schedule[-1][0]:,} before)")
        schedule.append([samples, path])
    return schedule


# ---- evaluation ------------------------------------------------------------------------------

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
    """The evaluation of `model` (the run's own seed and episodes unless given)."""
    spec = {"arg_file": cfg["arg_file"], "seed": cfg["eval_seed"] if seed is None else seed, "model": str(model),
            "scratch": str(Path(cfg["output"]) / "eval_scratch"), "agent_args": [],
            "extra_args": cfg["train_args"], "episodes": episodes or cfg["episodes"],
            "episode_time": cfg["episode_time"], "max_body_pos_err": cfg["max_body_pos_err"]}
    return run_worker("app.skill_training", spec, timeout=None, preexec_fn=_die_with_parent)


FULL_LENGTH_SLACK = 0.05     # s: an episode cut at episode_time ends within one decision of it


def episode_successes(cfg, ev):
    """Per episode of an evaluation: ran the full episode_time or to a non-looping clip's end (so
    without a fall: a fall ends it) and met the criterion's bound (module docstring)."""
    lengths = ev["lengths_s"]
    ended = ev.get("clip_ended") or [False] * len(lengths)
    missing = [None] * len(lengths)
    kind = cfg.get("criterion", "tracking")
    if kind == "task":
        within = [reward is not None and reward >= cfg["min_task_reward"] for reward in ev.get("rewards") or missing]
    elif kind == "style":
        clip = ev.get("clip_speed")
        within = [err is not None and err <= cfg["max_style_err"] and clip is not None
                  and abs(speed - clip) <= cfg["speed_tol"] * clip
                  for err, speed in zip(ev.get("style_errs") or missing, ev.get("root_speeds") or missing)]
    else:
        within = [err is not None and err <= cfg["max_body_pos_err"] for err in ev.get("body_pos_errs") or missing]
    return [(length >= cfg["episode_time"] - FULL_LENGTH_SLACK or clip_end) and ok
            for length, clip_end, ok in zip(lengths, ended, within)]


def criterion_met(cfg, ev):
    """The skill is learned: no fall, and every evaluated episode succeeds (episode_successes)."""
    successes = episode_successes(cfg, ev)
    return bool(ev["falls"] == 0 and len(successes) == ev["episodes"] and all(successes))


# ---- the curve -------------------------------------------------------------------------------

def log_rows_by_iter(out):
    path = Path(out) / LOG_NAME
    if not path.is_file():
        return {}
    names, rows = read_log(path)
    return {int(row[names.index("Iteration")]): dict(zip(names, row)) for row in rows}


def pending_checkpoints(cfg, curve):
    """[(iteration, checkpoint path)] not yet on the curve: the intermediate ones (with
    eval_intermediate), then DIR's own checkpoint."""
    out = Path(cfg["output"])
    done = {p["iteration"] for p in curve["points"]}
    found = {}
    if cfg["eval_intermediate"] and (out / INT_MODELS).is_dir():
        for index in (out / INT_MODELS).glob("agent0_int_model_*.ckpt.index"):
            found[int(index.name.split("_")[-1].split(".")[0])] = out / INT_MODELS / index.name[:-len(".index")]
    state = read_resume(out)
    if state is not None:
        found[int(state["iter"])] = Path(state["model"])
    return [(it, path) for it, path in sorted(found.items()) if it not in done]


def add_point(cfg, curve, iteration, model):
    """Evaluates the checkpoint of `iteration` and appends its point (samples and wall hours from
    the log row of that iteration, or the resume state for DIR's own checkpoint)."""
    out = Path(cfg["output"])
    row = log_rows_by_iter(out).get(iteration)
    state = read_resume(out)
    state = state if state and Path(state["model"]) == Path(model) else None
    samples = int(state["total_sample_count"]) if state else int(row["Samples"])
    hours = float(state["wall_time"]) if state else float(row["Wall_Time"])
    print(f"evaluating iteration {iteration} ({samples:,} samples, {hours:.2f} h): {cfg['episodes']} episodes "
          f"of {cfg['episode_time']} s...", flush=True)
    ev = evaluate_checkpoint(cfg, model)
    point = {"iteration": iteration, "samples": samples, "wall_hours": hours, "workers": cfg["num_workers"],
             "cores": os.cpu_count(), "evaluation": ev, "successes": sum(episode_successes(cfg, ev)),
             "criterion_met": criterion_met(cfg, ev),
             "checkpoint": str(model), **provenance(out, ROOT)}
    if point["criterion_met"] and cfg.get("recipe_rules"):
        print(f"robustness: {ROBUST_EPISODES} episodes of seed {ROBUST_SEED}...", flush=True)
        robust = evaluate_checkpoint(cfg, model, seed=ROBUST_SEED, episodes=ROBUST_EPISODES)
        point["robustness"] = {"seed": ROBUST_SEED, "episodes": robust["episodes"], "falls": robust["falls"],
                               "successes": sum(episode_successes(cfg, robust)),
                               "body_pos_err": robust.get("body_pos_err"), "mean_reward": robust["mean_reward"]}
    curve["points"].append(point)
    curve["points"].sort(key=lambda p: p["iteration"])
    if point["criterion_met"] and curve.get("reached") is None:
        curve["reached"] = {k: point[k] for k in ("iteration", "samples", "wall_hours")}
    print(format_point(point), flush=True)
    save_curve(cfg, curve)


def format_point(p):
    ev = p["evaluation"]
    err = ev.get("body_pos_err")
    style = (f" | style {100 * ev['style_err']:.1f} cm, speed {ev['root_speed']:.2f} of {ev['clip_speed']:.2f} m/s"
             if ev.get("clip_speed") is not None else "")
    return (f"{p['samples']:>11,} samples {p['wall_hours']:6.2f} h | falls {ev['falls']}/{ev['episodes']} | "
            f"length {ev['mean_length_s']:5.2f} s | reward/decision {ev['mean_reward']:.3f} | body pos "
            + (f"{100 * err:.1f} cm" if err is not None else "-") + style
            + f" | successes {p.get('successes', '-')}" + (" | CRITERION MET" if p["criterion_met"] else "")
            + (f" | robustness {p['robustness']['successes']}/{p['robustness']['episodes']}" if p.get("robustness")
               else ""))


def save_curve(cfg, curve):
    write_json(Path(cfg["output"]) / CURVE_NAME, curve)
    if cfg.get("json"):
        write_json(cfg["json"], curve)
    if cfg.get("plot"):
        plot_curves([curve], cfg["plot"])


def plot_curves(curves, path):
    """Reward per decision, mean episode length and body position error against samples, one line
    per curve (its label), written atomically as a PNG. Samples on a log axis, so curves that end at
    1M and at 10M both read (a point at 0 samples is left off the plot); the legend below."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    legend_height = 0.2 + 0.18 * ((len(curves) + 1) // 2)     # inches: two columns of labels
    fig, axes = plt.subplots(1, 3, figsize=(13, 3.6 + legend_height))
    for curve in curves:
        pts = [p for p in curve["points"] if p["samples"] > 0]
        x = [p["samples"] / 1e6 for p in pts]
        label = curve["config"].get("label") or Path(curve["config"]["arg_file"]).stem
        axes[0].plot(x, [p["evaluation"]["mean_reward"] for p in pts], marker=".", label=label)
        axes[1].plot(x, [p["evaluation"]["mean_length_s"] for p in pts], marker=".", label=label)
        axes[2].plot(x, [100 * (p["evaluation"].get("body_pos_err") or float("nan")) for p in pts], marker=".",
                     label=label)
    cfg = curves[0]["config"]
    axes[1].axhline(cfg["episode_time"], color="grey", lw=0.8, ls="--")
    axes[2].axhline(100 * cfg["max_body_pos_err"], color="grey", lw=0.8, ls="--")
    for ax, title in zip(axes, ("reward per decision", "test episode length (s)", "body position error (cm)")):
        ax.set_xscale("log")
        ax.set_xlabel("samples (millions, log scale)")
        ax.set_title(title)
        ax.grid(alpha=0.3, which="both")
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=2, fontsize=8, frameon=False)
    fig.tight_layout(rect=(0, legend_height / fig.get_figheight(), 1, 1))
    with atomic_path(path) as tmp:
        fig.savefig(tmp, dpi=90, format="png")
    plt.close(fig)


def compare(paths, plot=None, budgets=()):
    """Prints each curve's point nearest to each budget (within BUDGET_TOLERANCE) as a Markdown
    table; plots the curves together."""
    curves = []
    for path in paths:
        try:
            curves.append(json.loads(Path(path).read_text()))
        except (OSError, ValueError) as e:
            raise SystemExit(f"time_to_skill: {path}: {e}")
    print("| curve | budget | samples | falls | length (s) | reward/decision | body pos (cm) |")
    print("|---|---|---|---|---|---|---|")
    for curve in curves:
        label = curve["config"].get("label") or curve["config"]["arg_file"]
        for budget in budgets or [max(p["samples"] for p in curve["points"])]:
            near = [p for p in curve["points"] if abs(p["samples"] - budget) <= BUDGET_TOLERANCE * budget]
            if not near:
                continue
            p = min(near, key=lambda q: abs(q["samples"] - budget))
            ev = p["evaluation"]
            err = ev.get("body_pos_err")
            print(f"| {label} | {budget / 1e6:g}M | {p['samples']:,} | {ev['falls']}/{ev['episodes']} | "
                  f"{ev['mean_length_s']:.2f} | {ev['mean_reward']:.3f} | "
                  f"{'-' if err is None else f'{100 * err:.1f}'} |")
    if plot:
        plot_curves(curves, plot)


def shown(value):
    """An argument's value as on a command line."""
    if isinstance(value, list):
        return " ".join(value) or "(none)"
    return str(value)


def load_or_start(args):
    out = Path(args.output)
    curve_path = out / CURVE_NAME
    # the EVAL_KEYS given on this command line (the parser leaves the others None or empty)
    given = {key: getattr(args, key) for key in EVAL_KEYS if getattr(args, key) not in (None, [])}
    cfg = {"arg_file": args.arg_file, "output": str(out), "num_workers": args.num_workers,
           **{key: given.get(key, default) for key, default in EVAL_KEYS.items()},
           "eval_every": args.eval_every, "max_samples": args.max_samples, "label": args.label,
           "json": args.json, "plot": args.plot, "eval_intermediate": args.eval_intermediate, "clip": args.clip,
           "skill": args.ship_name or args.clip, "echo": bool(args.clip),
           "agent_schedule": args.agent_schedule or []}
    recipe = args.recipe
    if recipe:
        cfg.update(skill=args.ship_name or recipe.name, recipe_rules=True, package=recipe.package,
                   run_args_name=Path(recipe.run_args_file).name, motion=recipe.motion_file)
    if curve_path.is_file():
        if not args.resume:
            raise SystemExit(f"time_to_skill: {curve_path} exists: pass --resume to go on with that run")
        try:
            curve = json.loads(curve_path.read_text())
            saved = curve["config"]
            curve["points"]
        except (ValueError, KeyError, TypeError) as e:
            raise SystemExit(f"time_to_skill: {curve_path}: not a time_to_skill curve ({e})")
        if saved["arg_file"] != args.arg_file:
            raise SystemExit(f"time_to_skill: {curve_path} was trained with {saved['arg_file']}, not {args.arg_file}")
        # what the evaluations mean and what trains stay as the run began (given anew, they must
        # agree); workers, budget and outputs may change
        for key, default in EVAL_KEYS.items():
            cfg[key] = saved.get(key, default)
            if key in given and given[key] != cfg[key]:
                raise SystemExit(f"time_to_skill: {curve_path} was trained with --{key} {shown(cfg[key])}, "
                                 f"not {shown(given[key])}: a run keeps "
                                 + ("its training arguments (--agent_schedule changes the agent file)"
                                    if key == "train_args" else "what its evaluations measure"))
        cfg["label"] = args.label or saved.get("label")
        cfg["agent_schedule"] = args.agent_schedule or saved.get("agent_schedule", [])
        curve["config"] = cfg
        return cfg, curve
    if (out / f"{MODEL_NAME}.resume.npz").is_file() and not args.resume:
        raise SystemExit(f"time_to_skill: {out} holds a training run: pass --resume to go on with it")
    out.mkdir(parents=True, exist_ok=True)
    return cfg, {"config": cfg, "points": [], "reached": None}


def ship(cfg, curve, dest, args_dir):
    """Writes the skill's package from the checkpoint of the point picked to ship (the recipe's
    ship decision), else of the point that first met the criterion."""
    picked = curve.get("ship") or curve["reached"]
    point = next(p for p in curve["points"] if p["iteration"] == picked["iteration"])
    checkpoint = point.get("checkpoint") or str(Path(cfg["output"]) / MODEL_NAME)
    shipped_cfg = {**cfg, **{k: curve[k] for k in ("rules", "reached", "ship") if curve.get(k)}}
    path = write_package(cfg["skill"], cfg["output"], point, checkpoint, shipped_cfg, dest, args_dir, ROOT,
                         package=cfg.get("package"), run_args=cfg.get("run_args_name"))
    played = Path(args_dir) / (cfg.get("run_args_name") or run_args_name(cfg["skill"]))
    print(f"shipped: {path} (watch it: DeepMimic.py --arg_file {played})", flush=True)


def apply_rules(cfg, curve):
    """The recipe's discount switch after the curve's last point (app/skill_recipes.py): a new leg
    in the run's agent_schedule from that point's samples, and its reason in the curve's `rules`.
    Idempotent: the points it reads are those after the last leg's start."""
    schedule = cfg["agent_schedule"]
    since = schedule[-1][0] if schedule else -1
    points = [p for p in curve["points"] if p["samples"] > since]
    switch = discount_switch(points, far=bool(schedule) and schedule[-1][1] == FAR_AGENT_FILE)
    if switch:
        agent_file, reason = switch
        schedule.append([points[-1]["samples"], agent_file])
        curve.setdefault("rules", []).append({"samples": points[-1]["samples"], "iteration": points[-1]["iteration"],
                                              "agent_file": agent_file, "reason": reason})
        print(f"rule: {reason}", flush=True)
        save_curve(cfg, curve)


def decide_ship(cfg, curve, final=False):
    """With the recipe's rules: the point to ship once ship_point picks one (final: the budget is
    spent, so the best point that met the criterion), kept as the curve's `ship`."""
    if curve.get("ship") or not curve.get("reached"):
        return
    decided = ship_point(curve["points"], curve["reached"]["samples"], cfg["max_body_pos_err"], final)
    if decided:
        point, reason = decided
        curve["ship"] = {**{k: point[k] for k in ("iteration", "samples", "wall_hours")}, "reason": reason}
        print(f"to ship: {point['samples']:,} samples ({reason})", flush=True)
        save_curve(cfg, curve)


def run(cfg, curve, train_fn=train_chunk):
    """Evaluates what is pending, then trains and evaluates round by round until the criterion or
    the budget; returns the curve."""
    out = Path(cfg["output"])
    while True:
        for iteration, model in pending_checkpoints(cfg, curve):
            add_point(cfg, curve, iteration, model)
        rules = cfg.get("recipe_rules")
        if rules:
            apply_rules(cfg, curve)
            decide_ship(cfg, curve)
        if curve.get("reached") and (curve.get("ship") or not rules):
            r = curve["reached"]
            print(f"criterion met at {r['samples']:,} samples, {r['wall_hours']:.2f} h of training", flush=True)
            return curve
        state = read_resume(out)
        samples = int(state["total_sample_count"]) if state else 0
        if samples >= cfg["max_samples"]:
            if rules:
                decide_ship(cfg, curve, final=True)
            print(f"budget of {int(cfg['max_samples']):,} samples reached"
                  + ("" if curve.get("reached") else " without the criterion"), flush=True)
            return curve
        every = cfg["eval_every"]
        target = min((samples // every + 1) * every, next_switch(cfg, samples), cfg["max_samples"])
        code = train_fn(scheduled(cfg, samples), target)
        if code != 0:
            if code in (128 + signal.SIGINT, 128 + signal.SIGTERM, -signal.SIGTERM, -signal.SIGINT):
                raise Interrupted("training stopped by a signal; rerun with --resume to go on")
            raise SystemExit(f"time_to_skill: training failed (exit code {code}); see {out}/train_stdout.txt")


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--clip", metavar="CLIP",
                   help="a clip of the library (app/skill_recipes.py: " + ", ".join(RECIPES) + ") with the "
                        "project's recipe and rules: its args file, output/skills/CLIP, resume and ship")
    p.add_argument("--motion", metavar="FILE",
                   help="a user's humanoid3d clip (DeepMimic's motion format, or .bvh: converted first) with the "
                        "walk's recipe, named by the file's stem")
    p.add_argument("--arg_file", help="the training's args file (with --clip: the clip's recipe file)")
    p.add_argument("--output", help="run folder (training output and the curve); with --clip: output/skills/CLIP")
    p.add_argument("--resume", action="store_true", help="go on with the run in --output (with --clip: always)")
    p.add_argument("--ship", action="store_true", help="at the criterion, ship the policy (with --clip: always)")
    p.add_argument("--ship_name", help="the shipped skill's name (default: the clip): humanoid3d_NAME_trained")
    p.add_argument("--ship_dir", default="data/policies", help="where the shipped policy's folder goes")
    p.add_argument("--ship_args_dir", default="args", help="where its run_ args file goes")
    p.add_argument("--num_workers", type=int, default=2)
    p.add_argument("--eval_every", type=float, default=250000, help="samples between evaluations")
    p.add_argument("--max_samples", type=float, default=10e6)
    p.add_argument("--episodes", type=int, help=f"test episodes per evaluation (default {EVAL_KEYS['episodes']})")
    p.add_argument("--episode_time", type=float,
                   help=f"test episodes are cut there, s (default {EVAL_KEYS['episode_time']:g})")
    p.add_argument("--criterion", choices=CRITERIA,
                   help="tracking (default): body position error; style (AMP): style error and root speed; "
                        "task (an AMP task scene): task reward per decision")
    p.add_argument("--max_body_pos_err", type=float,
                   help=f"tracking criterion: body position error, m (default {EVAL_KEYS['max_body_pos_err']})")
    p.add_argument("--max_style_err", type=float,
                   help=f"style criterion: style error, m (default {EVAL_KEYS['max_style_err']})")
    p.add_argument("--speed_tol", type=float,
                   help=f"style criterion: root speed within this fraction of the motion data's "
                        f"(default {EVAL_KEYS['speed_tol']})")
    p.add_argument("--min_task_reward", type=float,
                   help=f"task criterion: mean task reward per decision (default {EVAL_KEYS['min_task_reward']})")
    p.add_argument("--seed", type=int,
                   help=f"training seed, offset by the iteration at each round (default {EVAL_KEYS['seed']})")
    p.add_argument("--eval_seed", type=int, help=f"the evaluations' seed (default {EVAL_KEYS['eval_seed']})")
    p.add_argument("--label", help="the curve's name in plots")
    p.add_argument("--json", help="a copy of the curve (e.g. docs/bench/...json)")
    p.add_argument("--plot", help="PNG of the curve")
    p.add_argument("--eval_intermediate", action="store_true",
                   help="also evaluate the intermediate checkpoints not on the curve")
    p.add_argument("--agent_schedule", nargs="+", default=[], metavar="SAMPLES:FILE",
                   help="from SAMPLES samples on, train with agent file FILE (e.g. 1321130:data/agents/"
                        "ct_agent_humanoid_ppo_fast_gamma99.txt); kept on resume unless given anew")
    p.add_argument("--train_args", nargs=argparse.REMAINDER, default=[],
                   help="arguments passed on to training and evaluation (last on the line)")
    args = p.parse_args(argv)
    args.recipe = None
    if args.clip and args.motion:
        p.error("--clip and --motion: give one of them")
    if args.clip or args.motion:
        try:
            args.recipe = recipe_for(args.clip) if args.clip else motion_recipe(args.motion)
        except RecipeError as e:
            raise SystemExit(f"train_skill: {e}") from None
        args.clip = args.recipe.name
        args.arg_file = args.arg_file or args.recipe.arg_file
        args.train_args = args.train_args + args.recipe.train_args     # the first occurrence of a key wins
        if args.max_body_pos_err is None:
            args.max_body_pos_err = args.recipe.max_body_pos_err
        args.output = args.output or str(ROOT / "output" / "skills" / args.clip)
        # go on with a run there, also one stopped before its first evaluation (no curve yet)
        args.resume = args.resume or any((Path(args.output) / name).is_file()
                                         for name in (CURVE_NAME, f"{MODEL_NAME}.resume.npz"))
        args.ship = True
    elif args.ship and not args.ship_name:
        p.error("--ship needs --clip or --ship_name (the skill's name)")
    if not args.arg_file or not args.output:
        p.error("--arg_file and --output are required without --clip")
    if (args.eval_every <= 0 or args.max_samples <= 0 or (args.episodes is not None and args.episodes < 1)
            or (args.episode_time is not None and args.episode_time <= 0)):
        p.error("--eval_every, --max_samples, --episodes and --episode_time must be > 0")
    if args.num_workers < 1:
        p.error("--num_workers must be >= 1")
    if not (ROOT / args.arg_file).is_file() and not Path(args.arg_file).is_file():
        p.error(f"--arg_file {args.arg_file}: no such file")
    try:
        args.agent_schedule = parse_agent_schedule(args.agent_schedule)
    except ValueError as e:
        p.error(str(e))
    return args


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--worker"]:
        configure_process_env()
        print(RESULT_PREFIX + json.dumps(eval_worker(json.loads(argv[1]))), flush=True)
        return 0
    if argv[:1] == ["--compare"]:
        p = argparse.ArgumentParser(prog="time_to_skill --compare")
        p.add_argument("--compare", nargs="+", required=True)
        p.add_argument("--plot")
        p.add_argument("--at", nargs="*", type=float, default=[])
        opts = p.parse_args(argv)
        compare(opts.compare, opts.plot, opts.at)
        return 0
    args = parse_args(argv)
    configure_process_env()   # after --help and bad options, which need no TensorFlow
    cfg, curve = load_or_start(args)
    ship_dir, ship_args_dir = (ROOT / args.ship_dir, ROOT / args.ship_args_dir)
    try:
        if args.ship and not curve.get("shipped"):
            check_free(cfg["skill"], ship_dir, ship_args_dir, cfg.get("package"), cfg.get("run_args_name"))
        run(cfg, curve)
        if args.ship and curve.get("reached") and not curve.get("shipped"):
            ship(cfg, curve, ship_dir, ship_args_dir)
            curve["shipped"] = True
            save_curve(cfg, curve)
    except ValueError as e:
        raise SystemExit(f"time_to_skill: {e}")
    except (Interrupted, KeyboardInterrupt) as e:
        print(f"time_to_skill: stopped ({str(e) or 'Ctrl-C'}); {len(curve['points'])} points kept in "
              f"{Path(cfg['output']) / CURVE_NAME}; rerun with --resume to go on", flush=True)
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
