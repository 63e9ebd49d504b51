"""The skill library's recipes: one row per clip, one recipe for all, and the rules that replace
hand schedules.

A row (ClipRecipe) names a clip as `make skill CLIP=<name>` takes it, its character and DeepMimic's
own per-clip args file (args/train_<character>_<clip>_args.txt). Those files differ from clip to
clip only where DeepMimic's do: the motion file; the fall bodies (the crawl: 0-2 only; the
cartwheel: not the hands; roll and both get-ups: contact falls off); the backflip's and cartwheel's
root-rotation fall off; the dog's character, controller and agent file. The recipe (RECIPE_ARGS) is
the same for every row and is put on the command line after them, which overrides the file: 20 s
episodes from the start, the project's agent file (Adam, 5 epochs), actions relative to the
reference pose, the reference's next three poses in the state and the clip's velocities smoothed
over 2 keyframes (--ref_vel_smoothing; docs/README_time_to_skill.md measures each choice). A run
begun with an earlier recipe goes on with the arguments it began with. A user's own clip
(`make skill MOTION=<file>`) gets the walk's row with its motion file.

Rules the trainer applies the same way to every run (app/skill_training.py), each recorded in the
curve where it triggered:
- discount_switch: the backflip stalled at discount 0.95 and took off at 0.99 (the cartwheel was
  switched by hand too, sooner than the rule would have), and both went on to the criterion at
  0.95 once they stopped falling. The spin, at 0.99 from 1.25M, came down to 2 of 8 falling test
  episodes at 7.75M and stayed there to 10.0M at 13.6-15.9 cm; back at 0.95 its error fell to
  10.9 cm by 13.0M (docs/README_time_to_skill.md). Discount 0.99 is for runs that mostly fall: once at most
  FEW_FALLS of the test episodes fall, the tracking, which 0.95 learns, is what is left. The rule:
  while more than FEW_FALLS of the test episodes fall and the best mean test episode length since
  the last switch has not been beaten by 10% for STALL_SAMPLES samples, train at discount 0.99
  (FAR_AGENT_FILE); back at 0.95 (the recipe's) from the first evaluation without a fall, or once
  at most FEW_FALLS fall and the length has stalled the same way.
- fall_weight_switch: the spin, back at 0.95, kept falling in the same 2 of its 8 test episodes
  (starts in its aerial twist) from 7.75M samples to 14.75M; trained from 14.21M, by hand, with half
  its training resets drawn where training episodes fell (FALL_WEIGHT_ARGS,
  env/scenes/fall_weighted_starts.py), 1 fell from 15.0M and none from 16.25M. The rule: once at
  least one and at most FEW_FALLS of the test episodes fall, and the fewest falls since they have
  been that few has not come down for STALL_SAMPLES samples, training goes on with FALL_WEIGHT_ARGS
  to the end of the run (test resets stay uniform: the evaluations do not change). Replayed over
  the library's curves it fires on the spin's (8.50M) and the roll's (2.25M) alone.
- the ship decision (ship_point): the criterion met is not yet a skill to ship; it ships at the
  first point that meets it with a mean body position error of at most SHIP_ERR_FRACTION of the
  criterion's bound (7 cm of the humanoid's 8) and
  whose robustness evaluation (ROBUST_EPISODES episodes of another seed) succeeds in at least
  ROBUST_MIN_SUCCESSES; when none has for PLATEAU_SAMPLES samples after the criterion was first
  met, the criterion point with the most robust successes (then the lowest error) ships.

Pose termination for clips without contact falls: DeepMimic's args turn contact falls off for the
roll and both get-ups (the body lies on the ground by design), so no training episode ends early
and a policy that lies where the reference rolls and stands again is paid for 20 s
(docs/README_time_to_skill.md: the roll before and after the rule). Rows whose args file does so train
and are evaluated with POSE_TERMINATION_ARGS (MimicKit's pose termination: an episode ends at a
decision where a body is more than 0.8 m from where the reference has it, each relative to its
root); an episode it ends counts as a fall, so the criterion is DeepMimic's or stricter; the
shipped run_ file plays without it.

Push training (train_skill --push_training, off by default; the DeepMimic paper's policies met
its Table 6 without it): training episodes get DeepMimic's random pushes (env/sim/perturbs.py),
PUSH_TRAINING_ARGS: on the pelvis for 0.2 s, as Table 6's pushes, of 100-500 N in a random
direction every 2-4 s; evaluations and the shipped run_ file play without them.

Character size: the criterion's body position error bound (SUCCESS_BODY_POS_ERR, 8 cm) holds for
the dog too: the metric is root-relative and the dog's bodies sit as far from its root as the
humanoid's (docs/README_time_to_skill.md gives the calibration).
"""
from dataclasses import dataclass
from pathlib import Path

from env.tracking_error import SUCCESS_BODY_POS_ERR
from util.arg_parser import ArgParser
from util.paths import resolve_data_path

RECIPE_AGENT_FILE = "data/agents/ct_agent_humanoid_ppo_fast.txt"
FAR_AGENT_FILE = "data/agents/ct_agent_humanoid_ppo_fast_gamma99.txt"   # the recipe's at discount 0.99
RECIPE_ARGS = ("--time_lim_min", "20", "--time_lim_max", "20", "--agent_files", RECIPE_AGENT_FILE,
               "--ref_relative_actions", "true", "--tar_obs_steps", "1", "2", "3", "--ref_vel_smoothing", "2")

POSE_TERMINATION_ARGS = ("--pose_termination_dist", "0.8")

PUSH_TRAINING_ARGS = ("--enable_rand_perturbs", "true", "--perturb_part_ids", "0", "--perturb_time_min", "2",
                      "--perturb_time_max", "4", "--min_perturb", "100", "--max_perturb", "500",
                      "--min_pertrub_duration", "0.2", "--max_perturb_duration", "0.2")

STALL_SAMPLES = 700_000      # discount_switch: a stall lasts this long
STALL_GAIN = 1.1             # a new best mean test length beats the old one by 10%
FEW_FALLS = 0.25             # discount_switch: at most this fraction of the test episodes falling
FALL_WEIGHT_ARGS = ("--reset_fail_weight", "0.5")   # fall_weight_switch: half the training resets where they fell

SHIP_ERR_FRACTION = 0.875    # a shipped skill's mean body position error: at most 7/8 of the bound
ROBUST_SEED = 1
ROBUST_EPISODES = 16
ROBUST_MIN_SUCCESSES = 15
PLATEAU_SAMPLES = 1_000_000  # after the criterion: how long to look for a point to ship


@dataclass(frozen=True)
class ClipRecipe:
    name: str           # what make skill CLIP= takes, and the skill's name
    character: str      # humanoid3d or dog3d
    clip: str           # the clip in data/motions/<character>_<clip>.txt
    arg_file: str       # DeepMimic's per-clip args file
    motion_file: str = None     # a user's clip (MOTION=): overrides the args file's

    @property
    def contact_fall(self):
        """Whether DeepMimic's args file for the clip ends episodes at a fall contact."""
        parser = ArgParser()
        parser.load_file(resolve_data_path(self.arg_file))
        return parser.table.get("enable_char_contact_fall", ["true"]) != ["false"]

    @property
    def train_args(self):
        """The recipe's options (with pose termination where contact falls are off), after which a
        user's motion file."""
        extra = ("--motion_file", self.motion_file) if self.motion_file else ()
        return list(RECIPE_ARGS) + ([] if self.contact_fall else list(POSE_TERMINATION_ARGS)) + list(extra)

    @property
    def package(self):
        """The shipped folder's name: data/policies/<character>_<clip>_trained."""
        return f"{self.character}_{self.clip}_trained"

    @property
    def run_args_file(self):
        """DeepMimic's own run_ file name for the clip: it plays the shipped policy."""
        return f"args/run_{self.character}_{self.clip}_args.txt"

    @property
    def max_body_pos_err(self):
        """The criterion's bound for this character: the same for both (module docstring)."""
        return SUCCESS_BODY_POS_ERR


HUMANOID_CLIPS = ("walk", "run", "jog", "jump", "backflip", "spinkick", "cartwheel", "crawl", "dance_a", "dance_b",
                  "dance_spin", "getup_facedown", "getup_faceup", "kick", "punch", "roll", "spin", "zombie_walk")
DOG_CLIPS = ("canter", "pace", "trot", "spin")


def _row(character, clip, name=None):
    return ClipRecipe(name or clip, character, clip, f"args/train_{character}_{clip}_args.txt")


# make skill CLIP=<name>: the humanoid's clips by their names, the dog's as dog3d_<clip>
RECIPES = {r.name: r for r in [_row("humanoid3d", c) for c in HUMANOID_CLIPS]
           + [_row("dog3d", c, f"dog3d_{c}") for c in DOG_CLIPS]}


class RecipeError(ValueError):
    """A clip or motion file the recipe cannot train; the message is one line."""


def untrained_hint(run_args_file):
    """For DeepMimic's run_ file of a clip of the library (which plays what its train_ file writes
    until the clip ships): how to train the policy it looks for; "" for any other file."""
    name = Path(run_args_file).name
    for recipe in RECIPES.values():
        if Path(recipe.run_args_file).name == name:
            return (f"; no policy for {recipe.name} is shipped yet: `make skill CLIP={recipe.name}` trains one and "
                    f"rewrites {recipe.run_args_file} to play it")
    return ""


def recipe_for(clip):
    try:
        return RECIPES[clip]
    except KeyError:
        raise RecipeError(f"CLIP={clip}: not a clip of the library; one of {', '.join(RECIPES)}") from None


def motion_recipe(path, converted_dir="output/motions"):
    """The recipe for a user's humanoid3d clip: the walk's row with the motion file, named by the
    file's stem. A .bvh file is converted first (scripts/bvh_to_motion.py with its defaults) into
    converted_dir/<stem>.txt. RecipeError naming the file when it is missing, not a clip, or not
    the humanoid's."""
    from env.anim.character import CharacterDesc
    from env.anim.motion import Motion
    from util.paths import project_root

    try:
        resolved = resolve_data_path(path)
    except FileNotFoundError:
        raise RecipeError(f"MOTION={path}: no such file") from None
    stem = resolved.stem.removeprefix("humanoid3d_")
    if resolved.suffix.lower() == ".bvh":
        resolved = _convert_bvh(resolved, Path(project_root()) / converted_dir / f"{stem}.txt")
    char = CharacterDesc.load(resolve_data_path("data/characters/humanoid3d.txt"))
    try:
        Motion.load(resolved, char)
    except ValueError as e:
        raise RecipeError(f"MOTION={path}: not a humanoid3d clip ({e})") from None
    walk = RECIPES["walk"]
    return ClipRecipe(stem, walk.character, stem, walk.arg_file, motion_file=str(resolved))


def _convert_bvh(bvh_path, out):
    """scripts/bvh_to_motion.py's conversion with its defaults; RecipeError when it fails."""
    import importlib.util

    from util.paths import project_root

    spec = importlib.util.spec_from_file_location("bvh_to_motion", Path(project_root()) / "scripts/bvh_to_motion.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    out.parent.mkdir(parents=True, exist_ok=True)
    try:
        module.main([str(bvh_path), str(out)])
    except (ValueError, OSError, KeyError) as e:
        raise RecipeError(f"MOTION={bvh_path}: the BVH conversion failed ({e})") from None
    return out


# ---- the discount rule ----------------------------------------------------------------------------

def few_falls(evaluation):
    """At most FEW_FALLS of the evaluation's test episodes fell."""
    return evaluation["falls"] <= FEW_FALLS * evaluation["episodes"]


def stalled(points):
    """(best mean test length, its samples) when no point of `points` (non-empty) beat the best by
    STALL_GAIN within STALL_SAMPLES samples before the last; else None."""
    best, best_at = None, None
    for p in points:
        length = p["evaluation"]["mean_length_s"]
        if best is None or length > STALL_GAIN * best:
            best, best_at = length, p["samples"]
    return (best, best_at) if points[-1]["samples"] - best_at >= STALL_SAMPLES else None


def discount_switch(points, far):
    """The switch the rule makes after the last of `points` (the curve's points since the last
    switch, in order), given whether the run trains at discount 0.99 now: (agent file, reason),
    or None to go on as it is."""
    if not points:
        return None
    last, ev = points[-1], points[-1]["evaluation"]
    if ev["falls"] == 0:   # none falls: 0.95, back from 0.99 at once
        if far:
            return RECIPE_AGENT_FILE, f"discount 0.95 again: no test episode fell at {last['samples']:,} samples"
        return None
    few = few_falls(ev)
    stall = stalled(points) if few == far else None   # at 0.99: back with few falls; at 0.95: on with many
    if not stall:
        return None
    best, at = stall
    why = (f"{ev['falls']} of {ev['episodes']} test episodes fell at {last['samples']:,} samples "
           f"({'at most' if few else 'more than'} {FEW_FALLS:.0%}) and the best mean test length ({best:.2f} s at "
           f"{at:,} samples) was not beaten by {STALL_GAIN - 1:.0%} in {last['samples'] - at:,} samples")
    return (RECIPE_AGENT_FILE, f"discount 0.95 again: {why}") if far else (FAR_AGENT_FILE, f"discount 0.99: {why}")


# ---- the fall-weighted starts rule -----------------------------------------------------------------

def falls_stalled(points):
    """(fewest falls, its first samples) when the last of `points` (the curve's, in order) ends a
    stretch of evaluations in which at least one and at most FEW_FALLS of the test episodes fell, and
    the stretch's fewest falls were first seen STALL_SAMPLES or more before its last point; else None."""
    stretch = []
    for p in reversed(points):
        if not 0 < p["evaluation"]["falls"] or not few_falls(p["evaluation"]):
            break
        stretch.insert(0, p)
    if not stretch:
        return None
    fewest = min(p["evaluation"]["falls"] for p in stretch)
    since = next(p["samples"] for p in stretch if p["evaluation"]["falls"] == fewest)
    return (fewest, since) if points[-1]["samples"] - since >= STALL_SAMPLES else None


def fall_weight_switch(points):
    """The reason to train on with fall-weighted starts (FALL_WEIGHT_ARGS) after the last of
    `points` (the curve's points, in order), or None."""
    stall = falls_stalled(points)
    if not stall:
        return None
    fewest, since = stall
    ev = points[-1]["evaluation"]
    return (f"half the training resets where training episodes fell ({' '.join(FALL_WEIGHT_ARGS)}): "
            f"{ev['falls']} of {ev['episodes']} test episodes fell at {points[-1]['samples']:,} samples, and "
            f"at least one, at most {FEW_FALLS:.0%}, fell at every evaluation since {since:,} samples without "
            f"fewer than {fewest} falling")


# ---- the ship decision ----------------------------------------------------------------------------

def ship_candidate(point, bound):
    """A point that meets the criterion with its mean body position error within the margin
    (SHIP_ERR_FRACTION of the criterion's bound, m)."""
    err = point["evaluation"].get("body_pos_err")
    return point["criterion_met"] and err is not None and err <= SHIP_ERR_FRACTION * bound


def robust(point):
    r = point.get("robustness")
    return r is not None and r["successes"] >= ROBUST_MIN_SUCCESSES


def ship_point(points, first_met_samples, bound, final=False):
    """(the point to ship, why) or None to train on. points: the curve's, in order;
    first_met_samples: where the criterion was first met; bound: the criterion's body position
    error bound (m); final: no more training to come."""
    margin = 100 * SHIP_ERR_FRACTION * bound
    for p in points:
        if ship_candidate(p, bound) and robust(p):
            return p, (f"criterion met with mean body position error {100 * p['evaluation']['body_pos_err']:.1f} cm "
                       f"<= {margin:.1f} cm and {p['robustness']['successes']} of "
                       f"{p['robustness']['episodes']} robustness episodes succeeding")
    if points and (final or points[-1]["samples"] - first_met_samples >= PLATEAU_SAMPLES):
        met = [p for p in points if p["criterion_met"]]
        best = max(met, key=lambda p: ((p.get("robustness") or {}).get("successes", -1),
                                        -p["evaluation"]["body_pos_err"]))
        return best, (f"no point within {margin:.1f} cm and robust "
                      + ("by the end of the budget" if final else f"in {PLATEAU_SAMPLES:,} samples after the criterion")
                      + ": the one with the most robustness successes, then the lowest error")
    return None
