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
Drawn (viewer): the ball, each spot as a ground circle of radius sigma, the arena's border.
"""
from types import SimpleNamespace

import numpy as np
import pybullet as p

from env.env import Mode, NormGroup, Terminate
from env.scenes.rl_scene import RLScene
from env.scenes.scene import ground_circle
from env.sim.world import connect
from util.math_util import quat_identity

CONTROL_DT = 1.0 / 30.0
GOALS_POINT_FORCE = 60.0
GOALS_POINT_DAMPING = 20.0
RADIUS = 0.1
BALL_COLOR = (0.35, 0.35, 0.4, 1.0)
SPOT_COLOR = (0.1, 0.6, 0.2, 1.0)
ARENA_COLOR = (0.3, 0.3, 0.3, 1.0)
LINE_LIFT = 0.005            # lines drawn this far above the ground
DEFAULT_SPOTS = (1.2, 1.2, -1.2, 0.8, 0.0, -1.3)


class GoalsPointScene(RLScene):
    name = "goals_point"

    def __init__(self, arg_parser, rng):
        super().__init__(arg_parser, rng)
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
        self.client = connect()
        cid = self.client
        p.setGravity(0, -9.8, 0, physicsClientId=cid)
        p.setTimeStep(self.update_timestep, physicsClientId=cid)
        self.timestep = self.update_timestep
        ground = p.createMultiBody(0, p.createCollisionShape(p.GEOM_PLANE, planeNormal=[0, 1, 0], physicsClientId=cid),
                                   physicsClientId=cid)
        self.ball = p.createMultiBody(1.0, p.createCollisionShape(p.GEOM_SPHERE, radius=RADIUS, physicsClientId=cid),
                                      basePosition=[0, RADIUS, 0], physicsClientId=cid)
        for body in (ground, self.ball):
            p.changeDynamics(body, -1, lateralFriction=0.0, rollingFriction=0.0, spinningFriction=0.0,
                             linearDamping=0.0, angularDamping=0.0, physicsClientId=cid)
        ones = np.ones(2)
        self.state_layout = SimpleNamespace(size=4, offset=np.zeros(4), scale=np.array([1, 1, 0.5, 0.5]) / self.arena,
                                            norm_groups=np.full(4, int(NormGroup.Zero), dtype=np.int32))
        self.action_layout = SimpleNamespace(size=2, offset=np.zeros(2), scale=ones.copy(), bound_min=-ones,
                                             bound_max=ones.copy())
        self.action = np.zeros(2)
        self.need_action = True

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
    def need_new_action(self, agent_id=0):
        return self.need_action

    def record_state(self, agent_id=0):
        return np.concatenate([self.pos, self.vel])

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

    def camera_focus(self):
        return np.array([self.pos[0], RADIUS, self.pos[1]])

    def draw_task_objects(self):
        """The ball (a sphere), each reward spot as a ground circle of radius sigma, the arena's border."""
        ball = ("sphere", np.full(3, 2 * RADIUS), self.camera_focus(), quat_identity(), BALL_COLOR)
        circles = [(ground_circle(x, z, self.sigma, LINE_LIFT), SPOT_COLOR) for x, z in self.spots]
        a = self.arena
        border = np.array([[-a, LINE_LIFT, -a], [a, LINE_LIFT, -a], [a, LINE_LIFT, a], [-a, LINE_LIFT, a],
                           [-a, LINE_LIFT, -a]])
        return [ball], circles + [(border, ARENA_COLOR)]

    def shutdown(self):
        if self.client is not None and p.isConnected(self.client):
            p.disconnect(self.client)
        self.client = None
