"""goals_point: a small, fast pybullet scene for the goal hierarchy (AgentType Goals) and its tests.

A frictionless sphere (radius 0.1, mass 1) slides on a plane (y up) inside a square arena of
half-width --goals_point_arena (2). One agent; a decision every 1/30 s (the env updates every
1/60 / num_update_substeps s, one pybullet step each).
State (4): [x, z, vx, vz]. Action (2) in [-1, 1]^2: the horizontal force
    F = GOALS_POINT_FORCE a - GOALS_POINT_DAMPING v          (held over the decision's updates)
a velocity command in effect: the speed tends to 3 a m/s with a time constant of 0.05 s, so one
decision (1/30 s) moves the velocity about half way there and the transition (s_t, s_t+1) shows
the action. (With a 0.5 s time constant the action's trace in one transition was below the
state's scale: the inverse model never read the action, so no goal could be told apart.)
External reward in [0, 1]: max over the reward spots c_k (--goals_point_spots x z x z ...,
default three) of exp(-|p - c_k|^2 / (2 sigma^2)), sigma = --goals_point_spot_sigma (0.3).
Ends: leaving the arena is a Fail; the episode timer (time_lim_*) a Null end. Starts: uniform in
[-1, 1]^2 at rest, from the env's random generator. No env goal (the hierarchy sets its own).
"""
from types import SimpleNamespace

import numpy as np
import pybullet as p

from env.env import Mode, NormGroup, Terminate
from env.scenes.scene import Scene

CONTROL_DT = 1.0 / 30.0
GOALS_POINT_FORCE = 60.0
GOALS_POINT_DAMPING = 20.0
RADIUS = 0.1
DEFAULT_SPOTS = (1.2, 1.2, -1.2, 0.8, 0.0, -1.3)


class GoalsPointScene(Scene):
    name = "goals_point"

    def __init__(self, arg_parser, rng, update_timestep):
        super().__init__(arg_parser, rng, update_timestep)
        args = arg_parser
        self.arena = args.parse_float("goals_point_arena", 2.0)
        spots = np.asarray(args.parse_floats("goals_point_spots", DEFAULT_SPOTS), dtype=float)
        if spots.size == 0 or spots.size % 2:
            raise ValueError(f"--goals_point_spots needs x z pairs, got {spots.size} value(s)")
        self.spots = spots.reshape(-1, 2)
        self.sigma = args.parse_float("goals_point_spot_sigma", 0.3)
        if self.arena <= 0 or self.sigma <= 0:
            raise ValueError("--goals_point_arena and --goals_point_spot_sigma must be > 0")
        self.mode = Mode.TRAIN
        self.client = p.connect(p.DIRECT)
        cid = self.client
        p.setGravity(0, -9.8, 0, physicsClientId=cid)
        p.setTimeStep(update_timestep, physicsClientId=cid)
        self.timestep = update_timestep
        ground = p.createMultiBody(0, p.createCollisionShape(p.GEOM_PLANE, planeNormal=[0, 1, 0], physicsClientId=cid),
                                   physicsClientId=cid)
        self.ball = p.createMultiBody(1.0, p.createCollisionShape(p.GEOM_SPHERE, radius=RADIUS, physicsClientId=cid),
                                      basePosition=[0, RADIUS, 0], physicsClientId=cid)
        for body in (ground, self.ball):
            p.changeDynamics(body, -1, lateralFriction=0.0, rollingFriction=0.0, spinningFriction=0.0,
                             linearDamping=0.0, angularDamping=0.0, physicsClientId=cid)
        ones = np.ones(2)
        self.ctrl = SimpleNamespace(
            params=SimpleNamespace(layout="2021"),
            state_layout=SimpleNamespace(size=4, offset=np.zeros(4), scale=np.array([1, 1, 0.5, 0.5]) / self.arena,
                                         norm_groups=np.full(4, int(NormGroup.Zero), dtype=np.int32)),
            action_layout=SimpleNamespace(size=2, offset=np.zeros(2), scale=ones.copy(), bound_min=-ones,
                                          bound_max=ones.copy()))
        self.state_layout = self.ctrl.state_layout
        self.action_layout = self.ctrl.action_layout
        self.action = np.zeros(2)
        self.need_action = True
        self.reward_terms = {}

    # ---- episode flow ----
    def reset(self):
        super().reset()
        x, z = self.rng.uniform(-1.0, 1.0, 2)
        p.resetBasePositionAndOrientation(self.ball, [x, RADIUS, z], [0, 0, 0, 1], physicsClientId=self.client)
        p.resetBaseVelocity(self.ball, [0, 0, 0], [0, 0, 0], physicsClientId=self.client)
        self.pos = np.array([x, z])
        self.vel = np.zeros(2)
        self.action = np.zeros(2)
        self.need_action = True
        self._since_action = 0.0

    def _read(self):
        pos, _ = p.getBasePositionAndOrientation(self.ball, physicsClientId=self.client)
        vel, _ = p.getBaseVelocity(self.ball, physicsClientId=self.client)
        self.pos = np.array([pos[0], pos[2]])
        self.vel = np.array([vel[0], vel[2]])

    def update(self, timestep):
        if timestep > 0:
            self.advance(timestep, 1)

    def advance(self, timestep, max_updates):
        if timestep <= 0:
            return 1
        cid, ball = self.client, self.ball
        if timestep != self.timestep:
            p.setTimeStep(timestep, physicsClientId=cid)
            self.timestep = timestep
        for n in range(1, max_updates + 1):
            force = GOALS_POINT_FORCE * self.action - GOALS_POINT_DAMPING * self.vel
            p.applyExternalForce(ball, -1, [force[0], 0.0, force[1]], [0, 0, 0], p.LINK_FRAME, physicsClientId=cid)
            p.stepSimulation(physicsClientId=cid)
            self.timer.time += timestep
            self._since_action += timestep
            self._read()
            if self._since_action >= CONTROL_DT - 1e-9:
                self.need_action = True
            if self.need_action or self.is_episode_end():
                return n
        return max_updates

    def is_episode_end(self):
        return self.timer.is_end() or self.check_terminate() != Terminate.Null

    def check_valid_episode(self):
        return bool(np.all(np.isfinite(self.pos)) and np.all(np.abs(self.vel) < 100))

    def set_mode(self, mode):
        self.mode = Mode(mode)

    # ---- agent interface ----
    def get_num_agents(self):
        return 1

    def need_new_action(self, agent_id=0):
        return self.need_action

    def record_state(self, agent_id=0):
        return np.concatenate([self.pos, self.vel])

    def record_goal(self, agent_id=0):
        return np.zeros(0)

    def get_goal_size(self, agent_id=0):
        return 0

    def build_goal_offset(self, agent_id=0):
        return np.zeros(0)

    def build_goal_scale(self, agent_id=0):
        return np.ones(0)

    def build_goal_norm_groups(self, agent_id=0):
        return np.zeros(0, dtype=np.int32)

    def set_action(self, agent_id, action):
        self.action = np.clip(np.asarray(action, dtype=float), -1.0, 1.0)
        self.need_action = False
        self._since_action = 0.0

    def spot_reward(self, pos):
        d2 = np.sum(np.square(self.spots - np.asarray(pos)[None]), axis=1)
        return float(np.max(np.exp(-d2 / (2 * self.sigma ** 2))))

    def calc_reward(self, agent_id=0):
        if self.check_terminate() != Terminate.Null:
            return 0.0
        return self.spot_reward(self.pos)

    def check_terminate(self, agent_id=0):
        return Terminate.Fail if np.max(np.abs(self.pos)) > self.arena else Terminate.Null

    def get_layout_desc(self, agent_id=0):
        return {}

    def get_reward_min(self, agent_id=0):
        return 0.0

    def get_reward_max(self, agent_id=0):
        return 1.0

    def log_val(self, agent_id, val):
        pass

    def enable_amp_task_reward(self):
        return False

    def get_amp_obs_size(self):
        return 0

    def camera_focus(self):
        return np.array([self.pos[0], RADIUS, self.pos[1]])

    def shutdown(self):
        if self.client is not None and p.isConnected(self.client):
            p.disconnect(self.client)
        self.client = None
