"""RLScene (DeepMimic's cRLScene): a scene whose one character is an agent (agent id 0).

The per-agent part of the Env API that follows from the scene's layouts is here: sizes, offsets,
scales, bounds and normalisation groups of the state (`state_layout`: size, offset, scale,
norm_groups) and of the action (`action_layout`: size, offset, scale, bound_min, bound_max), which
a subclass sets in its constructor. Also the reward's named terms (`reward_terms`, set by
calc_reward), the critic values the agent logs for the viewer's plot (`val_log`) and DeepMimic's
default reward range [0, 1]. Decisions, rewards and termination are the subclass's.
"""
from collections import deque

from env.scenes.scene import Scene

VAL_LOG_SIZE = 50


class RLScene(Scene):
    def __init__(self, arg_parser, rng):
        super().__init__(arg_parser, rng)
        self.reward_terms = {}      # name -> value of the last calc_reward's terms (scenes that have terms)
        self.val_log = deque(maxlen=VAL_LOG_SIZE)

    def get_num_agents(self):
        return 1

    def log_val(self, agent_id, val):
        self.val_log.append(float(val))

    def get_reward_terms(self, agent_id=0):
        return dict(self.reward_terms)

    def get_reward_min(self, agent_id=0):
        return 0.0

    def get_reward_max(self, agent_id=0):
        return 1.0

    # ---- sizes and normalisation, from the layouts ----
    def get_state_size(self, agent_id=0):
        return self.state_layout.size

    def build_state_offset(self, agent_id=0):
        return self.state_layout.offset

    def build_state_scale(self, agent_id=0):
        return self.state_layout.scale

    def build_state_norm_groups(self, agent_id=0):
        return self.state_layout.norm_groups

    def get_action_size(self, agent_id=0):
        return self.action_layout.size

    def build_action_offset(self, agent_id=0):
        return self.action_layout.offset.copy()

    def build_action_scale(self, agent_id=0):
        return self.action_layout.scale.copy()

    def build_action_bound_min(self, agent_id=0):
        return self.action_layout.bound_min.copy()

    def build_action_bound_max(self, agent_id=0):
        return self.action_layout.bound_max.copy()
