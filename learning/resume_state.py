"""The resume state beside a checkpoint, `<prefix>.resume.npz`: what a resumed run needs that
DeepMimic never saved (optimiser slots, iteration, sample count, exploration parameters, exact
normaliser sums), written and read so that it always goes with the model it was saved with.

The pair is two writes, the checkpoint then the resume state, and a run may be killed between
them. The resume state names its model by the SHA-256 of the checkpoint's two files
(`checkpoint_digest`), and while it is written the checkpoint it replaces stays beside the new one
as `<prefix>.prev` (learning/checkpoint.py), so at every moment one of the two checkpoints is the
one the resume state on disk was saved with:
- killed before the new checkpoint is complete, or between the two writes: the resume state still
  names the previous checkpoint, `<prefix>.prev` (or `<prefix>` itself when the write had not
  begun); resuming loads that one, with a warning;
- killed after the resume state is written: `<prefix>` matches it (a stale `.prev` is replaced
  at the next save).
A run resumed from `.prev` keeps it through its next save (the unpaired `<prefix>` is removed
first), so a second kill there also finds its pair. Loading refuses, in one line naming both files
and the resume state's iteration, a resume state that neither checkpoint matches (files copied
from elsewhere, or a model saved over the pair outside this protocol). A resume state written
before the digest existed loads unchecked, with a one-line warning.
"""
import hashlib
import os

import numpy as np

from learning.checkpoint import (DATA_SUFFIX, INDEX_SUFFIX, PREV_TAG, CheckpointError, remove_checkpoint,
                                 write_checkpoint)
from util.atomic_write import write_with

RESUME_SUFFIX = ".resume.npz"
DIGEST_KEY = "checkpoint_digest"    # the SHA-256 of the checkpoint saved with the state


def write_resume_state(prefix, state):
    """Writes {key: number or array} to `<prefix>.resume.npz` atomically."""
    write_with(str(prefix) + RESUME_SUFFIX, lambda f: np.savez(f, **state))


def read_resume_state(prefix):
    path = str(prefix) + RESUME_SUFFIX
    if not os.path.isfile(path):
        raise CheckpointError(f"no resume state {path} beside the checkpoint {prefix}")
    with np.load(path) as data:
        return {k: data[k] for k in data.files}


def checkpoint_digest(prefix):
    """SHA-256 of a checkpoint's data and index files (hex), None when either is missing."""
    digests = []
    for suffix in (DATA_SUFFIX, INDEX_SUFFIX):
        try:
            with open(str(prefix) + suffix, "rb") as f:
                digests.append(hashlib.file_digest(f, "sha256").hexdigest())
        except FileNotFoundError:
            return None
    return "-".join(digests)


def _saved_digest(prefix):
    """The digest the resume state on disk names (None: no state, or one without a digest)."""
    path = str(prefix) + RESUME_SUFFIX
    if not os.path.isfile(path):
        return None
    with np.load(path) as data:
        return str(data[DIGEST_KEY]) if DIGEST_KEY in data.files else None


def write_checkpoint_and_resume_state(prefix, tensors, state):
    """Writes the checkpoint {TF1 name: array} at `prefix`, then its resume state naming it (see
    the module docstring for why a kill at any point leaves a pair that belongs together)."""
    prefix = str(prefix)
    prev = prefix + PREV_TAG
    saved = _saved_digest(prefix)
    if saved is not None and checkpoint_digest(prefix) != saved and checkpoint_digest(prev) == saved:
        remove_checkpoint(prefix)          # resumed from .prev: keep that one as the previous pair
    write_checkpoint(prefix, tensors, keep_previous=True)
    write_resume_state(prefix, {**state, DIGEST_KEY: checkpoint_digest(prefix)})
    remove_checkpoint(prev)


def paired_checkpoint(prefix):
    """(the checkpoint to load, the resume state) for resuming the run saved at `prefix`: the
    checkpoint the resume state was saved with, `prefix` or `prefix.prev` (with a warning).
    CheckpointError in one line when neither is."""
    prefix = str(prefix)
    state = read_resume_state(prefix)
    path = prefix + RESUME_SUFFIX
    if DIGEST_KEY not in state:
        print(f"warning: {path}: a resume state written before resume states named their checkpoint; "
              f"resuming with {prefix} unchecked", flush=True)
        return prefix, state
    saved, it = str(state[DIGEST_KEY]), int(state["iter"])
    if checkpoint_digest(prefix) == saved:
        return prefix, state
    prev = prefix + PREV_TAG
    if checkpoint_digest(prev) == saved:
        print(f"warning: {prefix} is not the checkpoint saved with its resume state {path} (iteration {it}): "
              f"the run stopped while saving; resuming from iteration {it} with {prev}, which is", flush=True)
        return prev, state
    raise CheckpointError(f"{prefix} is not the checkpoint saved with the resume state {path} (iteration {it}), "
                          f"nor is {prev}: the model was written after that state or comes from another run; "
                          f"start afresh from it with --model_files {prefix} without --resume")
