"""A skill run's curve, time_to_skill.json in its folder: the points (one per evaluated
checkpoint, keyed by the checkpoint's iteration), its configuration, and where the criterion was
reached, the rules triggered and the point to ship; written atomically, with an optional JSON copy
and PNG plot. Also what the run folder holds that the curve is built from (the resume state and
the training log), the progress line of a point, and curves compared at equal budgets."""
import json
from pathlib import Path

from app.skill_config import CURVE_NAME, MODEL_NAME
from util.atomic_write import atomic_path, write_json
from util.log_plot import read_log

LOG_NAME = "agent0_log.txt"
INT_MODELS = Path("intermediate") / "agent0_models"
BUDGET_TOLERANCE = 0.1      # compare --at: a point within 10% of a budget stands for it


def read_resume(out):
    """DIR's resume state (iteration, samples, wall hours, the workers of the training that wrote it,
    None in older states) and "model": the checkpoint saved with it (learning/resume_state.py: the
    previous one when a save was cut short); None when none."""
    from learning.checkpoint import CheckpointError
    from learning.resume_state import paired_checkpoint

    if not (Path(out) / f"{MODEL_NAME}.resume.npz").is_file():
        return None
    try:
        model, state = paired_checkpoint(Path(out) / MODEL_NAME)
    except CheckpointError as e:
        raise SystemExit(f"time_to_skill: {e}")
    workers = int(state["num_workers"]) if "num_workers" in state else None     # older states lack it
    return {"model": model, "workers": workers,
            **{k: float(state[k]) for k in ("iter", "total_sample_count", "wall_time")}}


def log_rows_by_iter(out):
    path = Path(out) / LOG_NAME
    if not path.is_file():
        return {}
    names, rows = read_log(path)
    return {int(row[names.index("Iteration")]): dict(zip(names, row)) for row in rows}


def pending_checkpoints(cfg, curve):
    """[(iteration, checkpoint path)] not yet on the curve: the intermediate ones (with
    eval_intermediate), then DIR's own checkpoint."""
    out = Path(cfg.output)
    done = {p["iteration"] for p in curve["points"]}
    found = {}
    if cfg.eval_intermediate and (out / INT_MODELS).is_dir():
        for index in (out / INT_MODELS).glob("agent0_int_model_*.ckpt.index"):
            found[int(index.name.split("_")[-1].split(".")[0])] = out / INT_MODELS / index.name[:-len(".index")]
    state = read_resume(out)
    if state is not None:
        found[int(state["iter"])] = Path(state["model"])
    return [(it, path) for it, path in sorted(found.items()) if it not in done]


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
    """The curve with cfg as its config, written atomically, and its copy and plot if asked for."""
    curve["config"] = cfg.to_json()
    write_json(Path(cfg.output) / CURVE_NAME, curve)
    if cfg.json:
        write_json(cfg.json, curve)
    if cfg.plot:
        plot_curves([curve], cfg.plot)


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
