"""DeepMimicEnv: the Env API (env/env.py) over the pure-Python scenes, in place of DeepMimic's C++ core.

Args read here: scene (required; see env/scenes/scene_builder.py), num_update_substeps (default 1:
env updates per 1/60 s frame; the caller passes dt = 1/60 / num_update_substeps to update()),
rand_seed (scene randomness, when no `seed` is given; offset by 1000 x the MPI rank so ranks draw
different resets, as DeepMimic seeds them). Everything else belongs to the scene.
`scene` is public for the viewer (draw_characters, camera_focus, apply_force, throw_projectile,
draw_projectiles). get_reward_terms gives the scene's terms of its last reward (imitate: the five
terms). Goal and AMP calls go to the scene (RLSceneSimChar has the no-goal, no-AMP
defaults; AMP scenes override them).
"""
import numpy as np

from env.env import FRAME_TIME, Env, Mode
from env.scenes.scene_builder import build_scene
from util import mpi_util


class DeepMimicEnv(Env):
    def __init__(self, arg_parser, enable_draw=False, seed=None):
        self.args = arg_parser
        self.enable_draw = enable_draw
        self.num_update_substeps = arg_parser.parse_int("num_update_substeps", 1)
        if self.num_update_substeps < 1:
            raise ValueError(f"--num_update_substeps must be >= 1, got {self.num_update_substeps}")
        if seed is None and arg_parser.has_key("rand_seed"):
            seed = mpi_util.rank_seed(arg_parser.parse_int("rand_seed"))
        self.rng = np.random.default_rng(seed)
        self.scene = build_scene(arg_parser.parse_string("scene", required=True), arg_parser, self.rng,
                                 FRAME_TIME / self.num_update_substeps)
        self._agent_scene = self.scene if self.scene.get_num_agents() > 0 else None
        self.scene.reset()

    def _agents(self):
        if self._agent_scene is None:
            raise RuntimeError(f"scene {self.scene.name} has no agents")
        return self._agent_scene

    # ---- world ----
    def update(self, timestep):
        self.scene.update(timestep)

    def advance(self, timestep, max_updates):
        return self.scene.advance(timestep, max_updates)

    def reset(self):
        self.scene.reset()

    def get_time(self):
        return self.scene.get_time()

    def get_name(self):
        return self.scene.name

    def get_num_update_substeps(self):
        return self.num_update_substeps

    def is_episode_end(self):
        return self.scene.is_episode_end()

    def check_valid_episode(self):
        return self.scene.check_valid_episode()

    def set_mode(self, mode):
        self.scene.set_mode(Mode(mode))

    def set_sample_count(self, count):
        self.scene.set_sample_count(int(count))

    def get_num_agents(self):
        return self.scene.get_num_agents()

    def shutdown(self):
        self.scene.shutdown()

    # ---- per agent: decisions ----
    def need_new_action(self, agent_id):
        return self._agents().need_new_action(agent_id)

    def record_state(self, agent_id):
        return self._agents().record_state(agent_id).copy()

    def record_goal(self, agent_id):
        return self._agents().record_goal(agent_id)

    def set_action(self, agent_id, action):
        self._agents().set_action(agent_id, np.asarray(action, dtype=float))

    def calc_reward(self, agent_id):
        return float(self._agents().calc_reward(agent_id))

    def check_terminate(self, agent_id):
        return self._agents().check_terminate(agent_id)

    def log_val(self, agent_id, val):
        self._agents().log_val(agent_id, val)

    def get_reward_terms(self, agent_id):
        return dict(self._agents().reward_terms)

    def calc_tracking_error(self, agent_id):
        return self._agents().calc_tracking_error(agent_id)

    def get_layout_desc(self, agent_id):
        return self._agents().get_layout_desc(agent_id)

    # ---- per agent: sizes and normalisation ----
    def _state_layout(self):
        """The policy state's layout (the controller's, extended by scenes that append task
        features: dribble_amp)."""
        return self._agents().state_layout

    def _action_layout(self):
        """The policy action's layout (the controller's, or imitate's reference-relative one)."""
        return self._agents().action_layout

    def get_state_size(self, agent_id):
        return self._state_layout().size

    def get_goal_size(self, agent_id):
        return self._agents().get_goal_size(agent_id)

    def get_action_size(self, agent_id):
        return self._action_layout().size

    def build_state_offset(self, agent_id):
        return self._state_layout().offset

    def build_state_scale(self, agent_id):
        return self._state_layout().scale

    def build_goal_offset(self, agent_id):
        return self._agents().build_goal_offset(agent_id)

    def build_goal_scale(self, agent_id):
        return self._agents().build_goal_scale(agent_id)

    def build_action_offset(self, agent_id):
        return self._action_layout().offset.copy()

    def build_action_scale(self, agent_id):
        return self._action_layout().scale.copy()

    def build_action_bound_min(self, agent_id):
        return self._action_layout().bound_min.copy()

    def build_action_bound_max(self, agent_id):
        return self._action_layout().bound_max.copy()

    def build_state_norm_groups(self, agent_id):
        return self._state_layout().norm_groups

    def build_goal_norm_groups(self, agent_id):
        return self._agents().build_goal_norm_groups(agent_id)

    def get_reward_min(self, agent_id):
        return self._agents().get_reward_min(agent_id)

    def get_reward_max(self, agent_id):
        return self._agents().get_reward_max(agent_id)

    # ---- AMP (the scene's; scenes without AMP have none) ----
    def enable_amp_task_reward(self):
        return self._agents().enable_amp_task_reward()

    def get_amp_obs_size(self):
        return self._agents().get_amp_obs_size()

    def get_amp_obs_offset(self):
        return self._agents().get_amp_obs_offset()

    def get_amp_obs_scale(self):
        return self._agents().get_amp_obs_scale()

    def get_amp_obs_norm_group(self):
        return self._agents().get_amp_obs_norm_group()

    def record_amp_obs_expert(self, agent_id):
        return self._agents().record_amp_obs_expert(agent_id)

    def record_amp_obs_agent(self, agent_id):
        return self._agents().record_amp_obs_agent(agent_id)

    def set_amp_obs_steps(self, num_steps):
        self._agents().set_amp_obs_steps(num_steps)
