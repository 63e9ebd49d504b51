"""util/output_lock.py: one trainer per output folder. A second process on a folder whose lock a
live process holds gets one line naming the folder and the holder's PID; once the holder is killed
(SIGKILL: no clean-up runs) the folder is free again. DeepMimic_Optimizer takes the lock on rank 0
before it builds the world."""
import os
import subprocess
import sys

import pytest

from DeepMimic_Optimizer import main as optimizer_main
from util.output_lock import lock_output_path
from util.paths import project_root

WALK_ARGS = str(project_root() / "args/train_humanoid3d_walk_args.txt")
TRAINER = ("import sys, time; from util.cli import run_main; from util.output_lock import lock_output_path; "
           "status = run_main(lambda: lock_output_path(sys.argv[1]), 'trainer'); print('locked', flush=True); "
           "time.sleep(float(sys.argv[2])) if status == 0 else None; sys.exit(status)")


def start_trainer(folder, hold_seconds):
    return subprocess.Popen([sys.executable, "-c", TRAINER, str(folder), str(hold_seconds)], cwd=project_root(),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


@pytest.fixture
def holder(tmp_path):
    """A live process holding the lock on tmp_path/out."""
    folder = tmp_path / "out"
    folder.mkdir()
    proc = start_trainer(folder, 120)
    assert proc.stdout.readline() == "locked\n", proc.stderr.read()
    yield folder, proc
    proc.kill()
    proc.wait()


def test_a_second_trainer_is_refused_until_the_first_is_killed(holder):
    folder, first = holder
    second = start_trainer(folder, 0)
    _, err = second.communicate(timeout=60)
    assert second.returncode == 2
    assert err.splitlines() == [f"trainer: error: --output_path {folder}: another training run (PID {first.pid}) "
                                "is writing there; stop it first, or choose another output path"]
    first.kill()
    first.wait()
    third = start_trainer(folder, 0)
    out, err = third.communicate(timeout=60)
    assert third.returncode == 0 and out == "locked\n", err


def test_the_optimizer_takes_the_lock_before_building_the_world(holder, tmp_path):
    folder, first = holder
    with pytest.raises(ValueError, match=f"another training run \\(PID {first.pid}\\)"):
        optimizer_main(["--arg_file", WALK_ARGS, "--max_iters", "0", "--output_path", str(folder),
                        "--int_output_path", "", "--tensorboard", "false", "--model_files", "none"])
    assert not (folder / "args.txt").exists()


def test_the_same_process_may_take_its_own_lock_again(tmp_path):
    lock_output_path(tmp_path)
    lock_output_path(tmp_path)
    assert (tmp_path / "train.lock").read_text() == f"{os.getpid()}\n"
