"""Checkpoints in DeepMimic's TF1 format and variable names, written and read without sessions.

A checkpoint is the TF1 pair `<prefix>.index` + `<prefix>.data-00000-of-00001`, written with the
SaveV2 kernel (eager) and read with tf.train.load_checkpoint, so DeepMimic's own tools and ours
read each other's files. Names (deepmimic.md 6): agent/main/actor/..., agent/main/critic/...,
agent/resource/{s_norm,g_norm,a_norm,...}/{count,mean,std}.

Every normaliser scope also holds `count_ph`, `mean_ph` and `std_ph`: DeepMimic's TFNormalizer
(2018 and 2021, and the older port's) creates them as variables to feed its updates through, and
its tf.train.Saver saves and restores every variable outside the solvers' scope, so a checkpoint
without them does not restore in DeepMimic's code. We write copies of count, mean and std there and
ignore them when reading.

The pybullet wheel's checkpoints use the 2018 layout (pybullet-port.md): the actor's mean layer
is agent/main/actor/dense, there is no log-std variable, and the critic's output is un-normalised
by agent/resource/val_norm (value = mean + std * raw). `to_current_layout` renames the mean layer
and folds val_norm into the critic's last layer (kernel * std, bias * std + mean), which gives the
same values, so one network serves both layouts. `to_legacy_layout` goes back: an agent whose
controller uses the 2018 layout is saved in the 2018 names, with val_norm as DeepMimic's 2018
agent sets it (the middle and half-width of the value bounds) and the critic's last layer
un-folded by it ((kernel / std, (bias - mean) / std)), so that DeepMimic's 2018 code and the older
port restore the same values and train on with their own critic-loss scale. The un-folding is
exact only to float32 rounding (an ulp); `LEGACY_INEXACT` names the variables concerned.

Beside a checkpoint, `<prefix>.resume.npz` holds what a resumed run needs that DeepMimic never
saved (learning/resume_state.py: the pair written and read so that they always belong together).
"""
import os
import shutil
import tempfile
from pathlib import Path

import numpy as np
import tensorflow as tf

from util.paths import resolve_data_path

DATA_SUFFIX = ".data-00000-of-00001"
INDEX_SUFFIX = ".index"
PREV_TAG = ".prev"          # the previous checkpoint, kept while a new one replaces it

LEGACY_MEAN_LAYER = "agent/main/actor/dense"
MEAN_LAYER = "agent/main/actor/dist_gauss_diag/mean"
CRITIC_OUT_LAYER = "agent/main/critic/dense"
VAL_NORM = "agent/resource/val_norm"
LOGSTD = "agent/main/actor/dist_gauss_diag/logstd/bias"
NORM_FIELDS = ("count", "mean", "std")
LEGACY_INEXACT = (CRITIC_OUT_LAYER + "/kernel", CRITIC_OUT_LAYER + "/bias")


class CheckpointError(ValueError):
    """A missing checkpoint, a missing variable or a shape mismatch; names the file and variable."""


def resolve_checkpoint(prefix):
    """The checkpoint prefix as given, else relative to the project or the pybullet wheel's data."""
    try:
        return str(resolve_data_path(str(prefix) + INDEX_SUFFIX))[:-len(INDEX_SUFFIX)]
    except FileNotFoundError:
        raise CheckpointError(f"checkpoint not found: {prefix} (no {prefix}{INDEX_SUFFIX} in the "
                              "working directory, the project or the pybullet data)") from None


def _read_tensors(prefix):
    reader = tf.train.load_checkpoint(str(prefix))
    return {name: np.asarray(reader.get_tensor(name)) for name in reader.get_variable_to_shape_map()}


def read_checkpoint(prefix):
    """Every variable of a TF1 checkpoint: {name: numpy array}. An unreadable pair (a run killed
    between write_checkpoint's two renames, a truncated file) falls back to the previous version
    kept beside it, with a warning; CheckpointError naming the file when there is none, or when a
    variable holds NaN or an infinity."""
    try:
        tensors = _read_tensors(prefix)
    except (tf.errors.OpError, ValueError, OSError, IndexError) as err:   # IndexError: a short data file
        problem = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        prev = str(prefix) + PREV_TAG
        if not os.path.isfile(prev + INDEX_SUFFIX):
            raise CheckpointError(f"{prefix}: unreadable checkpoint ({problem})") from None
        print(f"warning: {prefix}: unreadable checkpoint ({problem}); reading the previous version {prev}", flush=True)
        tensors = _read_tensors(prev)
    for name, value in tensors.items():
        if np.issubdtype(value.dtype, np.floating) and not np.all(np.isfinite(value)):
            raise CheckpointError(f"{prefix}: variable {name} holds NaN or infinite values")
    return tensors


def _fsync(path):
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_checkpoint(prefix, tensors, keep_previous=False):
    """Writes {name: array} as a TF1 checkpoint: both files to temporary names (synced), then
    renamed over the old pair, data then index. While the two renames happen the old pair stays
    readable as `<prefix>.prev.*` (hard links), which read_checkpoint falls back to, so a run
    killed at any point leaves a readable checkpoint. With keep_previous the old pair stays there
    after the write (the caller removes it: remove_checkpoint(prefix + PREV_TAG))."""
    prefix = Path(prefix)
    prefix.parent.mkdir(parents=True, exist_ok=True)
    names = sorted(tensors)
    suffixes = (DATA_SUFFIX, INDEX_SUFFIX)
    prev = str(prefix) + PREV_TAG
    with tempfile.TemporaryDirectory(dir=prefix.parent, prefix=".ckpt-tmp-") as tmp:
        tmp_prefix = os.path.join(tmp, "ckpt")
        tf.raw_ops.SaveV2(prefix=tmp_prefix, tensor_names=names, shape_and_slices=[""] * len(names),
                          tensors=[tf.constant(tensors[n]) for n in names])
        for suffix in suffixes:
            _fsync(tmp_prefix + suffix)
        kept = [s for s in suffixes if os.path.isfile(str(prefix) + s)]
        for suffix in kept:
            if os.path.lexists(prev + suffix):
                os.remove(prev + suffix)
            os.link(str(prefix) + suffix, prev + suffix)
        for suffix in suffixes:
            os.replace(tmp_prefix + suffix, str(prefix) + suffix)
        _fsync(prefix.parent)
    if not keep_previous:
        remove_checkpoint(prev)


def copy_checkpoint(src, dest):
    """Copies the checkpoint with prefix `src` (its .index and .data files) to prefix `dest`."""
    for suffix in (INDEX_SUFFIX, DATA_SUFFIX):
        shutil.copy2(f"{src}{suffix}", f"{dest}{suffix}")


def remove_checkpoint(prefix):
    """Removes a checkpoint's files (those there are)."""
    for suffix in (DATA_SUFFIX, INDEX_SUFFIX):
        if os.path.lexists(str(prefix) + suffix):
            os.remove(str(prefix) + suffix)


def is_legacy_layout(tensors):
    return VAL_NORM + "/mean" in tensors or LEGACY_MEAN_LAYER + "/kernel" in tensors


def to_current_layout(tensors):
    """A 2018-layout checkpoint's tensors in the current names (see the module docstring);
    others are returned as they are. Drops the placeholders' `*_ph` variables."""
    out = {n: v for n, v in tensors.items() if not n.endswith("_ph")}
    if not is_legacy_layout(out):
        return out
    for part in ("kernel", "bias"):
        if f"{LEGACY_MEAN_LAYER}/{part}" in out:
            out[f"{MEAN_LAYER}/{part}"] = out.pop(f"{LEGACY_MEAN_LAYER}/{part}")
    if VAL_NORM + "/mean" in out:
        mean = out.pop(VAL_NORM + "/mean").astype(np.float64)
        std = out.pop(VAL_NORM + "/std").astype(np.float64)
        out.pop(VAL_NORM + "/count", None)
        kernel, bias = CRITIC_OUT_LAYER + "/kernel", CRITIC_OUT_LAYER + "/bias"
        out[kernel] = (out[kernel] * std).astype(np.float32)
        out[bias] = (out[bias] * std + mean).astype(np.float32)
    return out


def to_legacy_layout(tensors, val_mean, val_std):
    """Our tensors (current names, normaliser placeholders included) in the 2018 layout: the mean
    layer under agent/main/actor/dense, no log-std, and the critic's last layer un-folded by a
    val_norm of (val_mean, val_std), which is written with its placeholders (count 0)."""
    out = dict(tensors)
    for part in ("kernel", "bias"):
        if f"{MEAN_LAYER}/{part}" in out:
            out[f"{LEGACY_MEAN_LAYER}/{part}"] = out.pop(f"{MEAN_LAYER}/{part}")
    out.pop(LOGSTD, None)
    kernel, bias = LEGACY_INEXACT
    if kernel in out:
        if not (np.isfinite(val_mean) and np.isfinite(val_std) and val_std > 0):
            raise ValueError(f"val_norm needs a finite mean and a positive std, got {val_mean}, {val_std}")
        # un-fold by the float32 values the file holds, which the reader folds back with
        val_mean, val_std = float(np.float32(val_mean)), float(np.float32(val_std))
        out[kernel] = (out[kernel].astype(np.float64) / val_std).astype(np.float32)
        out[bias] = ((out[bias].astype(np.float64) - val_mean) / val_std).astype(np.float32)
        out.update(_with_placeholders(VAL_NORM, {
            "count": np.zeros(1, dtype=np.int32),
            "mean": np.array([val_mean], dtype=np.float32),
            "std": np.array([val_std], dtype=np.float32)}))
    return out


def read_current(path):
    """(prefix, tensors) of the checkpoint at path (resolve_checkpoint), in the current layout."""
    prefix = resolve_checkpoint(path)
    return prefix, to_current_layout(read_checkpoint(prefix))


def checked_tensor(tensors, name, shape, source):
    """tensors[name] after checking it exists and has `shape`."""
    if name not in tensors:
        raise CheckpointError(f"{source}: checkpoint lacks variable {name}")
    value = tensors[name]
    if tuple(value.shape) != tuple(shape):
        raise CheckpointError(f"{source}: variable {name} has shape {list(value.shape)} in the "
                              f"checkpoint but {list(shape)} in the model")
    return value


def assign_variables(variables, tensors, source, optional=()):
    """Assigns every tf.Variable of {name: variable} from the checkpoint's tensors; names in
    `optional` keep their value when the checkpoint lacks them."""
    for name, var in variables.items():
        if name in optional and name not in tensors:
            continue
        var.assign(checked_tensor(tensors, name, var.shape, source).astype(var.dtype.as_numpy_dtype))


def checkpoint_input_sizes(tensors):
    """The sizes of a checkpoint's policy inputs, as its normalisers give them: [state] or [state, goal]."""
    sizes = [tensors[f"agent/resource/{norm}/mean"].size for norm in ("s_norm", "g_norm")
             if f"agent/resource/{norm}/mean" in tensors]
    return [size for size in sizes if size]


def goal_commands_as_one_hot(tensors, kernels, commands, scale, source):
    """A goal-conditioned policy's checkpoint re-expressed for a network whose input is the same
    state followed by a one-hot goal of len(commands) entries, `scale` at the goal's entry (the
    goal-setting hierarchy's action policy and critic): goal k behaves as the checkpoint's policy
    holding its goal input at commands[k]. The checkpoint's first layer is
        h = W_s^T s_n + W_g^T g_n + b,   g_n = (g - mean_g) / std_g   (its goal normaliser),
    so a goal held at c_k adds the constant W_g^T g_n(c_k), which the one-hot input (scale at k)
    adds when its row k is W_g^T g_n(c_k) / scale. kernels: {first-layer kernel name: its units H}.
    Returns a copy of `tensors` whose named kernels [S + G, H] become [S + K, H]; CheckpointError if
    the checkpoint has no goal, a command's length is not its goal size, or a kernel is missing or
    of another shape."""
    sizes = checkpoint_input_sizes(tensors)
    if len(sizes) < 2:
        raise CheckpointError(f"{source}: InitGoalCommands needs a goal-conditioned policy's checkpoint (it has no goal)")
    state_size, goal_size = sizes
    bad = [list(c) for c in commands if len(c) != goal_size]
    if bad:
        raise CheckpointError(f"{source}: InitGoalCommands {bad[0]} has {len(bad[0])} entries, the checkpoint's goal {goal_size}")
    g_mean = tensors["agent/resource/g_norm/mean"]
    g_std = checked_tensor(tensors, "agent/resource/g_norm/std", (goal_size,), source)
    commands_n = (np.asarray(commands, np.float64) - g_mean) / g_std
    out = dict(tensors)
    for name, units in kernels.items():
        kernel = checked_tensor(tensors, name, (state_size + goal_size, units), source)
        rows = commands_n @ kernel[state_size:].astype(np.float64) / scale
        out[name] = np.concatenate([kernel[:state_size], rows.astype(kernel.dtype)])
    return out


def init_variables(variables, tensors, source, widen):
    """Assigns the tf.Variables of {name: variable} from another agent's checkpoint (--init_model_files):
    same name and shape, copied; a name in `widen` ({name: k}: a first layer whose inputs begin
    with the checkpoint's) whose kernel has fewer input rows in the checkpoint takes them for its
    first rows, keeps its own values in its last k rows and gets zeros in between; a name the
    checkpoint lacks keeps its value. Any other shape difference is a CheckpointError. Returns
    (copied, widened, kept) name lists."""
    copied, widened, kept = [], [], []
    for name, var in variables.items():
        if name not in tensors:
            kept.append(name)
            continue
        value, shape = tensors[name], tuple(var.shape)
        keep = widen.get(name)
        if keep is not None and value.ndim == 2 and value.shape[1] == shape[1] \
                and value.shape[0] < shape[0] and value.shape[0] + keep <= shape[0]:
            zeros = np.zeros((shape[0] - value.shape[0] - keep, shape[1]), value.dtype)
            value = np.concatenate([value, zeros, var.numpy()[shape[0] - keep:]])
            widened.append(name)
        else:
            checked_tensor(tensors, name, shape, source)
            copied.append(name)
        var.assign(value.astype(var.dtype.as_numpy_dtype))
    return copied, widened, kept


def _with_placeholders(scope, fields):
    """{scope/field: value} for count, mean and std, plus their `*_ph` copies."""
    return {f"{scope}/{name}{suffix}": fields[name] for name in NORM_FIELDS for suffix in ("", "_ph")}


def normalizer_tensors(scope, norm):
    """A normaliser as DeepMimic stores it: count (int32 [1], saturating), mean and std (float32),
    and the three placeholder variables of its TFNormalizer (copies of those)."""
    return _with_placeholders(scope, {
        "count": np.array([min(norm.count, np.iinfo(np.int32).max)], dtype=np.int32),
        "mean": norm.mean.astype(np.float32),
        "std": norm.std.astype(np.float32)})


def load_normalizer(norm, scope, tensors, source, mean_sq=None):
    mean = checked_tensor(tensors, f"{scope}/mean", (norm.size,), source)
    std = checked_tensor(tensors, f"{scope}/std", (norm.size,), source)
    count = checked_tensor(tensors, f"{scope}/count", (1,), source)
    norm.load(int(count[0]), mean.astype(np.float64), std.astype(np.float64), mean_sq)
