"""Where a trained skill came from, and the layout it ships in.

Provenance (recorded on every curve point and in every shipped policy's metadata):
- `commit`: the project's git commit (`commit_dirty`: tracked files differed from it), None
  outside a git checkout;
- `args_sha256`: SHA-256 of what defines the experiment: the run's resolved arguments
  (DeepMimic_Optimizer's `args.txt`) without the keys that only steer one training chunk
  (CHUNK_KEYS: budget, seed offset, output folders, resume), then the text of each agent file in
  order (the copies beside args.txt). Two chunks of one run hash alike; a changed step size or
  clip does not.

A shipped skill (`write_package`) is a clip of the library (`walk`, `dog3d_trot`: its package
DEST/<character>_<clip>_trained/ and DeepMimic's own run_ file ARGS_DIR/run_<character>_<clip>_args.txt,
app/skill_recipes.py) or, for another learner or task, a skill of its own name (`gail_walk`:
DEST/humanoid3d_<skill>_trained/ and ARGS_DIR/run_humanoid3d_<skill>_trained_args.txt). The folder
holds agent0_model.ckpt (.index, .data-*) and metadata.json (skill, the clip of its motion file, the
provenance, the resolved args and agent files, seed, workers, samples, iteration, training hours,
the evaluation and the criterion; the run_ file that plays it; the run's agent_schedule, and the
recipe's rules, reached criterion, ship decision and robustness evaluation where it had them; for
a run that went on from a shipped skill (--train_on), that package: `trained_on`, its samples, hours
and commit; for a run that began from another run's weights (--init_model_files), that checkpoint
and what trained it: `started_from`, with the samples and hours of every stage in `samples_in_all`
and `training_hours_in_all` where each stage's are known; for a learner from demonstrations, the
dataset it learned from: `demonstrations`). The
folder is written beside its final name and renamed into place, so a reader never sees half a
package; one that takes the place of the package it trained on swaps it out the same way.
"""
import hashlib
import json
import shutil
import subprocess
from pathlib import Path

from app.skill_config import MODEL_NAME, PACKAGE_METADATA, criterion_from
from app.skill_recipes import PUSH_TRAINING_ARGS
from util.atomic_write import write_json, write_text
from util.paths import project_root

RUN_ARGS = "args.txt"                   # DeepMimic_Optimizer.copy_run_inputs writes it
CHUNK_KEYS = ("max_samples", "max_iters", "rand_seed", "output_path", "int_output_path", "resume", "model_files",
              "agent_files", "tensorboard")
# keys a run_ file drops from the training args (it plays: it does not train, write, push, end
# episodes at a pose or pick training starts where training episodes fell)
NOT_PLAYED = CHUNK_KEYS + ("train_agents", "num_workers", "init_model_files", "pose_termination_dist",
                           "reset_fail_weight") + tuple(arg[2:] for arg in PUSH_TRAINING_ARGS if arg.startswith("--"))


def read_run_args(run_dir):
    """[(key, [values])] of run_dir/args.txt, in order (util/arg_parser.py's reading, so quoted
    values stay whole); ValueError (ArgError) naming the file."""
    from util.arg_parser import ArgParser

    parser = ArgParser()
    parser.load_file(Path(run_dir) / RUN_ARGS)
    return list(parser.table.items())


def agent_texts(run_dir, run_args):
    """{file name: text} of each agent file of the run (the copy beside args.txt, else the named
    file), in order."""
    from util.paths import resolve_data_path

    texts = {}
    for name in dict(run_args).get("agent_files", []):
        if name != "none":
            copy = Path(run_dir) / Path(name).name
            texts[copy.name] = (copy if copy.is_file() else resolve_data_path(name)).read_text()
    return texts


def args_sha256(run_args, agents):
    digest = hashlib.sha256()
    for key, values in run_args:
        if key not in CHUNK_KEYS:
            digest.update(("--" + key + " " + " ".join(values) + "\n").encode())
    for text in agents:
        digest.update(b"\0" + text.encode())
    return digest.hexdigest()


def git_commit(root=None):
    """{"commit": sha or None, "commit_dirty": bool or None} of the checkout at root."""
    root = root or project_root()
    try:
        sha = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True,
                             timeout=30).stdout.strip()
        status = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
                                capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return {"commit": None, "commit_dirty": None}
    if not sha or status.returncode != 0:
        return {"commit": None, "commit_dirty": None}
    return {"commit": sha, "commit_dirty": bool(status.stdout.strip())}


def provenance(run_dir, root=None):
    """The commit of the code at root and the hash of run_dir's experiment (module docstring)."""
    run_args = read_run_args(run_dir)
    return {**git_commit(root), "args_sha256": args_sha256(run_args, agent_texts(run_dir, run_args).values())}


def package_name(skill):
    return f"humanoid3d_{skill}_trained"


def run_args_name(skill):
    return f"run_{package_name(skill)}_args.txt"


def shipped_run_args(metadata):
    """The run_ file that plays a shipped package, from its metadata: the one it records, else
    DeepMimic's own run_ file for a clip of the library, else run_humanoid3d_<skill>_trained_args.txt."""
    from app.skill_recipes import RECIPES

    skill = metadata["skill"]
    if metadata.get("run_args_file"):
        return metadata["run_args_file"]
    return RECIPES[skill].run_args_file if skill in RECIPES else f"args/{run_args_name(skill)}"


def motion_clip(run_args):
    """The clip name of the run's motion file (humanoid3d_<clip>.txt), else the file's stem."""
    stem = Path(dict(run_args).get("motion_file", [""])[0]).stem
    return stem.removeprefix("humanoid3d_")


def plays_a_package(run_args_file):
    """A run_ file plays a shipped policy (its --model_files under data/policies), rather than
    what its train_ file writes into output/ (DeepMimic's own run_ files before a skill ships)."""
    text = Path(run_args_file).read_text()
    return any(line.split()[:1] == ["--model_files"] and "/policies/" in line for line in text.splitlines())


def check_free(skill, dest, args_dir, package=None, run_args=None, replaces=None):
    """ValueError naming the first of the skill's package or run_ file that already exists (so a
    long run never ends by refusing to write its result); a run_ file that plays no package yet
    (DeepMimic's own, which plays output/) is free to be replaced, and so are the package
    `replaces` (a run that trained on it: --train_on) and its run_ file."""
    folder = Path(dest) / (package or package_name(skill))
    played = Path(args_dir) / (run_args or run_args_name(skill))
    if replaces and folder.resolve() == Path(replaces).resolve():
        return
    for path in (folder, played):
        if path.exists() and (path == folder or plays_a_package(path)):
            raise ValueError(f"{path} exists: remove it or ship elsewhere (--ship_dir, --ship_args_dir)")


def run_args_text(skill, run_args, model_path, metadata_path):
    """The run_ file: the training's own arguments (so the scene, clip and state layout match the
    checkpoint), minus what only training needs, plus the checkpoint, not training."""
    lines = [f"# Plays the {skill} skill trained by this project (scripts/train_skill.py).",
             f"# How it was trained and evaluated: {metadata_path}.", ""]
    for key, values in run_args:
        if key not in NOT_PLAYED:
            lines.append(" ".join(["--" + key, *values]))
    agents = dict(run_args).get("agent_files", [])
    lines += ["", f"--agent_files {' '.join(agents)}", "--train_agents false", f"--model_files {model_path}"]
    return "\n".join(lines) + "\n"


def demonstrations(run_args):
    """What a run that learned from demonstrations (--demo_file) learned from: the file as named,
    its SHA-256, the episodes and steps used (--demo_episodes N > 0: the first N), the file's
    episode count and its expert's policy; None without --demo_file."""
    from learning.demos import load_demos
    from util.paths import resolve_data_path

    run_args = dict(run_args)
    if not run_args.get("demo_file"):
        return None
    name = run_args["demo_file"][0]
    data = load_demos(name)
    used = int(run_args.get("demo_episodes", ["0"])[0])
    subset = data.first_episodes(used) if used > 0 else data
    return {"file": name, "sha256": hashlib.sha256(resolve_data_path(name).read_bytes()).hexdigest(),
            "episodes": subset.num_episodes, "steps": subset.num_steps, "file_episodes": data.num_episodes,
            "expert_model_file": data.metadata.get("expert", {}).get("model_file")}


def started_from(run_args):
    """What a run that began from another agent's weights (--init_model_files) began from: the
    checkpoint as named and the SHA-256 of its data file, and what trained it: a shipped package's
    skill, samples, training hours and commit (its metadata.json), or a run folder's samples and
    hours at its log's last row (agent0_log.txt; the checkpoint a stopped run leaves), each with
    its own `started_from`; with neither beside it, the checkpoint alone. None without
    --init_model_files; ValueError naming a checkpoint that is missing."""
    from app.skill_curve import LOG_NAME
    from learning.checkpoint import DATA_SUFFIX, CheckpointError, resolve_checkpoint
    from util.log_plot import read_log

    named = dict(run_args).get("init_model_files")
    if not named:
        return None
    try:
        data = Path(resolve_checkpoint(named[0]) + DATA_SUFFIX)
    except CheckpointError as err:
        raise ValueError(f"--init_model_files {named[0]}: {err}") from None
    if not data.is_file():
        raise ValueError(f"--init_model_files {named[0]}: no checkpoint there ({data.name} missing)")
    folder = data.parent
    source = {"model_files": named[0], "sha256": hashlib.sha256(data.read_bytes()).hexdigest()}
    if (folder / PACKAGE_METADATA).is_file():
        meta = json.loads((folder / PACKAGE_METADATA).read_text())
        source.update(package=meta["skill"], samples=meta["samples"], training_hours=meta["training_hours"],
                      commit=meta.get("commit"), started_from=meta.get("started_from"))
    elif (folder / LOG_NAME).is_file():
        names, rows = read_log(folder / LOG_NAME)
        last = dict(zip(names, rows[-1]))
        source.update(run=str(folder), samples=int(last["Samples"]), training_hours=float(last["Wall_Time"]),
                      started_from=started_from(read_run_args(folder)) if (folder / RUN_ARGS).is_file() else None)
    return source


def chain_totals(samples, hours, source):
    """(samples, hours) of a run and every run it started from (started_from's chain); None when
    a stage's training is unknown."""
    while source:
        if "samples" not in source:
            return None
        samples, hours = samples + source["samples"], hours + source["training_hours"]
        source = source.get("started_from")
    return samples, hours


def write_package(skill, run_dir, point, checkpoint, curve_config, dest, args_dir, root=None, package=None,
                  run_args=None, replaces=None):
    """Ships `checkpoint` (a prefix: run_dir's own or an intermediate one) of the run in run_dir
    as `skill` (module docstring); returns the package dir. point: the curve point shipped (its
    evaluation, samples, hours, provenance). package, run_args: the folder's and the run_ file's
    names (a clip of the library: <character>_<clip>_trained and DeepMimic's run_ file name);
    replaces: the package the run trained on, which this one may take the place of (check_free)."""
    from learning.checkpoint import copy_checkpoint

    run_dir, dest, args_dir = Path(run_dir), Path(dest), Path(args_dir)
    root = Path(root or project_root())
    check_free(skill, dest, args_dir, package, run_args, replaces)
    package = package or package_name(skill)
    run_args_file = args_dir / (run_args or run_args_name(skill))
    played_args = read_run_args(run_dir)
    agents = dict(played_args).get("agent_files", [])
    final = dest / package
    staging = dest / f".{package}.staging"
    if not Path(f"{checkpoint}.index").is_file():
        raise ValueError(f"{checkpoint}: no checkpoint to ship")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    copy_checkpoint(checkpoint, staging / MODEL_NAME)
    texts = agent_texts(run_dir, played_args)
    for name, text in texts.items():
        write_text(staging / name, text)
    metadata = {
        "skill": skill, "clip": motion_clip(played_args), "checkpoint": MODEL_NAME,
        **{k: point.get(k) for k in ("commit", "commit_dirty", "args_sha256")},
        "seed": curve_config.get("seed"), "workers": point.get("workers"), "cores": point.get("cores"),
        "samples": point["samples"], "iteration": point["iteration"], "training_hours": point["wall_hours"],
        "evaluation": point["evaluation"],
        "criterion": criterion_from(curve_config).bounds,
        "recipe_arg_file": curve_config.get("arg_file"),
        "run_args_file": str(run_args_file.relative_to(root) if run_args_file.is_relative_to(root) else run_args_file),
        "args": [" ".join(["--" + k, *v]) for k, v in played_args],
        "agent_files": {name: json.loads(text) for name, text in texts.items()},
    }
    if curve_config.get("agent_schedule"):
        metadata["agent_schedule"] = curve_config["agent_schedule"]
    # the package trained on, the pushes in training, and the recipe's rules (app/skill_recipes.py):
    # where each triggered (the fall-weighted starts from fall_weighted_from), the first point that
    # met the criterion, why this point ships, and its robustness evaluation
    for key in ("trained_on", "push_training", "fall_weighted_from", "rules", "reached", "ship"):
        if curve_config.get(key):
            metadata[key] = curve_config[key]
    if point.get("robustness"):
        metadata["robustness"] = point["robustness"]
    source = started_from(played_args)
    if source:
        metadata["started_from"] = source
        totals = chain_totals(point["samples"], point["wall_hours"], source)
        if totals:
            metadata["samples_in_all"], metadata["training_hours_in_all"] = totals
    demos = demonstrations(played_args)
    if demos:
        metadata["demonstrations"] = demos
    write_json(staging / PACKAGE_METADATA, metadata)
    if final.exists():                      # the package trained on (replaces): swapped out, then removed
        old = dest / f".{package}.replaced"
        shutil.rmtree(old, ignore_errors=True)
        final.rename(old)
        staging.rename(final)
        shutil.rmtree(old)
    else:
        staging.rename(final)
    rel = final.relative_to(root) if final.is_relative_to(root) else final
    played = [(k, [a if a == "none" else str(rel / Path(a).name) for a in agents] if k == "agent_files" else v)
              for k, v in played_args]
    write_text(run_args_file, run_args_text(skill, played, rel / MODEL_NAME, rel / PACKAGE_METADATA))
    return final
