"""What every entry point does first (process environment) and last (errors as one line)."""
import errno
import os
import sys

QUIET_ENV = {
    "TF_CPP_MIN_LOG_LEVEL": "2",       # no TensorFlow info/warning chatter
    "TF_ENABLE_ONEDNN_OPTS": "0",      # ... and no oneDNN banner
    # One BLAS thread per process: a multi-threaded OpenBLAS makes the batch-1 policy ~10x slower
    # when ranks share cores. Only effective before numpy is first imported.
    "OPENBLAS_NUM_THREADS": "1",
}


def configure_process_env():
    for key, value in QUIET_ENV.items():
        os.environ.setdefault(key, value)


class RunError(RuntimeError):
    """A training run that cannot go on (non-finite updates, ranks out of sync): reported by
    run_main as one line, exit status 1."""


# Failures of the machine rather than of the input: a full disk, an unwritable or read-only path.
STORAGE_ERRNOS = {errno.ENOSPC, errno.EDQUOT, errno.EACCES, errno.EPERM, errno.EROFS}


def _fail(prog, message, status):
    print(f"{prog}: error: {message}", file=sys.stderr, flush=True)
    if "mpi4py.MPI" in sys.modules:
        from util import mpi_util
        mpi_util.abort(status)
    return status


def run_main(main, prog):
    """Runs main(); bad input (any ValueError or missing file: broken args, clip, character,
    agent or checkpoint files) is printed as `prog: error: ...` on one line with exit status 2,
    and under MPI ends every rank. A full disk or an unwritable path met while running (a
    checkpoint, a log) is one line naming the file, status 1 (files are written to a temporary
    name then renamed, so the previous version stays readable). DEEPMIMIC_TRACEBACK=1 shows the
    traceback instead. A KeyboardInterrupt (a second Ctrl-C, util/stop_request.py) is one line
    with status 130."""
    try:
        return main() or 0
    except KeyboardInterrupt:
        print(f"{prog}: interrupted", file=sys.stderr, flush=True)
        return 130
    except (ValueError, FileNotFoundError) as err:
        if os.environ.get("DEEPMIMIC_TRACEBACK"):
            raise
        return _fail(prog, str(err).splitlines()[0] if str(err) else type(err).__name__, 2)
    except RunError as err:
        return _fail(prog, str(err), 1)
    except OSError as err:
        if err.errno not in STORAGE_ERRNOS or os.environ.get("DEEPMIMIC_TRACEBACK"):
            raise
        return _fail(prog, f"{err.filename or 'writing output'}: {err.strerror}", 1)
