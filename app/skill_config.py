"""What a skill run is, typed, with its defaults in one place: the criterion its evaluations judge
by (Criterion) and the run's configuration (RunConfig), read from train_skill's command line
(parse_args) or from the curve of a run to go on with (load_or_start).

The curve keeps the configuration as one flat JSON object, its "config" (RunConfig.to_json); the
criterion's fields sit there under their option names (`criterion` is the kind). What the
evaluations mean and what trains (FIXED_KEYS: the criterion, the training seed and the training
arguments) is fixed when a run begins and kept on resume; given anew it must agree. Workers,
budget and outputs may change from one stretch of a run to the next.
"""
import argparse
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path

from app.skill_recipes import FALL_WEIGHT_ARGS, RECIPES, RecipeError, motion_recipe, recipe_for
from env.tracking_error import SUCCESS_BODY_POS_ERR
from util.paths import project_root, resolve_data_path

ROOT = project_root()
CRITERIA = ("tracking", "style", "task")
CURVE_NAME = "time_to_skill.json"
MODEL_NAME = "agent0_model.ckpt"
PACKAGE_METADATA = "metadata.json"   # a shipped skill's (app/skill_package.py)
FULL_LENGTH_SLACK = 0.05     # s: an episode cut at episode_time ends within one decision of it


@dataclass(frozen=True)
class Criterion:
    """When a skill is learned. Per episode: it runs episode_time s (or, for a non-looping clip,
    to the clip's end) without a fall and
    - tracking (the clip followed in time): its mean body position error <= max_body_pos_err (m);
    - style (AMP, which does not follow the clip in time): its style error (the body position
      error to the nearest frame of the motion data, env/style_error.py) <= max_style_err (m:
      the tracking walk's 4.1 cm plus 2 cm, docs/bench/style_error_calibration.json) and its
      mean root speed within speed_tol of the motion data's;
    - task (an AMP task scene): its mean task reward per decision >= min_task_reward (the style
      error is reported).
    The skill is learned when all `episodes` episodes of seed eval_seed succeed. The reward per
    decision is reported, not gated on (clips' reward scales differ)."""
    kind: str = "tracking"
    episodes: int = 8
    episode_time: float = 20.0
    eval_seed: int = 1000
    max_body_pos_err: float = SUCCESS_BODY_POS_ERR
    max_style_err: float = 0.061
    speed_tol: float = 0.2
    min_task_reward: float = 0.7

    @property
    def bounds(self):
        """The fields the kind judges by (the shipped metadata's `criterion`)."""
        own = {"tracking": ("max_body_pos_err",), "style": ("max_style_err", "speed_tol"),
               "task": ("min_task_reward",)}[self.kind]
        return {"kind": self.kind, **{k: getattr(self, k) for k in ("episodes", "episode_time", *own, "eval_seed")}}


def episode_successes(criterion, ev):
    """Per episode of an evaluation: ran the full episode_time or to a non-looping clip's end
    (so without a fall: a fall ends it) and met the criterion's bound."""
    lengths = ev["lengths_s"]
    missing = [None] * len(lengths)
    ended = ev.get("clip_ended") or [False] * len(lengths)
    if criterion.kind == "task":
        within = [reward is not None and reward >= criterion.min_task_reward for reward in ev.get("rewards") or missing]
    elif criterion.kind == "style":
        clip = ev.get("clip_speed")
        within = [err is not None and err <= criterion.max_style_err and clip is not None
                  and abs(speed - clip) <= criterion.speed_tol * clip
                  for err, speed in zip(ev.get("style_errs") or missing, ev.get("root_speeds") or missing)]
    else:
        within = [err is not None and err <= criterion.max_body_pos_err for err in ev.get("body_pos_errs") or missing]
    return [(length >= criterion.episode_time - FULL_LENGTH_SLACK or clip_end) and ok
            for length, clip_end, ok in zip(lengths, ended, within)]


def criterion_met(criterion, ev):
    """The skill is learned: no fall, and every evaluated episode succeeds (episode_successes)."""
    successes = episode_successes(criterion, ev)
    return bool(ev["falls"] == 0 and len(successes) == ev["episodes"] and all(successes))


@dataclass
class RunConfig:
    arg_file: str
    output: str
    num_workers: int = 2
    seed: int = 1                        # training seed, offset by the iteration at each round
    train_args: list = field(default_factory=list)
    criterion: Criterion = Criterion()
    eval_every: float = 250000
    max_samples: float = 10e6
    agent_schedule: list = field(default_factory=list)      # [[samples, agent file]]
    fall_weighted_from: int = None       # samples from which training draws fall-weighted starts (the recipe's rule)
    eval_intermediate: bool = False
    label: str = None
    json: str = None                     # a copy of the curve
    plot: str = None                     # the curve's PNG
    # shipping: the skill's name, and for a clip of the library its package and run_ file names
    skill: str = None
    package: str = None
    run_args_name: str = None
    recipe_rules: bool = False           # the recipe's rules (app/skill_recipes.py) apply
    train_on: str = None                 # a shipped package the run starts from (its weights, samples, hours)
    push_training: bool = False          # training episodes pushed (app/skill_recipes.py: PUSH_TRAINING_ARGS)
    echo: bool = False                   # the optimizer's progress lines on this process's stdout too

    @property
    def train_on_path(self):
        """The package trained on (--train_on), as a path from anywhere; None without one."""
        return ROOT / self.train_on if self.train_on else None

    def to_json(self):
        """The curve's flat "config"."""
        flat = asdict(self)
        crit = flat.pop("criterion")
        crit["criterion"] = crit.pop("kind")
        return {**flat, **crit}

    def fixed(self):
        """{option: value} of what a run keeps from its start (FIXED_KEYS)."""
        return {key: self.to_json()[key] for key in FIXED_KEYS}

    def scheduled(self, samples):
        """The configuration of a round of training from `samples` on: the agent file of the last
        agent_schedule entry at or below `samples` first in train_args (the first --agent_files
        on a command line wins), and from fall_weighted_from on FALL_WEIGHT_ARGS last (a user's own
        --reset_fail_weight wins); itself before both."""
        files = [path for at, path in self.agent_schedule if at <= samples]
        weighted = self.fall_weighted_from is not None and samples >= self.fall_weighted_from
        if not files and not weighted:
            return self
        return replace(self, train_args=[*(("--agent_files", files[-1]) if files else ()), *self.train_args,
                                         *(FALL_WEIGHT_ARGS if weighted else ())])

    def next_switch(self, samples):
        """The first agent_schedule entry beyond `samples` (inf: none)."""
        return min((at for at, _ in self.agent_schedule if at > samples), default=float("inf"))


CRITERION_OPTIONS = {("criterion" if f.name == "kind" else f.name): f.name for f in fields(Criterion)}
FIXED_KEYS = ("seed", "train_args", "train_on", "push_training", *CRITERION_OPTIONS)


def criterion_from(values):
    """A Criterion from {option: value} (missing options: the defaults)."""
    return Criterion(**{name: values[opt] for opt, name in CRITERION_OPTIONS.items() if values.get(opt) is not None})


# ---- the command line --------------------------------------------------------------------------

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


def build_parser(description):
    d = Criterion()
    p = argparse.ArgumentParser(description=description)
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
    p.add_argument("--num_workers", type=int, default=RunConfig.num_workers)
    p.add_argument("--eval_every", type=float, default=RunConfig.eval_every, help="samples between evaluations")
    p.add_argument("--max_samples", type=float, default=RunConfig.max_samples)
    p.add_argument("--episodes", type=int, help=f"test episodes per evaluation (default {d.episodes})")
    p.add_argument("--episode_time", type=float, help=f"test episodes are cut there, s (default {d.episode_time:g})")
    p.add_argument("--criterion", choices=CRITERIA,
                   help="tracking (default): body position error; style (AMP): style error and root speed; "
                        "task (an AMP task scene): task reward per decision")
    p.add_argument("--max_body_pos_err", type=float,
                   help=f"tracking criterion: body position error, m (default {d.max_body_pos_err}; a clip's row "
                        "may set another)")
    p.add_argument("--max_style_err", type=float, help=f"style criterion: style error, m (default {d.max_style_err})")
    p.add_argument("--speed_tol", type=float,
                   help=f"style criterion: root speed within this fraction of the motion data's (default "
                        f"{d.speed_tol})")
    p.add_argument("--min_task_reward", type=float,
                   help=f"task criterion: mean task reward per decision (default {d.min_task_reward})")
    p.add_argument("--seed", type=int,
                   help=f"training seed, offset by the iteration at each round (default {RunConfig.seed})")
    p.add_argument("--eval_seed", type=int, help=f"the evaluations' seed (default {d.eval_seed})")
    p.add_argument("--label", help="the curve's name in plots")
    p.add_argument("--json", help="a copy of the curve (e.g. docs/bench/...json)")
    p.add_argument("--plot", help="PNG of the curve")
    p.add_argument("--eval_intermediate", action="store_true",
                   help="also evaluate the intermediate checkpoints not on the curve")
    p.add_argument("--agent_schedule", nargs="+", default=[], metavar="SAMPLES:FILE",
                   help="from SAMPLES samples on, train with agent file FILE (e.g. 1321130:data/agents/"
                        "ct_agent_humanoid_ppo_fast_gamma99.txt); kept on resume unless given anew")
    p.add_argument("--train_on", metavar="PACKAGE",
                   help="go on training a shipped skill (its folder, e.g. data/policies/humanoid3d_jump_trained): "
                        "the run starts from its weights, samples and hours, and may ship over it")
    p.add_argument("--push_training", action="store_true", default=None,
                   help="push the training episodes (DeepMimic's random pushes on the pelvis, "
                        "app/skill_recipes.py: PUSH_TRAINING_ARGS); evaluations are not pushed")
    p.add_argument("--train_args", nargs=argparse.REMAINDER, default=[],
                   help="arguments passed on to training and evaluation (last on the line)")
    return p


def parse_args(argv, description="Trains a skill until it meets its criterion"):
    """The command line, checked (argparse's errors; a clip or motion file the recipe cannot
    train: SystemExit with one line); args.recipe is the clip's row (None without --clip or
    --motion)."""
    p = build_parser(description)
    args = p.parse_args(argv)
    args.recipe = None
    args.user_train_args = list(args.train_args)      # what the command line gave, before the recipe's
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
    if args.train_on:
        package = Path(args.train_on).resolve()
        if not all((package / name).is_file() for name in (PACKAGE_METADATA, f"{MODEL_NAME}.index")):
            p.error(f"--train_on {args.train_on}: not a shipped skill (no {PACKAGE_METADATA} and {MODEL_NAME} there)")
        args.train_on = str(package.relative_to(ROOT) if package.is_relative_to(ROOT) else package)
    try:
        args.agent_schedule = parse_agent_schedule(args.agent_schedule)
    except ValueError as e:
        p.error(str(e))
    return args


def given_fixed(args):
    """The FIXED_KEYS this command line gives (the parser leaves the others None or empty)."""
    return {key: getattr(args, key) for key in FIXED_KEYS if getattr(args, key) not in (None, [])}


def config_from_args(args, fixed):
    """The RunConfig of the command line, with `fixed` (FIXED_KEYS' values) for what the run keeps."""
    recipe = args.recipe
    cfg = RunConfig(arg_file=args.arg_file, output=str(args.output), num_workers=args.num_workers,
                    seed=fixed.get("seed", RunConfig.seed), train_args=list(fixed.get("train_args", [])),
                    criterion=criterion_from(fixed), eval_every=args.eval_every, max_samples=args.max_samples,
                    agent_schedule=args.agent_schedule, eval_intermediate=args.eval_intermediate, label=args.label,
                    json=args.json, plot=args.plot, skill=args.ship_name or args.clip, echo=bool(args.clip),
                    train_on=fixed.get("train_on"), push_training=bool(fixed.get("push_training")))
    if recipe:
        cfg = replace(cfg, skill=args.ship_name or recipe.name, recipe_rules=True, package=recipe.package,
                      run_args_name=Path(recipe.run_args_file).name)
    return cfg


def shown(value):
    """An argument's value as on a command line."""
    if isinstance(value, list):
        return " ".join(value) or "(none)"
    return str(value)


def load_or_start(args):
    """(RunConfig, curve) of a new run in args.output, or of the run there to go on with
    (--resume): its curve read back, what it keeps (FIXED_KEYS) checked against the command
    line's. SystemExit with one line when they disagree or the folder is not what it should be."""
    import json

    out = Path(args.output)
    curve_path = out / CURVE_NAME
    given = given_fixed(args)
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
        # a curve without a key began with its default
        kept = {**RunConfig(arg_file="", output="").fixed(), **{k: saved[k] for k in FIXED_KEYS if k in saved}}
        if args.recipe is not None and not args.user_train_args and given.get("train_args") != kept["train_args"]:
            # a recipe run begun with an earlier recipe: the recipe's arguments are not the user's to keep
            print(f"time_to_skill: {out} goes on with the training arguments it began with "
                  f"({shown(kept['train_args'])}); the recipe's are now {shown(given.pop('train_args'))}", flush=True)
        for key, value in given.items():
            if value != kept[key]:
                raise SystemExit(f"time_to_skill: {curve_path} was trained with --{key} {shown(kept[key])}, "
                                 f"not {shown(value)}: a run keeps "
                                 + ("its training arguments (--agent_schedule changes the agent file)"
                                    if key == "train_args" else "what its evaluations measure"))
        cfg = config_from_args(args, kept)
        cfg = replace(cfg, label=args.label or saved.get("label"),
                      agent_schedule=args.agent_schedule or saved.get("agent_schedule", []),
                      fall_weighted_from=saved.get("fall_weighted_from"))
        curve["config"] = cfg.to_json()
        return cfg, curve
    if (out / f"{MODEL_NAME}.resume.npz").is_file() and not args.resume:
        raise SystemExit(f"time_to_skill: {out} holds a training run: pass --resume to go on with it")
    out.mkdir(parents=True, exist_ok=True)
    cfg = config_from_args(args, given)
    return cfg, {"config": cfg.to_json(), "points": [], "reached": None}
