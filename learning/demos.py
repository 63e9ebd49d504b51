"""Demonstration datasets for GAIL: expert (state, action) trajectories (app/record_demos.py
records them by rolling a policy out in a scene).

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
(layout, state_size, action_size, enable_phase_input, record_world_root_pos/rot,
action_relative_to_reference, tar_obs_steps, query_rate).

The states and actions are in the layout of the scene GAIL trains in (app/record_demos.py converts
an expert's own layout). Loading checks the file's own consistency and, against an env, its sizes
and layout (Env.get_layout_desc; an imitate scene's clip too, by file name: `motion`, or the
file name of a dataset's `motion_file`); a mismatch is one ValueError line naming the file and the field.
"""
import json
import tokenize
import zipfile
import zlib
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from util.atomic_write import write_with

FORMAT_VERSION = 1
ARRAYS = ("states", "actions", "times", "episode_starts", "episode_terminates")
# fields of the metadata compared with the scene's (scene_layout) when a dataset is loaded for training
LAYOUT_FIELDS = ("state_size", "action_size", "layout", "enable_phase_input", "record_world_root_pos",
                 "record_world_root_rot", "action_relative_to_reference", "tar_obs_steps", "motion")
# the value of a field that a dataset's metadata or a scene's layout leaves out (imitate's options off)
LAYOUT_DEFAULTS = {"action_relative_to_reference": False, "tar_obs_steps": []}


@dataclass
class DemoDataset:
    states: np.ndarray
    actions: np.ndarray
    times: np.ndarray
    episode_starts: np.ndarray
    episode_terminates: np.ndarray
    metadata: dict = field(default_factory=dict)
    source: str = ""                # the file it was loaded from, as named

    @property
    def num_steps(self):
        return len(self.states)

    @property
    def num_episodes(self):
        return len(self.episode_starts)

    def first_episodes(self, n):
        """The dataset of its first n episodes (the metadata's counts are the subset's, with
        file_num_episodes the file's)."""
        if not 1 <= n <= self.num_episodes:
            raise ValueError(f"{self.source}: --demo_episodes {n}: the file holds {self.num_episodes} episodes")
        end = int(self.episode_starts[n]) if n < self.num_episodes else self.num_steps
        meta = {**self.metadata, "num_steps": end, "num_episodes": n, "file_num_episodes": self.num_episodes}
        return DemoDataset(self.states[:end], self.actions[:end], self.times[:end], self.episode_starts[:n],
                           self.episode_terminates[:n], meta, self.source)


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
    given = path
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
    data = DemoDataset(metadata=meta, source=str(given), **arrays)
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
    """What a dataset must match to train in env: the sizes and the env's layout description
    (Env.get_layout_desc: for DeepMimic scenes the controller's layout and state options)."""
    return {"state_size": int(env.get_state_size(agent_id)), "action_size": int(env.get_action_size(agent_id)),
            **env.get_layout_desc(agent_id)}


def dataset_layout(metadata):
    """The LAYOUT_FIELDS a dataset's metadata gives, its defaults filled in; its clip ("motion", the
    motion file's name) taken from "motion_file" where the recorder did not write it."""
    layout = {name: metadata.get(name, LAYOUT_DEFAULTS.get(name)) for name in LAYOUT_FIELDS}
    if layout["motion"] is None and metadata.get("motion_file"):
        layout["motion"] = Path(metadata["motion_file"]).name
    return layout


def check_against(data, expected, path):
    """ValueError naming the file and the first field of `expected` that the dataset differs in
    (a field the scene does not give is not compared, nor the clip of a dataset that names none)."""
    theirs = dataset_layout(data.metadata)
    for name in LAYOUT_FIELDS:
        ours = expected.get(name, LAYOUT_DEFAULTS.get(name))
        if ours is None or (name == "motion" and theirs[name] is None):
            continue
        if theirs[name] != ours:
            raise ValueError(f"{path}: {name}: {theirs[name]!r} in the demonstrations, "
                             f"{ours!r} in the scene (record them in the training scene's layout)")


def load_demos_for(path, env, agent_id=0, num_episodes=0):
    """load_demos, then check_against the scene of env; num_episodes > 0 keeps the first ones."""
    data = load_demos(path)
    check_against(data, scene_layout(env, agent_id), path)
    return data.first_episodes(num_episodes) if num_episodes else data
