"""Demonstration datasets for GAIL: expert (state, action) trajectories rolled out in a scene.

A dataset is one `.npz` (np.savez_compressed) plus a human-readable copy of its metadata beside it
(`<name>.json`); both are written atomically (temp file + os.replace). Arrays, n steps, E episodes:
    states          (n, S) float32   the state at each decision, in the layout of the TRAINING scene
    actions         (n, A) float64   the action taken there, in the training scene's action layout
    times           (n,)   float64   the episode time of the decision (s; 0 at the episode's start)
    episode_starts  (E,)   int64     index of each episode's first step (increasing, from 0)
    episode_terminates (E,) int64    how each episode ended (env.Terminate: 0 time limit, 1 fail, 2 succ)
    metadata        ()     str       the JSON metadata (the sidecar .json is a copy for reading)
Metadata: what the data came from (scene, motion, character, the expert's controller, layout, agent
and model file, mean or sampled actions, rates, the exact command) and the layout it is written in
(layout, state_size, action_size, enable_phase_input, record_world_root_pos/rot, query_rate).

Layout conversion. An expert may run in another layout than the scene GAIL trains in (the pybullet
wheel's pretrained policies use DeepMimic's 2018 layout: state 197, action 36 angle-axis; training
scenes the 2021 one: state 227, action 28 exponential maps). The recorder then writes
- the state the training scene would see: the training controller's StateLayout applied to the
  same simulated body states, phase and ground (env/sim/ct_state.py), and
- the action converted exactly through its PD targets: a_2021 = from_targets(to_targets(a_2018))
  (env/sim/ct_action.py): each spherical joint's quaternion target becomes the exponential map of
  the same rotation (angle in [0, pi]), revolute targets are copied. The PD controller of the
  training layout then holds exactly the targets the expert's controller held.
Loading checks the file's own consistency and, against a scene, its layout and sizes; a mismatch is
one ValueError line naming the file and the field.
"""
import datetime
import json
import tokenize
import zipfile
import zlib
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from env.env import Terminate
from util.atomic_write import write_with

FORMAT_VERSION = 1
ARRAYS = ("states", "actions", "times", "episode_starts", "episode_terminates")
# fields of the metadata compared with the scene's (scene_layout) when a dataset is loaded for training
LAYOUT_FIELDS = ("state_size", "action_size", "layout", "enable_phase_input", "record_world_root_pos",
                 "record_world_root_rot")
DEMO_ACTIONS = ("mean", "sample")
FRAME_TIME = 1 / 60


@dataclass
class DemoDataset:
    states: np.ndarray
    actions: np.ndarray
    times: np.ndarray
    episode_starts: np.ndarray
    episode_terminates: np.ndarray
    metadata: dict = field(default_factory=dict)

    @property
    def num_steps(self):
        return len(self.states)

    @property
    def num_episodes(self):
        return len(self.episode_starts)


def metadata_path(path):
    return Path(path).with_suffix(".json")


def save_demos(path, data):
    """Writes the .npz and its metadata .json (each atomically; sizes and counts are added to
    data.metadata); the dataset is checked first."""
    path = Path(path)
    if path.suffix != ".npz":
        raise ValueError(f"{path}: a demonstration file ends in .npz")
    data.metadata.update({"format": FORMAT_VERSION, "num_steps": data.num_steps, "num_episodes": data.num_episodes,
                          "state_size": int(data.states.shape[1]), "action_size": int(data.actions.shape[1])})
    meta = data.metadata
    data = DemoDataset(np.asarray(data.states, np.float32), np.asarray(data.actions, np.float64),
                       np.asarray(data.times, np.float64), np.asarray(data.episode_starts, np.int64),
                       np.asarray(data.episode_terminates, np.int64), meta)
    check_consistent(data, path)
    text = json.dumps(meta, indent=1, sort_keys=True)
    write_with(path, lambda f: np.savez_compressed(
        f, metadata=np.array(text), **{name: getattr(data, name) for name in ARRAYS}))
    write_with(metadata_path(path), lambda f: f.write((text + "\n").encode()))


def load_demos(path):
    """The dataset of a .npz (found like other data files); ValueError naming the file and field."""
    from util.paths import resolve_data_path
    try:
        path = resolve_data_path(str(path))
    except FileNotFoundError:
        raise ValueError(f"{path}: demonstration file not found") from None
    try:
        with np.load(path, allow_pickle=False) as npz:
            missing = [name for name in ARRAYS + ("metadata",) if name not in npz.files]
            if missing:
                raise ValueError(f"{path}: {missing[0]}: missing from the demonstration file")
            arrays = {name: npz[name] for name in ARRAYS}
            meta = json.loads(str(npz["metadata"]))
    except (OSError, EOFError, ValueError, KeyError, zipfile.BadZipFile, zlib.error,
            SyntaxError, tokenize.TokenError) as err:     # the last two: numpy parsing a broken .npy header
        detail = str(err).splitlines()[0] if str(err) else type(err).__name__
        raise ValueError(f"{path}: not a readable demonstration file ({detail})") from None
    data = DemoDataset(metadata=meta, **arrays)
    check_consistent(data, path)
    return data


def check_consistent(data, path):
    """Shapes, dtypes and episode boundaries agree with each other and with the metadata."""
    def fail(name, problem):
        raise ValueError(f"{path}: {name}: {problem}")

    n = len(data.states)
    if data.states.ndim != 2 or n == 0:
        fail("states", f"expected a non-empty (steps, state size) array, got shape {data.states.shape}")
    for name, ndim in (("actions", 2), ("times", 1), ("episode_starts", 1), ("episode_terminates", 1)):
        value = getattr(data, name)
        if value.ndim != ndim:
            fail(name, f"expected {ndim} dimension(s), got shape {value.shape}")
    for name in ("actions", "times"):
        if len(getattr(data, name)) != n:
            fail(name, f"{len(getattr(data, name))} rows for {n} states")
    starts = data.episode_starts
    if len(starts) == 0 or starts[0] != 0 or np.any(np.diff(starts) <= 0) or starts[-1] >= n:
        fail("episode_starts", f"must increase from 0 and stay below {n}, got {starts[:5].tolist()}...")
    if len(data.episode_terminates) != len(starts):
        fail("episode_terminates", f"{len(data.episode_terminates)} entries for {len(starts)} episodes")
    if not (np.all(np.isfinite(data.states)) and np.all(np.isfinite(data.actions))):
        fail("states" if not np.all(np.isfinite(data.states)) else "actions", "holds non-finite values")
    meta = data.metadata
    for name, actual in (("state_size", data.states.shape[1]), ("action_size", data.actions.shape[1]),
                         ("num_steps", n), ("num_episodes", len(starts))):
        if name in meta and meta[name] != actual:
            fail(name, f"metadata says {meta[name]}, the arrays hold {actual}")
    if meta.get("format", FORMAT_VERSION) != FORMAT_VERSION:
        fail("format", f"version {meta.get('format')}, this code reads {FORMAT_VERSION}")


def scene_layout(env, agent_id=0):
    """What a dataset must match to train in env: sizes, plus for DeepMimic scenes the controller's
    layout and state options (other envs: sizes only)."""
    layout = {"state_size": int(env.get_state_size(agent_id)), "action_size": int(env.get_action_size(agent_id))}
    ctrl = getattr(getattr(env, "scene", None), "ctrl", None)
    if ctrl is not None:
        layout.update(ctrl_layout(ctrl.params))
    return layout


def ctrl_layout(params):
    return {"layout": params.layout, "enable_phase_input": params.enable_phase_input,
            "record_world_root_pos": params.record_world_root_pos,
            "record_world_root_rot": params.record_world_root_rot}


def check_against(data, expected, path):
    """ValueError naming the file and the first field of `expected` that the dataset differs in."""
    for name in LAYOUT_FIELDS:
        if name in expected and data.metadata.get(name) != expected[name]:
            raise ValueError(f"{path}: {name}: {data.metadata.get(name)!r} in the demonstrations, "
                             f"{expected[name]!r} in the scene (record them in the training scene's layout)")


def load_demos_for(path, env, agent_id=0):
    """load_demos, then check_against the scene of env."""
    data = load_demos(path)
    check_against(data, scene_layout(env, agent_id), path)
    return data


# ---- recording ----------------------------------------------------------------------------------

class ActionConverter:
    """An action of one ct_pd action layout as the action of another with the same PD targets."""

    def __init__(self, source, target):
        self.source, self.target = source, target
        self.identity = type(source) is type(target)

    def __call__(self, action):
        if self.identity:
            return np.asarray(action, dtype=np.float64).copy()
        return self.target.from_targets(*self.source.to_targets(action))


def policy_action(agent, state, goal, sample, rng):
    """The agent's action at (state, goal): the Gaussian's mean, or a draw with its std."""
    model = agent.model
    norm_a = model.actor_mean_np(agent._norm_inputs(np.asarray(state)[None], np.asarray(goal)[None]))[0]
    norm_a = norm_a.astype(np.float64)
    if sample:
        norm_a = norm_a + model.std_np * rng.standard_normal(norm_a.size)
    return agent.a_norm.unnormalize(norm_a)


class TargetLayout:
    """The training scene's state and action layouts built beside an expert's scene (the same
    character), with the converter from the expert's actions."""

    def __init__(self, scene, ctrl_file=None):
        from env.sim.ct_action import build_action_layout
        from env.sim.ct_state import StateLayout
        from env.sim.ctrl_params import CtrlParams
        self.scene = scene
        self.ctrl_file = ctrl_file
        self.params = CtrlParams.load(ctrl_file, scene.char_desc) if ctrl_file else scene.ctrl.params
        self.state_layout = StateLayout(self.params, scene.sim_char.num_bodies)
        self.action_layout = build_action_layout(self.params, scene.char_desc)
        self.convert = ActionConverter(scene.ctrl.action_layout, self.action_layout)

    def record_state(self):
        scene = self.scene
        return self.state_layout.build(scene.sim_body_states(), scene.ctrl.phase, scene.world.ground_height)


def default_target_ctrl_file(scene):
    """The training layout's controller when the expert runs in the 2018 layout, else its own."""
    return "data/controllers/humanoid3d_ctrl.txt" if scene.ctrl.params.layout == "2018" else None


def record_demos(world, num_episodes, sample=False, target_ctrl_file=None, episode_time=None, seed=0,
                 log=print):
    """Rolls agent 0 of `world` out in test mode for num_episodes episodes (cut at episode_time s
    when given; invalid episodes are dropped) and returns the DemoDataset in the layout of
    target_ctrl_file's controller (default: default_target_ctrl_file). The env's own reward of
    every decision is kept for the metadata's summary only."""
    env, agent = world.env, world.agents[0]
    scene = getattr(env, "scene", None)
    if agent is None or scene is None or getattr(scene, "ctrl", None) is None:
        raise ValueError("--record_demos needs a scene with a simulated character and an agent")
    target = TargetLayout(scene, target_ctrl_file or default_target_ctrl_file(scene))
    rng = np.random.default_rng(seed)
    world.set_enable_training(False)
    env.reset()
    timestep = FRAME_TIME / env.get_num_update_substeps()
    states, actions, times, starts, terminates, rewards, lengths = [], [], [], [], [], [], []
    episode = {"states": [], "actions": [], "times": [], "rewards": []}

    def clear():
        for v in episode.values():
            v.clear()

    while len(starts) < num_episodes:
        if env.need_new_action(0):
            s, g = env.record_state(0), env.record_goal(0)
            if episode["states"]:
                episode["rewards"].append(env.calc_reward(0))
            a = policy_action(agent, s, g, sample, rng)
            episode["states"].append(target.record_state())
            episode["actions"].append(target.convert(a))
            episode["times"].append(env.get_time())
            env.set_action(0, a)
        env.update(timestep)
        if not env.check_valid_episode():
            log("invalid episode (exploding velocities) dropped")
            clear()
            env.reset()
            continue
        cut = episode_time is not None and env.get_time() >= episode_time - 1e-9
        if env.is_episode_end() or cut:
            if episode["states"]:
                episode["rewards"].append(env.calc_reward(0))
                terminate = env.check_terminate(0) if env.is_episode_end() else Terminate.Null
                starts.append(len(states))
                terminates.append(int(terminate))
                states += episode["states"]
                actions += episode["actions"]
                times += episode["times"]
                rewards.append(float(np.mean(episode["rewards"])))
                lengths.append(env.get_time())
                log(f"episode {len(starts) - 1}: {len(episode['states'])} steps, {env.get_time():.2f} s, "
                    f"{'fell' if terminate == Terminate.Fail else 'no fall'}, mean reward {rewards[-1]:.4f}")
            clear()
            env.reset()
    meta = {
        "created": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "scene": env.get_name(),
        "motion_file": world.arg_parser.parse_string("motion_file"),
        "character_file": world.arg_parser.parse_strings("character_files", ("",))[0],
        "ctrl_file": target.ctrl_file or world.arg_parser.parse_strings("char_ctrl_files", ("",))[0],
        **ctrl_layout(target.params),
        "query_rate": target.params.query_rate,
        "expert": {
            "agent_file": world.arg_parser.parse_strings("agent_files", ("",))[0],
            "model_file": (world.arg_parser.parse_strings("model_files", ("none",)) or ["none"])[0],
            "ctrl_file": world.arg_parser.parse_strings("char_ctrl_files", ("",))[0],
            "layout": scene.ctrl.params.layout, "state_size": int(env.get_state_size(0)),
            "action_size": int(env.get_action_size(0)), "actions": "sample" if sample else "mean",
            "policy_std": [float(v) for v in np.atleast_1d(agent.model.std_np)[:1]],
            "num_update_substeps": env.get_num_update_substeps(),
            "num_sim_substeps": world.arg_parser.parse_int("num_sim_substeps", 1),
        },
        "action_conversion": ("none" if target.convert.identity else
                              f"{scene.ctrl.params.layout} -> {target.params.layout} through the PD targets "
                              "(ActionLayout.from_targets(to_targets(a)))"),
        "episode_time": episode_time,
        "falls": int(sum(t == int(Terminate.Fail) for t in terminates)),
        "mean_episode_length_s": float(np.mean(lengths)),
        "mean_env_reward": float(np.mean(rewards)),
        "seed": seed,
    }
    return DemoDataset(np.array(states, np.float32), np.array(actions, np.float64), np.array(times),
                       np.array(starts, np.int64), np.array(terminates, np.int64), meta)
