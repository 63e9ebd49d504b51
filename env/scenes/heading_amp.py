"""Scene `heading_amp` (DeepMimic's cSceneHeadingAMP): move along a target heading at a target speed.

Target: heading 0 and a speed uniform in [tar_speed_min, tar_speed_max] (both default to
tar_speed) at reset. Each time the target timer ends (uniform in [rand_target_time_min,
rand_target_time_max] s, defaults 0.2 and 0.5): with probability sharp_turn_prob (0.025) the
heading turns by a uniform angle in [-pi, pi], else by a Gaussian angle of std
max_heading_turn_rate (0.15); with probability speed_change_prob (0.1) a new speed is drawn.
Goal (3): cos(dh), -sin(dh) with dh = target heading - the character's heading, and the speed.
Task reward (0 after a fall): with v the centre of mass's mean horizontal velocity over the last
control step projected on the target direction (cos h, 0, -sin h):
    0 if v <= 0, else exp(-vel_reward_scale e^2),  e = v* - v  (max(e, 0) with enable_min_tar_vel)
vel_reward_scale defaults to 1. No target distance failure.
Manual target (the viewer's arrow keys, not DeepMimic's): set_target(heading, speed) fixes the target
(speed clamped to [tar_speed_min, tar_speed_max]); from then on neither the timer nor a reset draws
a new one. Training and headless evaluation never call it, so their targets stay random.
"""
import math

import numpy as np

from env.scenes.target_amp import TargetAMPScene
from util import math_util

ARROW_STEP = 0.25      # spacing of the heading arrow's markers, per unit of target speed
ARROW_MARKERS = 4
ARROW_MARKER_SIZE = np.array([0.08, 0.08, 0.08])


class HeadingAMPScene(TargetAMPScene):
    name = "heading_amp"
    TIMER_DEFAULTS = (0.2, 0.5)

    def __init__(self, arg_parser, rng):
        super().__init__(arg_parser, rng)
        args = arg_parser
        self.max_heading_turn_rate = args.parse_float("max_heading_turn_rate", 0.15)
        self.sharp_turn_prob = args.parse_float("sharp_turn_prob", 0.025)
        self.speed_change_prob = args.parse_float("speed_change_prob", 0.1)
        self.tar_speed_min = args.parse_float("tar_speed_min", self.tar_speed)
        self.tar_speed_max = args.parse_float("tar_speed_max", self.tar_speed)
        if not 0 < self.tar_speed_min <= self.tar_speed_max:
            raise ValueError(f"--tar_speed_min {self.tar_speed_min} and --tar_speed_max "
                             f"{self.tar_speed_max} must satisfy 0 < min <= max")
        self.vel_reward_scale = args.parse_float("vel_reward_scale", 1.0)
        self.tar_heading = 0.0
        self.manual_target = False     # set_target was called: no random target changes

    def reset_target(self):
        super().reset_target()
        if self.manual_target:
            return
        self.tar_heading = 0.0
        self.tar_speed = self.rng.uniform(self.tar_speed_min, self.tar_speed_max)

    def update_target(self, timestep):
        super().update_target(timestep)
        if self.target_timer.is_end() and not self.manual_target:
            if self.rng.random() < self.sharp_turn_prob:
                self.tar_heading += self.rng.uniform(-np.pi, np.pi)
            else:
                self.tar_heading += self.rng.normal(0.0, self.max_heading_turn_rate)
            if self.rng.random() < self.speed_change_prob:
                self.tar_speed = self.rng.uniform(self.tar_speed_min, self.tar_speed_max)

    def set_target(self, heading, speed):
        """Fixes the target heading (rad, about y from world +x) and speed (clamped to the scene's
        range) and stops the random target changes, resets included."""
        self.tar_heading = float(heading)
        self.tar_speed = float(np.clip(speed, self.tar_speed_min, self.tar_speed_max))
        self.manual_target = True

    def target_dir(self):
        return np.array([np.cos(self.tar_heading), 0.0, -np.sin(self.tar_heading)])

    def goal_names(self, agent_id=0):
        """(cos, -sin) of the target heading minus the root's: the target direction's x, z in the
        heading frame."""
        return ["target_dir_x", "target_dir_z", "target_speed"]

    def record_goal(self, agent_id=0):
        heading = float(math_util.quat_heading(self.sim_pose_vel()[0][3:7]))
        delta = self.tar_heading - heading
        return np.array([np.cos(delta), -np.sin(delta), self.tar_speed])

    def check_tar_dist_fail(self):
        return False

    def calc_reward(self, agent_id=0):
        if self.has_fallen():
            return 0.0
        _, com_vel = self._com_step_velocity()
        com_vel[1] = 0.0
        speed = float(self.target_dir() @ com_vel)
        return self.speed_reward(speed, self.vel_reward_scale) if speed > 0 else 0.0

    # ---- viewer hooks ------------------------------------------------------------------------

    def steer_target(self, turn, speed_change):
        """The viewer's arrow keys: the target heading turned by `turn` rad (positive: left) and the
        speed changed by `speed_change`; the target is the user's from then on (set_target)."""
        self.set_target(self.tar_heading + turn, self.tar_speed + speed_change)

    def hud_lines(self):
        heading = math.degrees(math.remainder(self.tar_heading, 2 * math.pi))
        source = "arrow keys" if self.manual_target else "random"
        return [f"Target heading: {heading:.0f} deg ({source})", f"Target speed: {self.tar_speed:.1f} m/s"]

    def draw_projectiles(self):
        """A row of small boxes from the root along the target heading, longer when faster."""
        root = self.sim_char.get_root_pos()
        step = ARROW_STEP * self.tar_speed * self.target_dir()
        markers = [(ARROW_MARKER_SIZE, root + (k + 1) * step, np.array([1.0, 0, 0, 0]))
                   for k in range(ARROW_MARKERS)]
        return super(TargetAMPScene, self).draw_projectiles() + markers
