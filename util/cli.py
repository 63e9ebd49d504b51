"""What every entry point does first (process environment) and last (errors as one line)."""
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


def run_main(main, prog):
    """Runs main(); bad input (any ValueError or missing file: broken args, clip, character,
    agent or checkpoint files) is printed as `prog: error: ...` on one line with exit status 2,
    and under MPI ends every rank. DEEPMIMIC_TRACEBACK=1 shows the traceback instead."""
    try:
        return main() or 0
    except (ValueError, FileNotFoundError) as err:
        if os.environ.get("DEEPMIMIC_TRACEBACK"):
            raise
        message = str(err).splitlines()[0] if str(err) else type(err).__name__
        print(f"{prog}: error: {message}", file=sys.stderr, flush=True)
        if "mpi4py.MPI" in sys.modules:
            from util import mpi_util
            mpi_util.abort(2)
        return 2
    except OSError as err:
        if os.environ.get("DEEPMIMIC_TRACEBACK"):
            raise
        print(f"{prog}: error: {os_error_line(err)}", file=sys.stderr, flush=True)
        if "mpi4py.MPI" in sys.modules:
            from util import mpi_util
            mpi_util.abort(1)
        return 1


def os_error_line(err):
    """One line for a failed write or read (full disk, unwritable or occupied output path):
    the file and the system's reason, e.g. `cannot use output/x: Not a directory`."""
    where = err.filename if err.filename is not None else "a file"
    return f"cannot use {where}: {err.strerror or err}"
