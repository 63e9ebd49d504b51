"""Scene `target_amp` (DeepMimic's cSceneTargetAMP): reach a target on the ground, AMP style.

Target: drawn at reset and whenever the target timer ends (uniform in [rand_target_time_min,
rand_target_time_max] s, defaults 1 and 5), at a distance uniform in [0, max_target_dist]
(default 3) and a direction uniform in [0, 2 pi) around the simulated root, on the ground.
Goal (3): the horizontal direction from the root to the target in the heading frame (x, z) and
the horizontal distance; the direction is (1, 0) when the target is within 1e-4.
Task reward (0 after a fall or when the root is farther than tar_fail_dist from the target):
    0.6 exp(-pos_reward_scale d^2) + 0.4 r_vel,   d = horizontal root-target distance
    r_vel = 1 within target_succ_dist (default 0.5) of the target, else 0 if v < 0, else
            exp(-(4 / v*^2) e^2) with e = v* - v (e = max(e, 0) with enable_min_tar_vel),
v* = tar_speed (default 1), v = the centre-of-mass displacement toward the target over the last
control step (since the last action) divided by its duration less one update (DeepMimic's timing,
see _record_action_start). pos_reward_scale defaults to 1.
Termination: falls, and the root farther than tar_fail_dist (default inf) from the target
(Fail). No test-time warping: test returns are task returns.
"""
import math

import numpy as np

from env.amp_obs import heading_inverse_matrix
from env.env import Mode, Terminate
from env.scenes.imitate_amp import ImitateAMPScene
from env.scenes.scene import Timer, TimerParams

POS_REWARD_W = 0.6
VEL_REWARD_W = 0.4
MIN_DIST = 1e-4
MARKER_SIZE = np.array([0.2, 0.2, 0.2])


class TargetAMPScene(ImitateAMPScene):
    name = "target_amp"
    # DeepMimic's cSceneTargetAMP parses, initialises and resets through cSceneImitate, skipping
    # cSceneImitateAMP, so its task scenes never read enable_amp_obs_local_root (AMP observations
    # keep the global root rotation and velocity, whatever the args say) nor enable_test_time_warp
    # (test returns are task returns). Kept: policies trained there expect those observations.
    reads_amp_obs_args = False
    TIMER_DEFAULTS = (1.0, 5.0)

    def __init__(self, arg_parser, rng):
        super().__init__(arg_parser, rng)
        args = arg_parser
        time_min = args.parse_float("rand_target_time_min", self.TIMER_DEFAULTS[0])
        time_max = args.parse_float("rand_target_time_max", self.TIMER_DEFAULTS[1])
        if not 0 < time_min <= time_max:
            raise ValueError(f"--rand_target_time_min {time_min} and --rand_target_time_max {time_max} "
                             "must satisfy 0 < min <= max")
        self.target_timer = Timer(TimerParams(kind="uniform", time_min=time_min, time_max=time_max))
        self.max_target_dist = args.parse_float("max_target_dist", 3.0)
        self.target_succ_dist = args.parse_float("target_succ_dist", 0.5)
        self.tar_fail_dist = args.parse_float("tar_fail_dist", math.inf)
        self.tar_speed = args.parse_float("tar_speed", 1.0)
        if self.tar_speed <= 0:
            raise ValueError(f"--tar_speed must be > 0, got {self.tar_speed}")
        self.enable_min_tar_vel = args.parse_bool("enable_min_tar_vel", False)
        self.pos_reward_scale = args.parse_float("pos_reward_scale", 1.0)
        self.target_pos = np.zeros(3)
        self.prev_action_time = 0.0
        self.prev_action_com = np.zeros(3)


    def enable_amp_task_reward(self):
        return True

    # ---- episode flow ------------------------------------------------------------------

    def reset(self):
        super().reset()
        self.target_timer.reset(self.rng)
        self.reset_target()
        self._record_action_start()

    def reset_target(self):
        self.target_pos = self.sample_target_pos()

    def sample_target_pos(self):
        root = self.sim_char.get_root_pos()
        dist = self.rng.uniform(0.0, self.max_target_dist)
        theta = self.rng.uniform(0.0, 2 * np.pi)
        return np.array([root[0] + dist * np.cos(theta), 0.0, root[2] + dist * np.sin(theta)])

    def _post_physics(self, timestep):
        super()._post_physics(timestep)
        self.update_target(timestep)
        if self.target_timer.is_end():
            self.target_timer.reset(self.rng)

    def update_target(self, timestep):
        self.target_timer.update(timestep)
        if self.target_timer.is_end():
            self.target_pos = self.sample_target_pos()

    def set_action(self, agent_id, action):
        self._record_action_start()
        super().set_action(agent_id, action)

    def _record_action_start(self):
        """Centre of mass when the current action started, and that time as DeepMimic stamps it:
        its controller records the time one update (1/600 s) after the decision while taking the
        centre of mass at the decision, so its mean velocity over a control step is the
        displacement over 1/30 s divided by 19/600 s (x 20/19). Kept: the task args' speeds were
        tuned with it."""
        self.prev_action_time = self.ctrl.time + self.update_timestep
        self.prev_action_com = self.calc_com()

    def calc_com(self):
        return self.sim_char.masses @ self.sim_body_states().pos / self.sim_char.total_mass

    def _com_step_velocity(self):
        """(centre of mass now, its mean velocity since the action started)."""
        com = self.calc_com()
        step = self.ctrl.time - self.prev_action_time
        return com, (com - self.prev_action_com) / step if step > 0 else np.zeros(3)

    # ---- goal --------------------------------------------------------------------------------

    def goal_names(self, agent_id=0):
        return ["target_dir_x", "target_dir_z", "target_dist"]

    def record_goal(self, agent_id=0):
        pose, _ = self.sim_pose_vel()
        delta = self.target_pos - pose[0:3]
        delta[1] = 0.0
        dist = np.linalg.norm(delta)
        direction = heading_inverse_matrix(pose[3:7]) @ delta / dist if dist > MIN_DIST else np.array([1.0, 0, 0])
        return np.array([direction[0], direction[2], dist])

    # ---- termination and reward ----------------------------------------------------------

    def check_tar_dist_fail(self):
        delta = self.sim_char.get_root_pos() - self.target_pos
        return delta[0] ** 2 + delta[2] ** 2 > self.tar_fail_dist ** 2

    def check_terminate(self, agent_id=0):
        terminate = super().check_terminate(agent_id)
        if terminate == Terminate.Null and self.check_tar_dist_fail():
            terminate = Terminate.Fail
        return terminate

    def calc_reward(self, agent_id=0):
        if self.check_tar_dist_fail() or self.has_fallen():
            return 0.0
        root = self.sim_char.get_root_pos()
        root_dist_sq = (self.target_pos[0] - root[0]) ** 2 + (self.target_pos[2] - root[2]) ** 2
        pos_reward = np.exp(-self.pos_reward_scale * root_dist_sq)
        if root_dist_sq < self.target_succ_dist ** 2:
            vel_reward = 1.0
        else:
            com, com_vel = self._com_step_velocity()
            to_target = self.target_pos - com
            to_target[1] = 0.0
            norm = np.linalg.norm(to_target)
            speed = float(to_target @ com_vel / norm) if norm > MIN_DIST else 0.0
            vel_reward = self.speed_reward(speed, 4.0 / self.tar_speed ** 2)
        return float(POS_REWARD_W * pos_reward + VEL_REWARD_W * vel_reward)

    def speed_reward(self, speed, err_scale):
        """0 when moving away (speed < 0); else exp(-err_scale (v* - v)^2), overshooting not
        penalised with enable_min_tar_vel."""
        if speed < 0:
            return 0.0
        err = self.tar_speed - speed
        if self.enable_min_tar_vel:
            err = max(err, 0.0)
        return float(np.exp(-err_scale * err * err))

    # ---- viewer hooks ------------------------------------------------------------------------

    def draw_projectiles(self):
        """The target as a small box on the ground (drawn with the projectiles)."""
        marker = self.target_pos + [0.0, 0.5 * MARKER_SIZE[1], 0.0]
        return super().draw_projectiles() + [(MARKER_SIZE, marker, np.array([1.0, 0, 0, 0]))]


class SuccessTimeTestReward:
    """Mixin of the task scenes whose test reward is the episode time left at a successful end
    (0 otherwise: DeepMimic's strike_amp and dribble_amp); training uses calc_reward_train."""

    def calc_reward(self, agent_id=0):
        return self.calc_reward_test() if self.mode == Mode.TEST else self.calc_reward_train()

    def calc_reward_test(self):
        if self.is_episode_end() and self.check_terminate() == Terminate.Succ:
            return float(self.timer.max_time - self.timer.time)
        return 0.0
