"""What every entry point does first (process environment) and last (errors as one line)."""
import errno
import importlib
import os
import sys
import tempfile

QUIET_ENV = {
    "TF_CPP_MIN_LOG_LEVEL": "2",       # no TensorFlow info/warning chatter
    # TensorFlow's oneDNN kernels stay on, its default: they make the update cheaper and run a
    # bfloat16 discriminator on the CPU's bfloat16 instructions (docs/bench/onednn.json);
    # TF_ENABLE_ONEDNN_OPTS=0 in the environment turns them off.
    # One BLAS thread per process: a multi-threaded OpenBLAS makes the batch-1 policy ~10x slower
    # when ranks share cores. Only effective before numpy is first imported.
    "OPENBLAS_NUM_THREADS": "1",
}


# Rank variables set by mpiexec (Open MPI, then MPICH/PMI), read before mpi4py is imported.
MPI_RANK_VARS = ("OMPI_COMM_WORLD_RANK", "PMI_RANK")


def launched_rank():
    """This process's MPI rank as mpiexec announced it in the environment (0 without MPI)."""
    for var in MPI_RANK_VARS:
        if os.environ.get(var, "").isdigit():
            return int(os.environ[var])
    return 0


def import_pybullet_silently():
    """Imports pybullet without the "pybullet build time: ..." banner its C code writes to stderr
    (unbuffered) while the module is imported (import_quietly)."""
    import_quietly("pybullet", notices=("pybullet build time",))


# What TensorFlow writes to fd 2 while it is imported, before absl's logging is set up and so
# whatever TF_CPP_MIN_LOG_LEVEL says: absl's preamble and the notice that oneDNN is on.
TF_IMPORT_NOTICES = ("WARNING: All log messages before absl::InitializeLog() is called are written to STDERR",
                     "oneDNN custom operations are on.")


def import_quietly(module_name, notices=TF_IMPORT_NOTICES):
    """Imports module_name with fd 2 captured, then writes back every captured line that holds none
    of `notices`; an import error is still raised, after its output is written back."""
    sys.stderr.flush()
    saved_fd = os.dup(2)
    with tempfile.TemporaryFile() as captured:
        try:
            os.dup2(captured.fileno(), 2)
            importlib.import_module(module_name)
        finally:
            sys.stderr.flush()
            os.dup2(saved_fd, 2)
            os.close(saved_fd)
            captured.seek(0)
            lines = captured.read().decode(errors="replace").splitlines(keepends=True)
            sys.stderr.write("".join(line for line in lines if not any(n in line for n in notices)))
            sys.stderr.flush()


def configure_process_env():
    """Quiet environment for TensorFlow and BLAS, then TensorFlow imported without its notices; on
    MPI ranks > 0, pybullet's build banner is swallowed so that a run prints it once."""
    for key, value in QUIET_ENV.items():
        os.environ.setdefault(key, value)
    import_quietly("tensorflow")
    if launched_rank() > 0:
        import_pybullet_silently()


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
