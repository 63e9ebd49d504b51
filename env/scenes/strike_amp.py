"""Scene `strike_amp` (DeepMimic's cSceneStrikeAMP): strike a target point with a body, AMP style.

The target is a point in the air (no physics body) with a latched hit flag and the time of the hit.
Placement, at reset only (never in the episode: the target timer runs but re-places nothing):
with probability tar_far_prob "far", else "near"; components of target_min/max are
(angle rad, height m, distance m):
    far:   a ~ U(-pi, pi),                    d ~ U(target_min[2], max_target_dist)
    near:  a ~ U(target_min[0], target_max[0]), d ~ U(target_min[2], target_max[2])
    target = root + (d cos a, h, -d sin a),   h ~ U(target_min[1], target_max[1]) + ground height
The angle is measured from world +x, not from the character's heading (DeepMimic's; kept).
In training mode with probability init_hit_prob the episode starts already hit, the hit time drawn
U(t - T, t) (t = 0 at reset, so it is negative), T = target_hit_reset_time.
Hit test (every scene update until hit; the flag then stays set): a strike body's centre of mass is
within target_radius of the target (3D) and its velocity along u = unit horizontal root->target is
>= hit_tar_speed (any speed when hit_tar_speed is 0); the hit time is the scene time of that update.
Goal (4, norm group None: never normalised): the target in the root's heading frame with y above the
ground, then the hit phase clamp((t - t_hit) / T, 0, 1), 0 before a hit.
Task reward (training), d = horizontal root-target distance:
    hit:                 1
    d < tar_near_dist:   0.3 + 0.3 max over strike bodies of
                         0.2 exp(-tar_reward_scale |target - p_b|^2) + 0.8 clamp(u.v_b / hit_tar_speed, 0, 1)^2
    else:                0.3 (0.7 exp(-pos_reward_scale max(d - tar_near_dist, 0)^2) + 0.3 r_v),  0 if fallen
with r_v TargetAMP's speed reward on the centre of mass toward the target (its timing and
enable_min_tar_vel). Kept as DeepMimic has them: the hit and near rewards ignore a fall; the far
reward's r_v = 1 branch for d < tar_near_dist cannot be reached from the far case (left out).
Test reward: 0, except at a successful end: the episode's time limit minus the time.
Termination: a fall, the root farther than tar_fail_dist from the target, or a body of
fail_tar_contact_bodies with its centre within target_radius of the target -> Fail; hit and
t - t_hit >= T -> Succ. The success reward (DeepMimic's GetRewardSucc 0.3 + 0.3 + 0.4) equals the
maximum reward 1, the default of Env.get_reward_succ.
Changed from DeepMimic where it would crash or divide by zero: strike_bodies must name a body (its
hit test asserts it; an empty list is a ValueError here), and with hit_tar_speed 0 the near
reward's speed term is 1 for any speed toward the target (DeepMimic divides by 0).
The viewer's ground click (target moved there) and strike-body traces are not ported.
"""
import numpy as np

from env.amp_obs import heading_inverse_matrix
from env.env import Mode, NormGroup, Terminate
from env.scenes.scene import ground_circle
from env.scenes.target_amp import MIN_DIST, SuccessTimeTestReward, TargetAMPScene
from util import math_util

FAR_W, NEAR_W, HIT_W = 0.3, 0.3, 0.4
NEAR_DIST_W, NEAR_VEL_W = 0.2, 0.8
FAR_POS_W, FAR_VEL_W = 0.7, 0.3
MIN_ROOT_DIST = 1e-5            # the hit test's and near reward's root->target direction guard
INVALID_HIT_TIME = -1.0

TARGET_COLORS = {False: np.array([1.0, 0.0, 0.0, 0.5]), True: np.array([0.0, 0.75, 0.0, 0.5])}
CIRCLE_LIFT = 0.1               # DeepMimic draws the near circle 0.1 m above the ground
CIRCLE_WIDTHS = (0.0, 0.01, 0.02)


class StrikeAMPScene(SuccessTimeTestReward, TargetAMPScene):
    name = "strike_amp"

    def __init__(self, arg_parser, rng):
        super().__init__(arg_parser, rng)
        args = arg_parser
        self.target_min = _parse_vec3(args, "target_min", (-0.5, 1.2, 0.6))
        self.target_max = _parse_vec3(args, "target_max", (0.5, 1.4, 1.1))
        if np.any(self.target_min > self.target_max):
            raise ValueError(f"--target_min {self.target_min.tolist()} and --target_max {self.target_max.tolist()} "
                             "must satisfy min <= max in every component")
        self.target_radius = args.parse_float("target_radius", 0.2)
        self.target_hit_reset_time = args.parse_float("target_hit_reset_time", 2.0)
        self.tar_reward_scale = args.parse_float("tar_reward_scale", 2.0)
        self.hit_tar_speed = args.parse_float("hit_tar_speed", 1.5)
        self.init_hit_prob = args.parse_float("init_hit_prob", 0.0)
        self.tar_far_prob = args.parse_float("tar_far_prob", 0.4)
        self.tar_near_dist = args.parse_float("tar_near_dist", 1.4)
        for key in ("target_radius", "target_hit_reset_time"):
            if getattr(self, key) <= 0:
                raise ValueError(f"--{key} must be > 0, got {getattr(self, key)}")
        if self.hit_tar_speed < 0:
            raise ValueError(f"--hit_tar_speed must be >= 0, got {self.hit_tar_speed}")
        for key in ("init_hit_prob", "tar_far_prob"):
            if not 0 <= getattr(self, key) <= 1:
                raise ValueError(f"--{key} must lie in [0, 1], got {getattr(self, key)}")
        self.strike_bodies = self._parse_body_ids(args, "strike_bodies")
        if not self.strike_bodies:
            raise ValueError("--strike_bodies must name at least one body (DeepMimic asserts it in its hit test)")
        self.fail_tar_contact_bodies = self._parse_body_ids(args, "fail_tar_contact_bodies")
        self.target_pos = np.zeros(3)
        self.target_hit = False
        self.target_hit_time = INVALID_HIT_TIME

    def _parse_body_ids(self, args, key):
        ids = list(args.parse_ints(key, ()))
        for b in ids:
            if not 0 <= b < self.sim_char.num_bodies:
                raise ValueError(f"--{key}: body id {b} is not in [0, {self.sim_char.num_bodies - 1}]")
        return ids

    # ---- target placement and the hit flag ---------------------------------------------

    def reset_target(self):
        """Position (which clears the hit), then in training mode the initial hit draw."""
        self.target_pos = self.sample_target_pos()
        self.set_target_hit(False)
        if self.mode == Mode.TRAIN and self.init_hit_prob > 0.0:
            self.set_target_hit(bool(self.rng.uniform() < self.init_hit_prob))
        if self.target_hit:
            time = self.get_time()
            self.target_hit_time = self.rng.uniform(time - self.target_hit_reset_time, time)
        else:
            self.target_hit_time = INVALID_HIT_TIME

    def sample_target_pos(self):
        far = self.rng.uniform() < self.tar_far_prob
        lo, hi = self.target_min, self.target_max
        theta = self.rng.uniform(-np.pi, np.pi) if far else self.rng.uniform(lo[0], hi[0])
        height = self.rng.uniform(lo[1], hi[1])
        dist = self.rng.uniform(lo[2], self.max_target_dist if far else hi[2])
        root = self.sim_char.get_root_pos()
        return np.array([root[0] + dist * np.cos(theta), height + self.world.ground_height,
                         root[2] - dist * np.sin(theta)])

    def set_target_hit(self, hit):
        """DeepMimic's SetTargetHit: a new hit stamps the current time."""
        if hit and not self.target_hit:
            self.target_hit_time = self.get_time()
        self.target_hit = hit

    def update_target(self, timestep):
        """The target timer runs (DeepMimic's) but never re-places the target; the hit latches."""
        self.target_timer.update(timestep)
        if not self.target_hit:
            self.set_target_hit(self.check_target_hit())

    def _root_target_dir(self):
        """Unit horizontal root->target direction, zero within 1e-5."""
        delta = self.target_pos - self.sim_char.get_root_pos()
        delta[1] = 0.0
        norm = np.linalg.norm(delta)
        return delta / norm if norm > MIN_ROOT_DIST else np.zeros(3)

    def check_target_hit(self):
        bodies = self.sim_body_states()
        direction = self._root_target_dir()
        for b in self.strike_bodies:
            delta = self.target_pos - bodies.pos[b]
            if delta @ delta < self.target_radius ** 2:
                if self.hit_tar_speed == 0.0 or direction @ bodies.vel[b] >= self.hit_tar_speed:
                    return True
        return False

    def calc_hit_phase(self):
        if not self.target_hit:
            return 0.0
        return float(np.clip((self.get_time() - self.target_hit_time) / self.target_hit_reset_time, 0.0, 1.0))

    # ---- goal --------------------------------------------------------------------------

    def goal_names(self, agent_id=0):
        return ["target_pos_x", "target_pos_y", "target_pos_z", "hit_phase"]

    def build_goal_norm_groups(self, agent_id=0):
        return np.full(self.get_goal_size(agent_id), int(NormGroup.None_), dtype=np.int32)

    def record_goal(self, agent_id=0):
        pose, _ = self.sim_pose_vel()
        delta = self.target_pos - [pose[0], self.world.ground_height, pose[2]]
        return np.append(heading_inverse_matrix(pose[3:7]) @ delta, self.calc_hit_phase())

    # ---- termination ---------------------------------------------------------------------

    def check_tar_contact_fail(self):
        bodies = self.sim_body_states()
        return any(np.sum((self.target_pos - bodies.pos[b]) ** 2) < self.target_radius ** 2
                   for b in self.fail_tar_contact_bodies)

    def check_tar_hit_succ(self):
        return self.target_hit and self.get_time() - self.target_hit_time >= self.target_hit_reset_time

    def check_terminate(self, agent_id=0):
        terminate = super().check_terminate(agent_id)
        if terminate == Terminate.Null and self.check_tar_contact_fail():
            terminate = Terminate.Fail
        if terminate == Terminate.Null and self.check_tar_hit_succ():
            terminate = Terminate.Succ
        return terminate

    # ---- reward ------------------------------------------------------------------------

    def calc_reward_train(self):
        if self.target_hit:
            return FAR_W + NEAR_W + HIT_W
        root = self.sim_char.get_root_pos()
        dist_sq = (self.target_pos[0] - root[0]) ** 2 + (self.target_pos[2] - root[2]) ** 2
        if dist_sq < self.tar_near_dist ** 2:
            return FAR_W + NEAR_W * self.calc_reward_target_near()
        return FAR_W * self.calc_reward_target_far()

    def calc_reward_target_near(self):
        """Best strike body: closeness to the target and speed along root->target, capped at
        hit_tar_speed (a zero hit_tar_speed counts any positive speed as full)."""
        bodies = self.sim_body_states()
        direction = self._root_target_dir()
        reward = 0.0
        for b in self.strike_bodies:
            delta = self.target_pos - bodies.pos[b]
            speed = float(direction @ bodies.vel[b])
            ratio = speed / self.hit_tar_speed if self.hit_tar_speed > 0 else float(speed > 0)
            vel_reward = min(max(ratio, 0.0), 1.0) ** 2
            reward = max(reward, NEAR_DIST_W * np.exp(-self.tar_reward_scale * (delta @ delta)) + NEAR_VEL_W * vel_reward)
        return float(reward)

    def calc_reward_target_far(self):
        if self.has_fallen():
            return 0.0
        root = self.sim_char.get_root_pos()
        dist = float(np.hypot(self.target_pos[0] - root[0], self.target_pos[2] - root[2]))
        pos_err = max(dist - self.tar_near_dist, 0.0)
        pos_reward = np.exp(-self.pos_reward_scale * pos_err * pos_err)
        com, com_vel = self._com_step_velocity()
        to_target = self.target_pos - com
        to_target[1] = 0.0
        norm = np.linalg.norm(to_target)
        speed = float(to_target @ com_vel / norm) if norm > MIN_DIST else 0.0
        vel_reward = self.speed_reward(speed, 4.0 / self.tar_speed ** 2)
        return float(FAR_POS_W * pos_reward + FAR_VEL_W * vel_reward)

    # ---- viewer hooks ------------------------------------------------------------------------

    def draw_projectiles(self):
        return super(TargetAMPScene, self).draw_projectiles()

    def draw_task_objects(self):
        """The target as a sphere of target_radius, red before the hit and green after, and a
        ground circle of radius tar_near_dist around it in the same colour (DeepMimic's)."""
        color = TARGET_COLORS[bool(self.target_hit)]
        target = self.target_pos
        solids = [("sphere", np.full(3, 2 * self.target_radius), target, math_util.quat_identity(), color)]
        lines = [(ground_circle(target[0], target[2], self.tar_near_dist - w, self.world.ground_height + CIRCLE_LIFT),
                  color) for w in CIRCLE_WIDTHS]
        return solids, lines


def _parse_vec3(args, key, default):
    values = args.parse_floats(key, default)
    if len(values) != 3:
        raise ValueError(f"--{key} needs 3 values (angle, height, distance), got {list(values)}")
    return np.asarray(values, dtype=float)
