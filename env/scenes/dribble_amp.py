"""Scene `dribble_amp` (DeepMimic's cSceneDribbleAMP): dribble a ball to a target, AMP style.

The ball (env/sim/ball.py, radius ball_radius, default 0.2) rests on the ground when placed, with a
random rotation (axis normalised from U(-1, 1)^3, angle U(-pi, pi)) and zero velocity.
Placement, all on the ground, angles a ~ U(-pi, pi):
    ball   = root + r (cos a, 0, sin a),  r ~ U(min_tar_obj_dist, max_tar_obj_dist)  (0.5, 10)
    target = ball + r (cos a, 0, sin a),  r ~ U(ball_radius, max_target_dist)        (max 3)
Reset order (DeepMimic's): ball timer reset, ball placed around the root as it is BEFORE the reset
(where the last episode ended; the first episode: the initial pose), then the character resets
(root to x = z = 0), then the target around the ball. Kept as is (probable bug): after an episode that
ended far from the origin the ball starts more than 2 max_tar_obj_dist from the character, and
that episode fails at once (see "fallen"). Also kept: a target can be drawn inside the success circle (r from
ball_radius < target_succ_dist), and the episode then succeeds at its first update.
In the episode: target timer end (rand_target_time_min/max, 50 and 100 s here) -> new target
around the ball; ball timer end (rand_tar_obj_time_min/max, 100 and 200 s) -> ball re-placed
around the root.
Goal (3): w = horizontal target - ball; (x, z of w / |w| in the heading frame, |w|); ((1, 0), |w|)
when |w| <= 1e-4. Default norm groups (running normalisation).
State: the controller's state followed by 15 ball features, offset 0, scale 1, running
normalisation: position in the heading frame (y above the ground), rotation (heading^-1 * q)
as q(0, 1, 0) and q(1, 0, 0), linear and angular velocity in the heading frame.
Task reward (training), 0 when "fallen"; c0, b0 = centre of mass and ball at the last action, dt =
the controller time since then (TargetAMP's timing: one update short), all horizontal except e4:
    0.1 exp(-1.5 e1) + 0.1 exp(-0.5 e2) + 0.3 exp(-e3) + 0.5 exp(-0.5 e4)
    e1 = min(0, unit(ball - c0).(com - c0)/dt - tar_speed)^2,  e2 = |ball - c0|^2,
    e3 = min(0, unit(target - b0).(ball - b0)/dt - tar_speed)^2,  e4 = |target - ball| (3D: the
    ball centre is ball_radius above the target),
and 1 when the 3D ball-target distance < target_succ_dist and |ball - c0| < 2.
Test reward: 0, except at a successful end: the episode's time limit minus the time.
"Fallen" (reward 0, Fail when enable_fall_end): a fall contact, horizontal ball-target distance >
2 max_target_dist, or root-ball > 2 max_tar_obj_dist. Success: horizontal ball-target distance <
target_succ_dist (the reward's test is 3D, so success can end an episode without the bonus).
"""
import numpy as np

from env.amp_obs import heading_inverse_matrix
from env.env import Terminate
from env.scenes.scene import Timer, TimerParams, ground_circle
from env.scenes.target_amp import MIN_DIST, SuccessTimeTestReward, TargetAMPScene
from env.sim.ball import Ball
from env.sim.ct_state import TaskStateLayout
from util import math_util

REWARD_WEIGHTS = (0.1, 0.1, 0.3, 0.5)       # com->ball speed, com-ball distance, ball speed, ball-target
REWARD_SCALES = (1.5, 0.5, 1.0, 0.5)
COM_BALL_SUCC_DIST = 2.0
BALL_STATE_NAMES = tuple(f"ball/{v}_{c}" for v in ("pos", "normal", "tangent", "vel", "ang_vel") for c in "xyz")

FLAG_POLE = np.array([0.03, 1.5, 0.03])
FLAG_CLOTH = np.array([0.4, 0.25, 0.02])
BALL_COLORS = (np.array([0.95, 0.95, 0.95, 1.0]), np.array([0.15, 0.2, 0.6, 1.0]))
FLAG_COLOR = np.array([0.9, 0.15, 0.1, 1.0])
CIRCLE_COLORS = {False: np.array([0.9, 0.15, 0.1, 1.0]), True: np.array([0.1, 0.8, 0.2, 1.0])}
CIRCLE_LIFT = 0.01
CIRCLE_WIDTHS = (0.0, 0.01, 0.02)     # concentric rings, so the 1-pixel line reads as a band


class DribbleAMPScene(SuccessTimeTestReward, TargetAMPScene):
    name = "dribble_amp"
    TIMER_DEFAULTS = (50.0, 100.0)

    def __init__(self, arg_parser, rng):
        super().__init__(arg_parser, rng)
        args = arg_parser
        time_min = args.parse_float("rand_tar_obj_time_min", 100.0)
        time_max = args.parse_float("rand_tar_obj_time_max", 200.0)
        if not 0 < time_min <= time_max:
            raise ValueError(f"--rand_tar_obj_time_min {time_min} and --rand_tar_obj_time_max {time_max} "
                             "must satisfy 0 < min <= max")
        self.tar_obj_timer = Timer(TimerParams(kind="uniform", time_min=time_min, time_max=time_max))
        self.min_tar_obj_dist = args.parse_float("min_tar_obj_dist", 0.5)
        self.max_tar_obj_dist = args.parse_float("max_tar_obj_dist", 10.0)
        if not 0 <= self.min_tar_obj_dist <= self.max_tar_obj_dist:
            raise ValueError(f"--min_tar_obj_dist {self.min_tar_obj_dist} and --max_tar_obj_dist "
                             f"{self.max_tar_obj_dist} must satisfy 0 <= min <= max")
        self.ball = Ball(self.world, args.parse_float("ball_radius", 0.2))
        self.state_layout = TaskStateLayout(self.ctrl.state_layout, BALL_STATE_NAMES)
        self.prev_action_ball = np.zeros(3)
        self.reset_ball()

    # ---- episode flow ------------------------------------------------------------------

    def reset(self):
        """Ball first, around the pre-reset root (DeepMimic's order, see the module docstring)."""
        self.tar_obj_timer.reset(self.rng)
        self.reset_ball()
        super().reset()

    def reset_ball(self):
        root = self.sim_char.get_root_pos()
        dist = self.rng.uniform(self.min_tar_obj_dist, self.max_tar_obj_dist)
        theta = self.rng.uniform(-np.pi, np.pi)
        self.set_ball_pos(np.array([root[0] + dist * np.cos(theta), 0.0, root[2] + dist * np.sin(theta)]))

    def set_ball_pos(self, pos):
        """The ball at rest on the ground under `pos` with a random rotation."""
        axis = self.rng.uniform(-1.0, 1.0, 3)
        angle = self.rng.uniform(-np.pi, np.pi)
        rot = math_util.quat_from_axis_angle(axis / np.linalg.norm(axis), angle)
        ground_pos = np.array([pos[0], self.ball.radius + self.world.ground_height, pos[2]])
        self.ball.place(ground_pos, rot)
        self.prev_action_ball = self.ball.get_pos()
        self._touch()

    def sample_target_pos(self):
        ball = self.ball.get_pos()
        dist = self.rng.uniform(self.ball.radius, self.max_target_dist)
        theta = self.rng.uniform(-np.pi, np.pi)
        return np.array([ball[0] + dist * np.cos(theta), 0.0, ball[2] + dist * np.sin(theta)])

    def _post_physics(self, timestep):
        super()._post_physics(timestep)
        self.tar_obj_timer.update(timestep)
        if self.tar_obj_timer.is_end():
            self.reset_ball()
            self.tar_obj_timer.reset(self.rng)

    def _record_action_start(self):
        super()._record_action_start()
        self.prev_action_ball = self.ball.get_pos()

    # ---- state and goal ------------------------------------------------------------------

    def calc_state(self):
        return self._cached("dribble_state", lambda: np.concatenate([super(DribbleAMPScene, self).calc_state(),
                                                                     self.record_ball_state()]))

    def record_ball_state(self):
        """The 15 ball features (module docstring), from the simulated root's heading frame."""
        root_pos, root_rot = self.sim_pose_vel()[0][0:3], self.sim_pose_vel()[0][3:7]
        to_heading = heading_inverse_matrix(root_rot)
        pos = self.ball.get_pos() - [root_pos[0], self.world.ground_height, root_pos[2]]
        heading_inv = math_util.quat_conj(math_util.quat_heading_rot(root_rot))
        rot = math_util.quat_mul(heading_inv, self.ball.get_rot())
        vel, ang_vel = self.ball.get_vel()
        return np.concatenate([to_heading @ pos, math_util.quat_to_norm_tangent(rot), to_heading @ vel,
                               to_heading @ ang_vel])

    def goal_names(self, agent_id=0):
        return ["ball_target_dir_x", "ball_target_dir_z", "ball_target_dist"]

    def record_goal(self, agent_id=0):
        root_rot = self.sim_pose_vel()[0][3:7]
        delta = self.target_pos - self.ball.get_pos()
        delta[1] = 0.0
        dist = np.linalg.norm(delta)
        direction = heading_inverse_matrix(root_rot) @ delta / dist if dist > MIN_DIST else np.array([1.0, 0, 0])
        return np.array([direction[0], direction[2], dist])

    # ---- termination and reward ----------------------------------------------------------

    def has_fallen(self):
        return super().has_fallen() or self.check_tar_obj_dist_fail() or self.check_char_obj_dist_fail()

    def check_tar_obj_dist_fail(self):
        return _horizontal_dist(self.target_pos, self.ball.get_pos()) > 2 * self.max_target_dist

    def check_char_obj_dist_fail(self):
        return _horizontal_dist(self.sim_char.get_root_pos(), self.ball.get_pos()) > 2 * self.max_tar_obj_dist

    def check_target_succ(self):
        return _horizontal_dist(self.target_pos, self.ball.get_pos()) < self.target_succ_dist

    def check_terminate(self, agent_id=0):
        terminate = super().check_terminate(agent_id)
        if terminate == Terminate.Null and self.check_target_succ():
            terminate = Terminate.Succ
        return terminate

    def calc_reward_train(self):
        if self.has_fallen():
            self.reward_terms = {}
            return 0.0
        com, ball, target = self.calc_com(), self.ball.get_pos(), self.target_pos
        step = self.ctrl.time - self.prev_action_time
        inv_step = 1.0 / step if step > 0 else 0.0      # no speed without elapsed time, as TargetAMP
        com_ball = _flat(ball - self.prev_action_com)
        com_ball_speed = _unit(com_ball) @ _flat(com - self.prev_action_com) * inv_step
        ball_speed = _unit(_flat(target - self.prev_action_ball)) @ _flat(ball - self.prev_action_ball) * inv_step
        errors = (min(0.0, com_ball_speed - self.tar_speed) ** 2, float(com_ball @ com_ball),
                  min(0.0, ball_speed - self.tar_speed) ** 2, float(np.linalg.norm(target - ball)))
        terms = [float(np.exp(-scale * err)) for scale, err in zip(REWARD_SCALES, errors)]
        if errors[3] < self.target_succ_dist and errors[1] < COM_BALL_SUCC_DIST ** 2:
            terms = [1.0] * 4
        self.reward_terms = dict(zip(("com_ball_vel", "com_ball_pos", "target_vel", "target_pos"), terms))
        return float(np.dot(REWARD_WEIGHTS, terms))

    # ---- viewer hooks ------------------------------------------------------------------------

    def draw_projectiles(self):
        return super(TargetAMPScene, self).draw_projectiles()

    def draw_task_objects(self):
        """(solids as (shape, size, pos, rot, colour), lines as (points, colour)): the ball as two
        hemispheres of different colours (its spin shows), the target flag and a ground circle of
        radius target_succ_dist, green while the ball is inside (the success test)."""
        ball_pos, ball_rot = self.ball.get_pos(), self.ball.get_rot()
        flip = math_util.quat_mul(ball_rot, np.array([0.0, 1.0, 0.0, 0.0]))   # half turn about x
        diameter = np.full(3, 2 * self.ball.radius)
        target = self.target_pos
        identity = math_util.quat_identity()
        solids = [("hemisphere", diameter, ball_pos, ball_rot, BALL_COLORS[0]),
                  ("hemisphere", diameter, ball_pos, flip, BALL_COLORS[1]),
                  ("box", FLAG_POLE, target + [0.0, 0.5 * FLAG_POLE[1], 0.0], identity, FLAG_COLOR),
                  ("box", FLAG_CLOTH, target + [0.5 * FLAG_CLOTH[0], FLAG_POLE[1] - 0.5 * FLAG_CLOTH[1], 0.0],
                   identity, FLAG_COLOR)]
        color = CIRCLE_COLORS[bool(self.check_target_succ())]
        lines = [(ground_circle(target[0], target[2], self.target_succ_dist - w,
                                self.world.ground_height + CIRCLE_LIFT), color) for w in CIRCLE_WIDTHS]
        return solids, lines


def _flat(v):
    return np.array([v[0], 0.0, v[2]])


def _unit(v):
    """v / |v|, zero for a zero vector (Eigen's normalized())."""
    norm = np.linalg.norm(v)
    return v / norm if norm > 0 else np.zeros(3)


def _horizontal_dist(a, b):
    return float(np.hypot(a[0] - b[0], a[2] - b[2]))
