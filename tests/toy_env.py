"""A small deterministic Env for the learning tests: a 2D point mass that must reach a target.

State: [target - position (2), velocity (2)] (with use_goal: [position, velocity] and the goal is
the target). Action: acceleration command in [-1, 1]^2. Every 1/30 s a new action; each update
moves v toward 4 a at rate 20/s, x += v dt. Reward exp(-|target - x|^2) in [0, 1]. Ends: leaving
the arena |x|_inf > 2 is a Fail, reaching within succ_radius (when > 0) a Succ, episode_time a
Null (time limit). Starts and targets come from a RandomState(seed).
"""
import json

import numpy as np

from env.env import Env, Terminate
from learning.nets.fc_2layers_1024units import FCNet
from learning.nets.net_builder import register_net
from util.arg_parser import ArgParser

CONTROL_DT = 1 / 30
ARENA = 2.0
SMALL_NET = "fc_2layers_32units"


class PointMassEnv(Env):
    GAIN = 4.0
    RESPONSE = 20.0
    def __init__(self, seed=0, episode_time=1.0, num_substeps=2, succ_radius=0.0, use_goal=False):
        self.rng = np.random.RandomState(seed)
        self.episode_time = episode_time
        self.num_substeps = num_substeps
        self.succ_radius = succ_radius
        self.use_goal = use_goal
        self.mode = None
        self.sample_count = 0
        self.force_invalid = False   # tests set it to make the current episode invalid
        self.logged_vals = []
        self.reset()

    # ---- world ----
    def reset(self):
        self.pos = self.rng.uniform(-1, 1, 2)
        self.target = self.rng.uniform(-1, 1, 2)
        self.vel = np.zeros(2)
        self.accel = np.zeros(2)
        self.time = 0.0
        self.since_action = 0.0
        self.needs_action = True
        self.force_invalid = False

    def update(self, timestep):
        self.vel = self.vel + (self.GAIN * self.accel - self.vel) * min(self.RESPONSE * timestep, 1)
        self.pos = self.pos + self.vel * timestep
        self.time += timestep
        self.since_action += timestep
        if self.since_action >= CONTROL_DT - 1e-9:
            self.needs_action = True

    def get_time(self):
        return self.time

    def get_num_update_substeps(self):
        return self.num_substeps

    def is_episode_end(self):
        return self.time >= self.episode_time - 1e-9 or self.check_terminate(0) != Terminate.Null

    def check_valid_episode(self):
        return not self.force_invalid and np.all(np.abs(self.vel) < 100)

    def set_mode(self, mode):
        self.mode = mode

    def set_sample_count(self, count):
        self.sample_count = count

    def get_num_agents(self):
        return 1

    # ---- decisions ----
    def need_new_action(self, agent_id):
        return self.needs_action

    def record_state(self, agent_id):
        if self.use_goal:
            return np.concatenate([self.pos, self.vel])
        return np.concatenate([self.target - self.pos, self.vel])

    def record_goal(self, agent_id):
        return self.target.copy() if self.use_goal else np.zeros(0)

    def set_action(self, agent_id, action):
        self.accel = np.clip(action, -1, 1)
        self.needs_action = False
        self.since_action = 0.0

    def calc_reward(self, agent_id):
        return float(np.exp(-np.sum(np.square(self.target - self.pos))))

    def check_terminate(self, agent_id):
        if np.max(np.abs(self.pos)) > ARENA:
            return Terminate.Fail
        if self.succ_radius > 0 and np.linalg.norm(self.target - self.pos) < self.succ_radius:
            return Terminate.Succ
        return Terminate.Null

    def log_val(self, agent_id, val):
        self.logged_vals.append(val)

    # ---- sizes and normalisation ----
    def get_state_size(self, agent_id):
        return 4

    def get_goal_size(self, agent_id):
        return 2 if self.use_goal else 0

    def get_action_size(self, agent_id):
        return 2

    def build_state_offset(self, agent_id):
        return np.zeros(4)

    def build_state_scale(self, agent_id):
        return np.ones(4)

    def build_goal_offset(self, agent_id):
        return np.zeros(self.get_goal_size(agent_id))

    def build_goal_scale(self, agent_id):
        return np.ones(self.get_goal_size(agent_id))

    def build_action_offset(self, agent_id):
        return np.zeros(2)

    def build_action_scale(self, agent_id):
        return np.ones(2)

    def build_action_bound_min(self, agent_id):
        return -np.ones(2)

    def build_action_bound_max(self, agent_id):
        return np.ones(2)

    def build_state_norm_groups(self, agent_id):
        return np.zeros(4, dtype=np.int32)

    def build_goal_norm_groups(self, agent_id):
        return np.zeros(self.get_goal_size(agent_id), dtype=np.int32)

    def get_reward_min(self, agent_id):
        return 0.0

    def get_reward_max(self, agent_id):
        return 1.0


def register_small_net():
    """fc_2layers_32units: the 1024-unit trunk's structure at 32 x 32, for fast tests."""
    register_net(SMALL_NET, lambda sizes, scope: FCNet(sizes, scope, layers=(32, 32)))


TOY_AGENT = {
    "AgentType": "PPO",
    "ActorNet": SMALL_NET, "ActorStepsize": 0.01, "ActorMomentum": 0.9,
    "ActorWeightDecay": 0.0, "ActorInitOutputScale": 0.01,
    "CriticNet": SMALL_NET, "CriticStepsize": 0.01, "CriticMomentum": 0.9, "CriticWeightDecay": 0,
    "Discount": 0.9, "BatchSize": 512, "MiniBatchSize": 64, "Epochs": 2,
    "ReplayBufferSize": 20000, "InitSamples": 1, "NormalizerSamples": 100000,
    "RatioClip": 0.2, "NormAdvClip": 4, "TDLambda": 0.95,
    "OutputIters": 5, "IntOutputIters": 10, "TestEpisodes": 32,
    "ExpAnnealSamples": 1000000,
    "ExpParamsBeg": {"Rate": 1, "Noise": 0.4},
    "ExpParamsEnd": {"Rate": 0.2, "Noise": 0.4},
}


def write_agent_file(path, **overrides):
    data = dict(TOY_AGENT, **overrides)
    path.write_text(json.dumps(data, indent=1))
    return path


def toy_args(agent_file, *extra):
    """An ArgParser with --agent_files agent_file and extra '--key value' tokens."""
    parser = ArgParser()
    parser.load_args(["--agent_files", str(agent_file), *map(str, extra)])
    return parser


class ShapedEnv(PointMassEnv):
    """The point mass's loop with other state/goal/action sizes (states are random draws):
    for tests that need a model of a given shape, e.g. the wheel's 197 -> 36 checkpoints."""

    def __init__(self, state_size, action_size, goal_size=0, seed=0):
        self.sizes = (state_size, goal_size, action_size)
        super().__init__(seed=seed)

    def record_state(self, agent_id):
        return self.rng.normal(size=self.sizes[0])

    def record_goal(self, agent_id):
        return self.rng.normal(size=self.sizes[1])

    def set_action(self, agent_id, action):
        super().set_action(agent_id, np.zeros(2))

    def get_state_size(self, agent_id):
        return self.sizes[0]

    def get_goal_size(self, agent_id):
        return self.sizes[1]

    def get_action_size(self, agent_id):
        return self.sizes[2]

    def build_state_offset(self, agent_id):
        return np.zeros(self.sizes[0])

    def build_state_scale(self, agent_id):
        return np.ones(self.sizes[0])

    def build_goal_offset(self, agent_id):
        return np.zeros(self.sizes[1])

    def build_goal_scale(self, agent_id):
        return np.ones(self.sizes[1])

    def build_action_offset(self, agent_id):
        return np.zeros(self.sizes[2])

    def build_action_scale(self, agent_id):
        return np.ones(self.sizes[2])

    def build_action_bound_min(self, agent_id):
        return -np.ones(self.sizes[2])

    def build_action_bound_max(self, agent_id):
        return np.ones(self.sizes[2])

    def build_state_norm_groups(self, agent_id):
        return np.zeros(self.sizes[0], dtype=np.int32)

    def build_goal_norm_groups(self, agent_id):
        return np.zeros(self.sizes[1], dtype=np.int32)
