"""Recording demonstrations: a policy rolled out in its scene, written as a GAIL dataset
(learning/demos.py holds the format).

Two layouts to write in.
- The expert's own (a 2021 expert, no --demo_ctrl_file): the states and actions the policy saw and
  gave, with the scene's options (actions relative to the reference, the reference's poses in the
  state); GAIL then trains in a scene with the same args.
- A training controller's (--demo_ctrl_file, or by default for an expert in DeepMimic's 2018 layout,
  as the pybullet wheel's pretrained policies are: state 197, action 36 angle-axis, against the
  2021 one: state 227, action 28 exponential maps). The recorder writes
  - the state that controller would see: its StateLayout applied to the same simulated body
    states, phase and ground (env/sim/ct_state.py), without scene options, and
  - the action converted exactly through its PD targets: a = from_targets(targets), where targets
    are what the expert's action set (scene.action_targets: for a 2018 action its own to_targets,
    for an action relative to the reference the reference's rotation composed with it;
    env/sim/ct_action.py). Each spherical joint's quaternion target becomes the exponential map of
    the same rotation (angle in [0, pi]), revolute targets are copied. The PD controller of the
    training layout then holds exactly the targets the expert's controller held.
"""
import datetime
from pathlib import Path

import numpy as np

from app.rollout import WorldHooks, update_world
from env.env import FRAME_TIME, Terminate
from env.sim.ct_action import build_action_layout
from env.sim.ct_state import StateLayout
from env.sim.ctrl_params import CtrlParams
from learning.demos import DemoDataset
from util.paths import resolve_data_path


class TargetLayout:
    """The layout a recording is written in, beside an expert's scene (the same character): the
    expert's own (ctrl_file None) or ctrl_file's controller layout, with the converters from the
    expert's state and action."""

    def __init__(self, scene, ctrl_file=None):
        self.scene = scene
        self.ctrl_file = ctrl_file
        self.native = ctrl_file is None
        self.params = CtrlParams.load(ctrl_file, scene.char_desc) if ctrl_file else scene.ctrl.params
        self.state_layout = StateLayout(self.params, scene.sim_char.num_bodies)
        self.action_layout = build_action_layout(self.params, scene.char_desc)

    def layout_desc(self):
        """Env.get_layout_desc of the scene the data trains in."""
        if self.native:
            return self.scene.get_layout_desc(0)
        return {**self.params.layout_desc(), "action_relative_to_reference": False, "tar_obs_steps": []}

    def record_state(self, state):
        """The state to record for the expert's `state` (the one it decided on)."""
        if self.native:
            return np.array(state, dtype=np.float64)
        scene = self.scene
        return self.state_layout.build(scene.sim_body_states(), scene.ctrl.phase, scene.world.ground_height)

    def convert(self, action):
        """The action to record for the expert's `action`, before it is applied."""
        if self.native:
            return np.array(action, dtype=np.float64)
        return self.action_layout.from_targets(*self.scene.action_targets(action))


def default_target_ctrl_file(scene):
    """The training layout's controller when the expert runs in the 2018 layout, else None (its own
    layout)."""
    return "data/controllers/humanoid3d_ctrl.txt" if scene.ctrl.params.layout == "2018" else None


class DemoRecorder(WorldHooks):
    """The rollout's hooks: at each decision the recorder (not the agent) asks agent 0's policy for
    the action (the mean, or a draw from `rng`) and records the state and action in the target
    layout; episodes are cut at episode_time seconds when given; invalid ones are dropped."""

    each_update = True

    def __init__(self, world, target, sample, rng, episode_time, log):
        super().__init__(world)
        self.env, self.agent = world.env, world.agents[0]
        self.target, self.sample, self.rng = target, sample, rng
        self.episode_time, self.log = episode_time, log
        self.states, self.actions, self.times, self.starts, self.terminates = [], [], [], [], []
        self.rewards, self.lengths = [], []     # per episode: the env's mean reward, the length
        self.episode = {"states": [], "actions": [], "times": [], "rewards": []}

    def act(self, timestep):
        env, episode = self.env, self.episode
        if env.need_new_action(0):
            s, g = env.record_state(0), env.record_goal(0)
            if episode["states"]:
                episode["rewards"].append(env.calc_reward(0))
            noise = self.rng.standard_normal(env.get_action_size(0)) if self.sample else None
            a = self.agent.calc_action(s, g, noise)
            episode["states"].append(self.target.record_state(s))
            episode["actions"].append(self.target.convert(a))
            episode["times"].append(env.get_time())
            env.set_action(0, a)
        return False

    def after_update(self):
        return self.episode_time is not None and self.env.get_time() >= self.episode_time - 1e-9

    def on_episode_end(self):
        env, episode = self.env, self.episode
        if episode["states"]:
            episode["rewards"].append(env.calc_reward(0))
            terminate = env.check_terminate(0) if env.is_episode_end() else Terminate.Null
            self.starts.append(len(self.states))
            self.terminates.append(int(terminate))
            self.states += episode["states"]
            self.actions += episode["actions"]
            self.times += episode["times"]
            self.rewards.append(float(np.mean(episode["rewards"])))
            self.lengths.append(env.get_time())
            self.log(f"episode {len(self.starts) - 1}: {len(episode['states'])} steps, {env.get_time():.2f} s, "
                     f"{'fell' if terminate == Terminate.Fail else 'no fall'}, mean reward {self.rewards[-1]:.4f}")
        self._clear()

    def on_invalid_episode(self):
        self.log("invalid episode (exploding velocities) dropped")
        self._clear()

    def _clear(self):
        for v in self.episode.values():
            v.clear()


def policy_metadata(model_file):
    """The metadata.json shipped beside a trained policy's checkpoint (data/policies/<name>/), if any."""
    if model_file == "none":
        return None
    path = Path(model_file).parent / "metadata.json"
    try:
        resolve_data_path(str(path))
    except FileNotFoundError:
        return None
    return str(path)


def record_demos(world, num_episodes, sample=False, target_ctrl_file=None, episode_time=None, seed=0,
                 log=print):
    """Rolls agent 0 of `world` out in test mode for num_episodes episodes (cut at episode_time s
    when given; invalid episodes are dropped) and returns the DemoDataset in the layout of
    target_ctrl_file's controller (default: default_target_ctrl_file). The env's own reward of
    every decision is kept for the metadata's summary only."""
    scene, agent = world.env, world.agents[0]
    if agent is None or getattr(scene, "ctrl", None) is None:
        raise ValueError("--record_demos needs a scene with a simulated character and an agent")
    target = TargetLayout(scene, target_ctrl_file or default_target_ctrl_file(scene))
    recorder = DemoRecorder(world, target, sample, np.random.default_rng(seed), episode_time, log)
    world.set_enable_training(False)
    world.reset()
    while len(recorder.starts) < num_episodes:
        update_world(world, FRAME_TIME, recorder)
    args = world.arg_parser
    model_file = (args.parse_strings("model_files", ("none",)) or ["none"])[0]
    meta = {
        "created": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "scene": scene.name,
        "motion_file": args.parse_string("motion_file"),
        "character_file": args.parse_strings("character_files", ("",))[0],
        "ctrl_file": target.ctrl_file or args.parse_strings("char_ctrl_files", ("",))[0],
        **target.layout_desc(),
        "query_rate": target.params.query_rate,
        "expert": {
            "agent_file": args.parse_strings("agent_files", ("",))[0],
            "model_file": model_file,
            "policy_metadata": policy_metadata(model_file),
            "ctrl_file": args.parse_strings("char_ctrl_files", ("",))[0],
            **scene.get_layout_desc(0), "state_size": int(scene.get_state_size(0)),
            "action_size": int(scene.get_action_size(0)), "actions": "sample" if sample else "mean",
            "policy_std": [float(v) for v in np.atleast_1d(agent.model.std_np)[:1]],
            "num_update_substeps": scene.get_num_update_substeps(),
            "num_sim_substeps": args.parse_int("num_sim_substeps", 1),
        },
        "action_conversion": ("none" if target.native else
                              f"{scene.ctrl.params.layout} -> {target.params.layout} through the PD targets "
                              "(ActionLayout.from_targets(scene.action_targets(a)))"),
        "episode_time": episode_time,
        "falls": int(sum(t == int(Terminate.Fail) for t in recorder.terminates)),
        "mean_episode_length_s": float(np.mean(recorder.lengths)),
        "mean_env_reward": float(np.mean(recorder.rewards)),
        "seed": seed,
    }
    return DemoDataset(np.array(recorder.states, np.float32), np.array(recorder.actions, np.float64),
                       np.array(recorder.times), np.array(recorder.starts, np.int64),
                       np.array(recorder.terminates, np.int64), meta)
