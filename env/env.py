"""The environment API that learning/ sees: the calls DeepMimic's C++ core exposed to Python,
declared once here with their defaults.

Every scene implements it (env/scenes/: Scene the world part, RLScene the per-agent part from the
scene's state and action layouts); DeepMimicEnv(args) builds the scene the args name
(env/deepmimic_env.py). Tests implement it with toy dynamics. Agent ids index the characters an env
controls (one for every shipped scene, none for kin_char). Sizes and normalisation data are numpy
arrays; states, goals, actions and AMP observations are float64 vectors.
Methods without a default are abstract (the world part) or raise NotImplementedError (the
per-agent part, which an env without agents does not implement).
"""
from abc import ABC, abstractmethod
from enum import Enum, IntEnum

import numpy as np

FRAME_TIME = 1.0 / 60.0     # DeepMimic's frame: the env updates num_update_substeps times per frame


class Terminate(IntEnum):
    """Why an episode ended: Null (time limit: bootstrap), Fail (value 0), Succ (reward_succ)."""
    Null = 0
    Fail = 1
    Succ = 2


class Mode(IntEnum):
    """RLAgent modes, also passed to the scene: test mode uses the final episode-length limit."""
    TRAIN = 0
    TEST = 1
    TRAIN_END = 2


class ActionSpace(Enum):
    Continuous = 0
    Discrete = 1


class NormGroup(IntEnum):
    """Normaliser groups for a vector's entries: None never updates, Zero is per-dimension."""
    None_ = -1
    Zero = 0


def _no_agents(env):
    """What a per-agent call without a default raises in an env that does not implement it."""
    return NotImplementedError(f"{type(env).__name__} has no agents (it implements no per-agent calls)")


class Env(ABC):
    """What an RLWorld drives: advance time, ask for actions, hand out states and rewards."""

    enable_draw = False   # True when a viewer draws this env (agents then log their critic values)

    # ---- world ----
    @abstractmethod
    def update(self, timestep: float) -> None: ...

    def advance(self, timestep: float, max_updates: int) -> int:
        """Up to `max_updates` updates of `timestep`, returning how many ran. It may stop early only
        after an update that needs the caller: one where an agent needs a new action, the episode
        ended or became invalid. The updates it skips past would have needed nothing from an RLWorld
        (no agent acts, the episode is valid and goes on). Default: exactly one update."""
        self.update(timestep)
        return 1

    @abstractmethod
    def reset(self) -> None: ...

    @abstractmethod
    def get_time(self) -> float: ...

    @abstractmethod
    def get_num_update_substeps(self) -> int:
        """Updates per FRAME_TIME: the caller passes timestep = FRAME_TIME / num_update_substeps."""

    @abstractmethod
    def is_episode_end(self) -> bool: ...

    def check_valid_episode(self) -> bool:
        """False once the episode became invalid (exploding velocities): its samples are dropped."""
        return True

    def set_mode(self, mode: Mode) -> None:
        """The agents' mode (envs with agents: test mode uses the final episode-length limit)."""

    def set_sample_count(self, count: int) -> None:
        """Samples trained on so far (envs with an episode-length curriculum use it)."""

    def get_num_agents(self) -> int:
        return 0

    def shutdown(self) -> None:
        pass

    # ---- per agent: decisions ----
    def need_new_action(self, agent_id: int) -> bool:
        raise _no_agents(self)

    def record_state(self, agent_id: int) -> np.ndarray:
        raise _no_agents(self)

    def record_goal(self, agent_id: int) -> np.ndarray:
        return np.zeros(self.get_goal_size(agent_id))

    def set_action(self, agent_id: int, action: np.ndarray) -> None:
        raise _no_agents(self)

    def calc_reward(self, agent_id: int) -> float:
        raise _no_agents(self)

    def check_terminate(self, agent_id: int) -> Terminate:
        raise _no_agents(self)

    def motion_over(self) -> bool:
        """The reference clip (a non-looping one) has played to its end: the imitate scene ends the
        episode there with Terminate.Fail as DeepMimic does, and the evaluation tells it from a
        fall by this. False for scenes without a reference clip."""
        return False

    def log_val(self, agent_id: int, val: float) -> None:
        """The agent reports its critic's value of the current state (the viewer plots it)."""

    def get_reward_terms(self, agent_id: int) -> dict:
        """{term name: value} of the last calc_reward (empty when the reward has no named terms)."""
        return {}

    def calc_tracking_error(self, agent_id: int):
        """{name: value} of the imitation metrics now (env/tracking_error.py: TRACKING_ERRORS), or
        None when the agent tracks no reference."""
        return None

    def calc_style_error(self, agent_id: int):
        """{name: value} of the style metrics now (env/style_error.py: STYLE_METRICS, the pose
        against the nearest frame of the motion data, whatever the clip time), or None when the
        agent's scene does not judge style. Called in test episodes only."""
        return None

    def get_action_space(self, agent_id: int) -> ActionSpace:
        return ActionSpace.Continuous

    def get_layout_desc(self, agent_id: int) -> dict:
        """What the agent's states and actions mean beyond their sizes: for DeepMimic's controllers
        {"layout": "2021" (DeepMimic's current) or "2018" (the pybullet wheel's pretrained
        policies), "enable_phase_input", "record_world_root_pos", "record_world_root_rot"}
        (env/sim/ctrl_params.py). Agents save their checkpoints in the layout's names and
        demonstrations are checked against it; {} (nothing beyond the sizes; layout "2021")
        by default."""
        return {}

    # ---- per agent: sizes and normalisation ----
    def get_state_size(self, agent_id: int) -> int:
        raise _no_agents(self)

    def state_names(self, agent_id: int) -> list:
        """A name per state entry ([]: the scene does not name them); scenes of DeepMimic's
        characters name theirs (env/sim/ct_state.py's entry_names)."""
        return []

    def get_goal_size(self, agent_id: int) -> int:
        return len(self.goal_names(agent_id))

    def goal_names(self, agent_id: int) -> list:
        """A name per goal entry (none: no goal); scenes with a goal name theirs."""
        return []

    def get_action_size(self, agent_id: int) -> int:
        raise _no_agents(self)

    def build_state_offset(self, agent_id: int) -> np.ndarray:
        raise _no_agents(self)

    def build_state_scale(self, agent_id: int) -> np.ndarray:
        raise _no_agents(self)

    def build_goal_offset(self, agent_id: int) -> np.ndarray:
        return np.zeros(self.get_goal_size(agent_id))

    def build_goal_scale(self, agent_id: int) -> np.ndarray:
        return np.ones(self.get_goal_size(agent_id))

    def build_action_offset(self, agent_id: int) -> np.ndarray:
        raise _no_agents(self)

    def build_action_scale(self, agent_id: int) -> np.ndarray:
        raise _no_agents(self)

    def build_action_bound_min(self, agent_id: int) -> np.ndarray:
        raise _no_agents(self)

    def build_action_bound_max(self, agent_id: int) -> np.ndarray:
        raise _no_agents(self)

    def build_state_norm_groups(self, agent_id: int) -> np.ndarray:
        raise _no_agents(self)

    def build_goal_norm_groups(self, agent_id: int) -> np.ndarray:
        return np.full(self.get_goal_size(agent_id), int(NormGroup.Zero), dtype=np.int32)

    def get_reward_min(self, agent_id: int) -> float:
        raise _no_agents(self)

    def get_reward_max(self, agent_id: int) -> float:
        raise _no_agents(self)

    def get_reward_fail(self, agent_id: int) -> float:
        return self.get_reward_min(agent_id)

    def get_reward_succ(self, agent_id: int) -> float:
        return self.get_reward_max(agent_id)

    # ---- AMP (envs without AMP keep these defaults) ----
    def enable_amp_task_reward(self) -> bool:
        return False

    def get_amp_obs_size(self) -> int:
        return 0

    def get_amp_obs_offset(self) -> np.ndarray:
        return np.zeros(0)

    def get_amp_obs_scale(self) -> np.ndarray:
        return np.ones(0)

    def get_amp_obs_norm_group(self) -> np.ndarray:
        return np.zeros(0, dtype=np.int32)

    def record_amp_obs_expert(self, agent_id: int) -> np.ndarray:
        raise NotImplementedError("this env records no AMP observations")

    def record_amp_obs_agent(self, agent_id: int) -> np.ndarray:
        raise NotImplementedError("this env records no AMP observations")

    def record_amp_obs_expert_batch(self, agent_id: int, count: int) -> np.ndarray:
        """count expert observations (count, size) at once; scenes may draw them in one batch."""
        return np.stack([self.record_amp_obs_expert(agent_id) for _ in range(count)])

    def set_amp_obs_steps(self, num_steps: int) -> None:
        """States one decision apart in an AMP observation (the AMP agent's DiscObsSteps; 2 by
        default, DeepMimic's pair); the observation's size follows."""
        raise NotImplementedError("this env records no AMP observations")
