"""Push recovery: the largest push a policy survives, DeepMimic's Table 6 protocol, on any skill.

    .venv/bin/python -m tests.bench.push_recovery --arg_file args/run_humanoid3d_walk_args.txt
        [--phases 4] [--directions forward sideways] [--max_force 1500] [--resolution 10]
        [--settle 2] [--push_time 0.2] [--window 3] [--seed 1] [--json OUT.json]

Protocol (the paper: "maximum forwards and sideways push each policy can tolerate before falling;
each push is applied for 0.2 s"). A trial is one test episode (mean actions, no training; app/
evaluate.run_episodes) from the same initial state every time (the scene's generator is put back
to its state after the world was built with --rand_seed --seed, so each trial's reset draws the
same reference state). The pelvis (the root body, id 0) is pushed at its centre, from update
round(t0 / dt) for round(push_time / dt) updates (dt the env's update, 1/600 s for the shipped
skills), with t0 = settle + phase * cycle for phase = 0, 1/N, ..., (N-1)/N of the clip's cycle
(its duration): N points spread over the motion cycle, whatever clip time the reset drew (each
phase's clip phase at the push is reported). The force keeps the world direction it was given at
the push's first update: "forward" is the root's heading then, on the ground plane (DeepMimic's
heading: the root's x axis, the character's facing, yaw about y; in a flip, wherever that axis
points), "sideways" the horizontal direction to the character's right (+z of the heading frame;
the right hip is at +z in humanoid3d); backward and sideways_left the opposite ones. The trial
survives when the scene reports no fall (Terminate.Fail: a fall-contact body on the ground)
before the end of the window, `window` seconds after the push ended (an episode that explodes
counts as a fall).

Per direction and phase, the largest force that survives is bisected on the grid of multiples of
--resolution up to --max_force (bisect_threshold): it assumes that a policy surviving a force
survives every smaller one (the shipped walk did at the two phases swept in 10 N steps; where it
does not, the figure is the edge the bisection met). One unpushed episode first checks that the
policy stands through the longest trial unpushed; a phase whose window it does not survive
unpushed reports 0. Per direction the minimum over the phases is the figure comparable to the
paper's ("survives"), the phases' own figures beside it.

Units: a force F here is F newtons on the real-size character (humanoid3d: 45 kg, the character
file's masses). Scenes take forces in character units and SimCharacter.apply_force multiplies them
by world_scale s at the pybullet call: the physics world is the character scaled by s in length,
masses unchanged (env/sim/world.py), so a physics force s F on mass m accelerates it by s F / m
physics lengths/s^2, F / m m/s^2 in character lengths: the push changes the character's momentum
by F * push_time N s, its centre-of-mass velocity by F * push_time / 45 m/s (240 N for 0.2 s:
1.07 m/s). tests/test_push_recovery_bench.py checks that velocity change on a character in the
air, through the scene and pybullet. The JSON is written atomically.
"""
import argparse
import math
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
if __package__ in (None, ""):
    sys.path.insert(0, str(ROOT))

from util.cli import configure_process_env, run_main  # noqa: E402

configure_process_env()

from app.build import load_world  # noqa: E402
from app.evaluate import EpisodeRecorder, EpisodeStats, run_episodes  # noqa: E402
from env.tracking_error import SUCCESS_BODY_POS_ERR  # noqa: E402
from util import math_util  # noqa: E402
from util.arg_parser import ArgError  # noqa: E402
from util.atomic_write import write_json  # noqa: E402

PROG = "push_recovery"
PELVIS = 0          # the root body
# heading-frame unit vectors: x the character's facing, y up, z its right
DIRECTIONS = {"forward": (1.0, 0.0, 0.0), "sideways": (0.0, 0.0, 1.0),
              "backward": (-1.0, 0.0, 0.0), "sideways_left": (0.0, 0.0, -1.0)}
# DeepMimic (Peng et al. 2018), Table 6: (forwards, sideways) N each policy survives, 0.2 s pushes
PAPER_TABLE_6 = {"walk": (240, 300), "run": (720, 300), "spinkick": (690, 600), "backflip": (440, 100),
                 "cartwheel": (200, 470)}


def push_direction(heading, direction):
    """World unit vector of `direction` (a DIRECTIONS name) for a root whose heading is `heading`
    (rad, DeepMimic's: yaw about +y, 0 facing +x): the heading-frame vector (x, y, z) rotated about
    y by the heading, (x cos h + z sin h, y, -x sin h + z cos h); forward is (cos h, 0, -sin h)."""
    x, y, z = DIRECTIONS[direction]
    c, s = math.cos(heading), math.sin(heading)
    return np.array([x * c + z * s, y, -x * s + z * c])


def bisect_threshold(survives, max_force, resolution):
    """(survived, fell): the largest force on the grid k * resolution (capped at max_force) that
    survives(force) and the next one up, which falls, for a survives that holds at 0 (the caller
    checks) and falls above some threshold. fell is None when max_force itself survives (the
    threshold is at least max_force). max_force is tried first, then the bracket [survived, fell]
    is halved on the grid: at most 1 + ceil(log2(max_force / resolution)) calls."""
    top = math.ceil(max_force / resolution - 1e-9)

    def force(k):
        return min(k * resolution, max_force)

    if survives(force(top)):
        return force(top), None
    lo, hi = 0, top
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if survives(force(mid)):
            lo = mid
        else:
            hi = mid
    return force(lo), force(hi)


@dataclass(frozen=True)
class Push:
    force: float        # N (module docstring: units)
    direction: str      # a DIRECTIONS name
    start: int          # the env update the push starts at (0: the episode's first)
    updates: int        # how many updates it lasts


@dataclass
class Trial:
    force: float
    survived: bool
    length_s: float             # the episode's length: the fall's time, or the window's end
    exploded: bool = False
    clip_phase: float = None    # the reference's phase in its cycle at the push's first update
    heading: float = None       # the root's heading then (rad)


class PushRecorder(EpisodeRecorder):
    """app.evaluate's recorder of one test episode, cut `window` s after the push, that pushes the
    pelvis at its centre before each of the push's updates (the scene holds an apply_force for one
    update); the direction is turned to the root's heading at the first of them, when the
    reference's clip phase is noted too."""

    def __init__(self, world, push, window):
        timestep = world.env.update_timestep
        super().__init__(world, 0, (push.start + push.updates) * timestep + window, SUCCESS_BODY_POS_ERR)
        self.push = push
        self.updates_run = 0
        self.force = None
        self.clip_phase = self.heading = None
        self.exploded = False

    def before_update(self, timestep):
        super().before_update(timestep)
        n, push, env = self.updates_run, self.push, self.env
        self.updates_run += 1
        if n == push.start:
            self.heading = float(math_util.quat_heading(env.sim_pose_vel()[0][3:7]))
            self.clip_phase = float(env.kin_char.time / env.motion.duration % 1.0)
            self.force = push.force * push_direction(self.heading, push.direction)
        if push.start <= n < push.start + push.updates:
            env.apply_force(PELVIS, self.force, env.sim_char.get_body_centre(PELVIS))

    def on_invalid_episode(self):
        """Exploding velocities end the trial as a fall (run_episodes stops at one episode)."""
        self.exploded = True
        self.stats.append(EpisodeStats(length_s=self.elapsed, fell=True, mean_reward=0.0, num_decisions=0))
        super().on_invalid_episode()


def run_trial(world, rng_state, push, window):
    """One push (module docstring), from the reset that rng_state (the scene generator's state)
    draws: a Trial."""
    world.env.rng.bit_generator.state = rng_state
    recorder = PushRecorder(world, push, window)
    stats = run_episodes(world, 1, recorder)[0]
    return Trial(force=push.force, survived=not stats.fell, length_s=stats.length_s, exploded=recorder.exploded,
                 clip_phase=recorder.clip_phase, heading=recorder.heading)


class PushBench:
    """The trials of one world: push times in updates, the unpushed check, the bisections."""

    def __init__(self, world, settle, push_time, window):
        env = world.env
        if not hasattr(env, "motion"):
            raise ArgError(f"--scene {env.name}: pushes are timed by a reference clip's cycle; this scene has none")
        self.world, self.window = world, window
        self.rng_state = env.rng.bit_generator.state
        self.timestep = env.update_timestep
        self.cycle = env.motion.duration
        self.settle = settle
        self.push_updates = max(1, round(push_time / self.timestep))
        longest = self.push_start(1.0) * self.timestep + push_time + window
        if longest > env.timer_params_end.time_max + 1e-9:
            raise ArgError(f"--settle {settle} + a cycle ({self.cycle:.3f} s) + --push_time {push_time} + --window "
                           f"{window} is {longest:.2f} s, longer than the test episodes "
                           f"({env.timer_params_end.time_max} s, --time_end_lim_max)")

    def push_start(self, phase):
        """The update the push at `phase` (a fraction of the cycle) starts at."""
        return round((self.settle + phase * self.cycle) / self.timestep)

    def trial(self, force, direction, phase):
        push = Push(force=force, direction=direction, start=self.push_start(phase), updates=self.push_updates)
        return run_trial(self.world, self.rng_state, push, self.window)

    def unpushed_fall_time(self, phases):
        """The time (s) the policy falls at unpushed within the longest trial of `phases`, or None."""
        trial = self.trial(0.0, "forward", max(phases))
        return None if trial.survived else trial.length_s

    def threshold(self, direction, phase, max_force, resolution, stands_unpushed):
        """The bisected threshold at one phase, with its trials (a dict for the JSON)."""
        trials = []

        def survives(force):
            trials.append(self.trial(force, direction, phase))
            return trials[-1].survived

        survived, fell = bisect_threshold(survives, max_force, resolution) if stands_unpushed else (0.0, 0.0)
        start = self.push_start(phase)
        return {"phase": phase, "push_time_s": round(start * self.timestep, 9), "survives_N": survived, "falls_N": fell,
                "falls_unpushed": not stands_unpushed,
                "clip_phase": trials[0].clip_phase if trials else None,
                "heading_rad": trials[0].heading if trials else None,
                "trials": [asdict(t) for t in trials]}


def measure(world, phases, directions, max_force, resolution, settle, push_time, window, log=print):
    """The benchmark (module docstring): per direction the minimum over `phases` (fractions of the
    cycle) of the largest force survived, and each phase's figure and trials."""
    bench = PushBench(world, settle, push_time, window)
    fall_time = bench.unpushed_fall_time(phases)
    log(f"unpushed: {'no fall' if fall_time is None else f'falls at {fall_time:.2f} s'}")
    results = {}
    for direction in directions:
        per_phase = []
        for phase in phases:
            window_end = (bench.push_start(phase) + bench.push_updates) * bench.timestep + window
            stands = fall_time is None or fall_time > window_end
            started = time.perf_counter()
            row = bench.threshold(direction, phase, max_force, resolution, stands)
            per_phase.append(row)
            log(f"{describe(direction, row)} ({len(row['trials'])} trials, {time.perf_counter() - started:.0f} s)")
        results[direction] = {"survives_N": min(r["survives_N"] for r in per_phase), "phases": per_phase}
    return {"unpushed_fall_s": fall_time, "cycle_s": bench.cycle, "update_s": bench.timestep,
            "push_updates": bench.push_updates, "directions": results}


def describe(direction, row):
    """One line of a phase's figures."""
    clip_phase = "" if row["clip_phase"] is None else f", clip phase {row['clip_phase']:.3f}"
    falls = "not within --max_force" if row["falls_N"] is None else f"at {row['falls_N']:g} N"
    return (f"{direction} phase {row['phase']:.3f} (push at {row['push_time_s']:.2f} s{clip_phase}): "
            f"survives {row['survives_N']:g} N, falls {falls}" + (", falls unpushed" if row["falls_unpushed"] else ""))


def clip_name(motion_path):
    """humanoid3d_walk.txt -> walk (the paper's table's key)."""
    return Path(motion_path).stem.removeprefix("humanoid3d_")


class OneLineParser(argparse.ArgumentParser):
    """Option errors raised as ArgError, which run_main prints as one line."""

    def error(self, message):
        raise ArgError(message)


def parse_options(argv):
    p = OneLineParser(prog=PROG, description=__doc__.split("\n")[0])
    p.add_argument("--arg_file", required=True, help="a run_ args file (the skill and its checkpoint)")
    p.add_argument("--phases", type=int, default=4, help="push times per cycle, evenly spaced")
    p.add_argument("--directions", nargs="+", choices=list(DIRECTIONS), default=["forward", "sideways"])
    p.add_argument("--max_force", type=float, default=1500.0, help="N: the largest force tried")
    p.add_argument("--resolution", type=float, default=10.0, help="N: the bisection's grid")
    p.add_argument("--settle", type=float, default=2.0, help="s of the episode before the first push")
    p.add_argument("--push_time", type=float, default=0.2, help="s the push lasts")
    p.add_argument("--window", type=float, default=3.0, help="s after the push within which a fall counts")
    p.add_argument("--seed", type=int, default=1, help="--rand_seed of the world: the initial state")
    p.add_argument("--json", help="write the results there (atomically)")
    options = p.parse_args(argv)
    checks = [("phases", options.phases >= 1, ">= 1"), ("max_force", options.max_force > 0, "> 0"),
              ("resolution", 0 < options.resolution <= options.max_force, "> 0 and <= --max_force"),
              ("settle", options.settle >= 0, ">= 0"), ("push_time", options.push_time > 0, "> 0"),
              ("window", options.window > 0, "> 0"), ("seed", options.seed >= 0, ">= 0")]
    for name, ok, rule in checks:
        if not ok:
            raise ArgError(f"--{name} {getattr(options, name)}: must be {rule}")
    if not Path(options.arg_file).is_file():
        raise ArgError(f"{options.arg_file}: argument file not found")
    return options


def main(argv=None):
    options = parse_options(argv)
    world = load_world(["--arg_file", options.arg_file, "--rand_seed", str(options.seed)], enable_draw=False)
    phases = [k / options.phases for k in range(options.phases)]
    result = measure(world, phases, options.directions, options.max_force, options.resolution, options.settle,
                     options.push_time, options.window)
    clip = clip_name(world.env.motion_file)
    paper = dict(zip(("forward", "sideways"), PAPER_TABLE_6[clip])) if clip in PAPER_TABLE_6 else {}
    for direction, row in result["directions"].items():
        each = ", ".join(f"{r['survives_N']:g}" for r in row["phases"])
        print(f"{direction}: survives {row['survives_N']:g} N, the minimum over the phases ({each})"
              + (f"; the paper's {paper[direction]} N" if direction in paper else ""))
    if options.json:
        config = {k: v for k, v in vars(options).items() if k != "json"}
        write_json(options.json, {"config": {**config, "phase_fractions": phases, "body": PELVIS},
                                  "clip": clip, "character_mass_kg": float(world.env.sim_char.total_mass),
                                  "force_units": "N on the real-size character (character units; the physics "
                                                 "force is world_scale times it)",
                                  "paper_table_6_N": paper, **result})


if __name__ == "__main__":
    sys.exit(run_main(main, PROG))
