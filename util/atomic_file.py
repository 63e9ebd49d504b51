"""Files written whole or not at all: a temporary file in the same folder, synced, then renamed."""
import os
from pathlib import Path


def write_atomic(path, write):
    """Calls write(f) on a temporary binary file beside `path`, then renames it to `path` (the
    folder is created if needed); a crash leaves the old file, never a partial one."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open(tmp, "wb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()
