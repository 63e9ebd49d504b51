"""Scene base (DeepMimic's cScene): the Env API's world part, the episode timer, the random
generator, drawing hooks.

Episode timer: at each reset a maximum episode time is drawn from the timer parameters
(`timer_type` uniform: uniform in [time_lim_min, time_lim_max]; exp: time_lim_min + an exponential
of mean time_lim_exp, capped at time_lim_max; the defaults, infinite, never end an episode).

Drawing hooks for the viewer (all in character-file units, y up, ground at height 0):
draw_characters() -> [(CharacterDesc, body_pos (15, 3), body_rot (15, 4), 'sim' | 'kin')],
camera_focus() -> (3,), draw_projectiles() -> [(size (3,), pos (3,), rot (4,))], hud_lines() -> the
scene's lines of HUD text. Interaction hooks: apply_force(body_id, force, world_pos),
throw_projectile(big) and steer_target(turn, speed_change) (heading_amp's target, from the arrow
keys); scenes without physics or without a target keep the no-op defaults.
"""
import math
from dataclasses import dataclass, replace

import numpy as np

from env.env import FRAME_TIME, Env

TIMER_TYPES = ("uniform", "exp")
CIRCLE_POINTS = 48          # segments of a drawn ground circle


def ground_circle(x, z, radius, height):
    """A horizontal circle about (x, z) at `height` as a closed polyline ((CIRCLE_POINTS + 1, 3)), for a
    scene's draw_task_objects lines."""
    angles = np.linspace(0.0, 2 * np.pi, CIRCLE_POINTS + 1)
    return np.stack([x + radius * np.cos(angles), np.full_like(angles, height), z + radius * np.sin(angles)], axis=1)


@dataclass(frozen=True)
class TimerParams:
    kind: str = "uniform"
    time_min: float = math.inf
    time_max: float = math.inf
    time_exp: float = 1.0

    def blend(self, other, lerp):
        """Linear blend of the limits (DeepMimic's cTimer::tParams::Blend); inf stays inf."""
        def mix(a, b):
            return a if a == b else (1.0 - lerp) * a + lerp * b
        return replace(self, time_min=mix(self.time_min, other.time_min), time_max=mix(self.time_max, other.time_max),
                       time_exp=mix(self.time_exp, other.time_exp))


class Timer:
    def __init__(self, params):
        self.params = params
        self.time = 0.0
        self.max_time = math.inf

    def reset(self, rng):
        self.time = 0.0
        prm = self.params
        if prm.kind == "uniform":
            self.max_time = prm.time_min if prm.time_min == prm.time_max else rng.uniform(prm.time_min, prm.time_max)
        else:
            self.max_time = min(prm.time_min + rng.exponential(prm.time_exp), prm.time_max)

    def update(self, timestep):
        self.time += timestep

    def is_end(self):
        return self.time >= self.max_time


def parse_timer_params(arg_parser, prefix, base=TimerParams()):
    """TimerParams from --{prefix}_min/_max/_exp (missing keys keep `base`'s values)."""
    kind = arg_parser.parse_string("timer_type", "uniform") or "uniform"
    if kind not in TIMER_TYPES:
        raise ValueError(f"--timer_type {kind!r} is not one of {', '.join(TIMER_TYPES)}")
    return TimerParams(kind=kind, time_min=arg_parser.parse_float(f"{prefix}_min", base.time_min, at_least=0.0),
                       time_max=arg_parser.parse_float(f"{prefix}_max", base.time_max, at_least=0.0),
                       time_exp=arg_parser.parse_float(f"{prefix}_exp", base.time_exp, at_least=0.0))


class Scene(Env):
    """The world part of the Env API (env/env.py) for every scene; scenes with agents derive from
    RLScene (env/scenes/rl_scene.py). Args read here: num_update_substeps (default 1: updates per
    FRAME_TIME, each of update_timestep = FRAME_TIME / num_update_substeps) and the episode timer's."""

    name = "scene"

    def __init__(self, arg_parser, rng):
        self.args = arg_parser
        self.rng = rng
        self.num_update_substeps = arg_parser.parse_int("num_update_substeps", 1)
        if self.num_update_substeps < 1:
            raise ValueError(f"--num_update_substeps must be >= 1, got {self.num_update_substeps}")
        self.update_timestep = FRAME_TIME / self.num_update_substeps
        self.timer_params = parse_timer_params(arg_parser, "time_lim")
        self.timer = Timer(self.timer_params)

    def reset(self):
        self.timer.reset(self.rng)

    def update(self, timestep):
        self.timer.update(timestep)

    def get_time(self):
        return self.timer.time

    def get_num_update_substeps(self):
        return self.num_update_substeps

    def is_episode_end(self):
        return self.timer.is_end()

    # ---- viewer hooks ----
    def draw_characters(self):
        return []

    def camera_focus(self):
        return np.zeros(3)

    def draw_projectiles(self):
        return []

    def draw_task_objects(self):
        """(solids as (shape, size, pos, rot, colour), lines as (points, colour)) that show the
        task (dribble_amp: the ball, the target flag and its circle)."""
        return [], []

    def hud_lines(self):
        """Text lines the scene adds to the viewer's HUD (heading_amp: its target)."""
        return []

    def apply_force(self, body_id, force, world_pos):
        pass

    def throw_projectile(self, big=False):
        pass

    def steer_target(self, turn, speed_change):
        """Turns the task's target heading by `turn` rad (positive: left, about +y) and changes its
        speed by `speed_change` (m/s); scenes without such a target ignore it."""
