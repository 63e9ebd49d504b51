"""The skill command's training child and signals (app/skill_training.run_logged): the child writes
its log itself, so it stops cleanly (after its iteration) when the skill command dies, even by
SIGKILL; SIGTERM to the skill command stops the child as Ctrl-C does and waits for it. A stand-in
child (a loop of "iterations" that stops on SIGINT / SIGTERM after the current one) keeps these
fast; tests/test_stop_signals.py drills the real optimizer."""
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from app.skill_training import run_logged

ROOT = Path(__file__).resolve().parent.parent

CHILD = textwrap.dedent('''
    import signal, sys, time
    stop = []
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda s, f: stop.append(signal.Signals(s).name))
    i = 0
    while not stop:
        print(f"iteration {i}", flush=True)
        i += 1
        time.sleep(0.05)
    time.sleep(0.3)                               # the iteration under way
    print(f"stopped by {stop[0]} after iteration {i - 1}", flush=True)
    open(sys.argv[1], "w").write(stop[0])         # the final checkpoint
    sys.exit(130)
''')

PARENT = textwrap.dedent('''
    import sys
    from app.skill_training import run_logged, stop_on_signals
    stop_on_signals()
    try:
        code = run_logged([sys.executable, sys.argv[1], sys.argv[2]], sys.argv[3], echo=True)
    except KeyboardInterrupt as e:
        print(f"skill command stopped ({e})", flush=True)
        sys.exit(130)
''')


def _start_parent(tmp_path):
    (tmp_path / "child.py").write_text(CHILD)
    (tmp_path / "parent.py").write_text(PARENT)
    log, checkpoint = tmp_path / "train_stdout.txt", tmp_path / "checkpoint"
    parent = subprocess.Popen([sys.executable, str(tmp_path / "parent.py"), str(tmp_path / "child.py"),
                               str(checkpoint), str(log)], cwd=ROOT, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True, env=dict(os.environ, PYTHONPATH=str(ROOT)))
    end = time.time() + 60
    while not (log.is_file() and "iteration 3" in log.read_text()):
        assert time.time() < end and parent.poll() is None, parent.communicate()[0]
        time.sleep(0.05)
    return parent, log, checkpoint


def _wait_for(path, seconds=10):
    end = time.time() + seconds
    while not path.is_file() and time.time() < end:
        time.sleep(0.05)
    return path.is_file()


def test_the_echo_prints_what_the_child_appends_to_its_log(tmp_path, capsys):
    log = tmp_path / "train_stdout.txt"
    log.write_text("an earlier leg\n")
    code = run_logged([sys.executable, "-c", "print('first'); import sys; print('second', file=sys.stderr)"],
                      log, echo=True, poll_seconds=0.01)
    assert code == 0
    assert log.read_text() == "an earlier leg\nfirst\nsecond\n"
    assert capsys.readouterr().out == "first\nsecond\n"


def test_a_child_whose_skill_command_is_killed_stops_after_its_iteration_and_logs_it(tmp_path):
    parent, log, checkpoint = _start_parent(tmp_path)
    parent.kill()                                 # SIGKILL: no handler runs in the skill command
    parent.communicate()                          # its stdout pipe closes with it
    assert _wait_for(checkpoint), log.read_text()[-500:]
    assert checkpoint.read_text() == "SIGTERM"    # the parent-death signal
    assert "stopped by SIGTERM after iteration" in log.read_text()


def test_sigterm_to_the_skill_command_stops_the_child_as_ctrl_c_and_waits_for_it(tmp_path):
    parent, log, checkpoint = _start_parent(tmp_path)
    parent.send_signal(signal.SIGTERM)
    output, _ = parent.communicate(timeout=30)
    assert parent.returncode == 130, output
    assert checkpoint.read_text() == "SIGINT"     # written before the skill command exited
    assert "skill command stopped (SIGTERM)" in output
    assert "stopped by SIGINT after iteration" in output   # the child's last line, echoed


RANKS = textwrap.dedent('''
    import signal, sys, time
    stop = []
    signal.signal(signal.SIGUSR1, lambda s, f: stop.append(s))   # what mpi_run passes on
    print("started", file=sys.stderr, flush=True)
    while not stop:
        time.sleep(0.05)
    open(sys.argv[1], "w").write("final checkpoint")
''')

LAUNCHER = textwrap.dedent('''
    import sys
    from mpi_run import run_mpiexec
    sys.exit(run_mpiexec([sys.executable, sys.argv[1], sys.argv[2]]))
''')


def test_mpi_run_passes_a_stop_on_when_its_own_stderr_is_a_closed_pipe(tmp_path):
    """mpi_run under a parent that died: its stderr (a pipe) is closed, and a SIGTERM must still
    reach the ranks (as SIGUSR1, the stop after the iteration) and mpi_run wait for them."""
    (tmp_path / "ranks.py").write_text(RANKS)
    (tmp_path / "launcher.py").write_text(LAUNCHER)
    checkpoint = tmp_path / "checkpoint"
    launcher = subprocess.Popen([sys.executable, str(tmp_path / "launcher.py"), str(tmp_path / "ranks.py"),
                                 str(checkpoint)], cwd=ROOT, stderr=subprocess.PIPE, text=True,
                                env=dict(os.environ, PYTHONPATH=str(ROOT)))
    try:
        assert launcher.stderr.readline() == "started\n"
        launcher.stderr.close()                   # the parent reading mpi_run's stderr is gone
        launcher.send_signal(signal.SIGTERM)
        launcher.wait(timeout=30)
        assert _wait_for(checkpoint) and checkpoint.read_text() == "final checkpoint"
    finally:                                      # no stand-in rank left running if it never heard
        subprocess.run(["pkill", "-f", str(tmp_path / "ranks.py")])
    assert launcher.returncode == 128 + signal.SIGTERM
