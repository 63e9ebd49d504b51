"""One trainer per output folder: rank 0 of a training run holds an exclusive lock (flock) on
`<output_path>/train.lock` for the life of its process, so a second trainer started on the folder
stops at once with one line naming the folder and the PID holding it, instead of writing its
checkpoints and resume states between the first one's. The kernel releases the lock when the
process ends, however it ends (SIGKILL included), so a killed run never leaves a stale lock; the
file itself stays, holding the last holder's PID."""
import fcntl
import os

LOCK_NAME = "train.lock"

_held = {}      # folder (absolute) -> the open lock file, kept open for the process's life


def lock_output_path(path):
    """Takes the lock on the folder `path` (which exists) for the rest of this process; again for
    the same folder it does nothing. ValueError naming the folder and the holder's PID when
    another process holds it."""
    folder = os.path.abspath(path)
    if folder in _held:
        return
    lock_file = open(os.path.join(folder, LOCK_NAME), "a+")
    try:
        fcntl.flock(lock_file, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        lock_file.seek(0)
        holder = lock_file.read().strip() or "unknown"
        lock_file.close()
        raise ValueError(f"--output_path {path}: another training run (PID {holder}) is writing there; "
                         "stop it first, or choose another output path") from None
    lock_file.seek(0)
    lock_file.truncate()
    lock_file.write(f"{os.getpid()}\n")
    lock_file.flush()
    _held[folder] = lock_file
