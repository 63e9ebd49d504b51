"""Atomic file writes: the data goes to a temporary file beside the target, is flushed to disk,
then replaces the target by a rename, so a reader, or a run killed at any moment, finds the old
file or the new one, never a part of one."""
import json
import os
from contextlib import contextmanager
from pathlib import Path


def temp_path_beside(path):
    """A temporary name in path's folder (created if needed), ending like path so that writers
    that pick a format by the extension (images, videos) see the same one."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    return path.with_name(f".{path.stem}.{os.getpid()}.tmp{path.suffix}")


def replace_with(tmp, path):
    """Flushes tmp to disk and renames it onto path."""
    with open(tmp, "rb+") as f:
        os.fsync(f.fileno())
    os.replace(tmp, path)


@contextmanager
def atomic_path(path):
    """`with atomic_path(p) as tmp:` write tmp; on leaving it replaces p (on an error it is removed)."""
    tmp = temp_path_beside(path)
    try:
        yield tmp
        replace_with(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def write_bytes(path, data):
    with atomic_path(path) as tmp:
        tmp.write_bytes(data)


def write_text(path, text):
    write_bytes(path, text.encode())


def write_json(path, data, indent=1):
    write_text(path, json.dumps(data, indent=indent) + "\n")


def write_with(path, write):
    """Calls write(f) on the temporary binary file, then replaces path."""
    with atomic_path(path) as tmp, open(tmp, "wb") as f:
        write(f)
