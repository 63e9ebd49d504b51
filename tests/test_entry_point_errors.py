"""Bad input to the entry points ends with one line naming the problem, exit status 2."""
import subprocess
import sys
from pathlib import Path

import pytest

import mpi_run

from util.paths import project_root


def run(script, *args, full=False):
    """(exit status, the stderr lines holding `error:`), plus the whole stderr with full=True."""
    proc = subprocess.run([sys.executable, str(project_root() / script), *args], capture_output=True,
                          text=True, timeout=120, cwd=project_root())
    errors = [line for line in proc.stderr.splitlines() if "error:" in line]
    return (proc.returncode, errors, proc.stderr) if full else (proc.returncode, errors)


@pytest.mark.parametrize("script", ["DeepMimic_Optimizer.py", "mpi_run.py"])
def test_missing_arg_file(script):
    code, errors = run(script, "--arg_file", "args/no_such_file.txt")
    assert code == 2
    assert errors == [f"{script}: error: args/no_such_file.txt: argument file not found"]


def test_missing_scene_key():
    code, errors = run("DeepMimic_Optimizer.py", "--max_iters", "1")
    assert code == 2 and errors == ["DeepMimic_Optimizer.py: error: missing required argument --scene"]


def test_missing_motion_file_names_it():
    code, errors = run("DeepMimic_Optimizer.py", "--arg_file", "args/train_humanoid3d_walk_args.txt",
                       "--motion_file", "data/motions/no_such_clip.txt", "--max_iters", "1")
    assert code == 2 and len(errors) == 1 and "data/motions/no_such_clip.txt" in errors[0]


def test_wrong_type_names_key_and_file():
    code, errors = run("DeepMimic_Optimizer.py", "--arg_file", "args/train_humanoid3d_walk_args.txt",
                       "--num_sim_substeps", "two")
    assert code == 2 and len(errors) == 1 and "--num_sim_substeps expects an integer" in errors[0]


def test_num_workers_must_be_positive():
    proc = subprocess.run([sys.executable, "mpi_run.py", "--num_workers", "0"], capture_output=True,
                          text=True, cwd=project_root())
    assert proc.returncode != 0 and "--num_workers expects a positive integer" in proc.stderr


def test_missing_extra_clip_names_it_and_make_data_extra():
    clip = "data/motions/long/humanoid3d_long_zombie.txt"
    if (project_root() / clip).is_file():
        pytest.skip(f"{clip} was fetched (make data-extra)")
    code, errors = run("DeepMimic_Optimizer.py", "--arg_file", "args/train_amp_target_humanoid3d_zombie_args.txt",
                       "--max_iters", "1")
    assert code == 2 and len(errors) == 1
    assert clip in errors[0] and "`make data-extra` downloads it" in errors[0]


def test_output_path_that_is_a_file(tmp_path):
    taken = tmp_path / "taken"
    taken.write_text("not a directory\n")
    code, errors = run("DeepMimic_Optimizer.py", "--arg_file", "args/train_humanoid3d_walk_args.txt",
                       "--output_path", str(taken), "--max_iters", "1")
    assert code == 2 and errors == [f"DeepMimic_Optimizer.py: error: --output_path {taken}: exists and is not a directory"]
    assert taken.read_text() == "not a directory\n"


def test_a_full_disk_is_one_line_and_status_1(capsys):
    """A storage failure met while running (here: a checkpoint's temporary file on a full disk)."""
    import errno

    from util.cli import run_main

    def main():
        raise OSError(errno.ENOSPC, "No space left on device", "out/.agent0_model.ckpt.tmp")
    assert run_main(main, "DeepMimic_Optimizer.py") == 1
    assert capsys.readouterr().err.splitlines() == [
        "DeepMimic_Optimizer.py: error: out/.agent0_model.ckpt.tmp: No space left on device"]

    def other():
        raise OSError(errno.EIO, "Input/output error")
    with pytest.raises(OSError):       # not a storage-space or permission problem: a real bug's traceback
        run_main(other, "DeepMimic_Optimizer.py")


def broken_files(tmp_path):
    """A binary character file, a clip with a NaN, a truncated controller, a garbage demo file, an
    agent file that is not JSON, an args file with an open quote and a checkpoint of garbage."""
    char = tmp_path / "char.txt"
    char.write_bytes(b"\x89PNG\r\n\x1a\n\xff\xfe garbage")
    clip = tmp_path / "clip.txt"
    clip.write_text('{"Loop": "wrap", "Frames": [[0.03, NaN]]}')
    ctrl = tmp_path / "ctrl.txt"
    ctrl.write_text((project_root() / "data/controllers/humanoid3d_ctrl.txt").read_text()[:200])
    demos = tmp_path / "demos.npz"
    demos.write_bytes(b"PK\x03\x04 not a zip")
    agent = tmp_path / "agent.txt"
    agent.write_text('{"AgentType": "PPO", "ActorNet": ')
    args = tmp_path / "args.txt"
    args.write_text((project_root() / "args/train_humanoid3d_walk_args.txt").read_text() + '\n--scene "imitate\n')
    model = tmp_path / "model.ckpt"
    for suffix in (".index", ".data-00000-of-00001"):
        Path(str(model) + suffix).write_bytes(b"\x00garbage" * 7)
    return {"char": char, "clip": clip, "ctrl": ctrl, "demos": demos, "agent": agent, "args": args,
            "model": model}


def assert_one_line(script, path, code, errors):
    assert code == 2, errors
    assert len(errors) == 1 and errors[0].startswith(f"{script}: error: {path}"), errors


@pytest.mark.parametrize("key, override", [("char", "--character_files"), ("clip", "--motion_file"),
                                           ("ctrl", "--char_ctrl_files")])
def test_optimizer_broken_data_file(tmp_path, key, override):
    path = broken_files(tmp_path)[key]
    code, errors = run("DeepMimic_Optimizer.py", "--arg_file", "args/train_humanoid3d_walk_args.txt",
                       override, str(path), "--max_iters", "1")
    assert_one_line("DeepMimic_Optimizer.py", path, code, errors)


def test_optimizer_broken_demo_file(tmp_path):
    path = broken_files(tmp_path)["demos"]
    code, errors = run("DeepMimic_Optimizer.py", "--arg_file", "args/train_gail_humanoid3d_walk_args.txt",
                       "--demo_file", str(path), "--max_iters", "1")
    assert_one_line("DeepMimic_Optimizer.py", path, code, errors)


def test_viewer_broken_clip(tmp_path):
    """The viewer (headless screenshot) reports a broken clip as the other entry points do."""
    path = broken_files(tmp_path)["clip"]
    code, errors = run("DeepMimic.py", "--arg_file", "args/kin_char_args.txt", "--motion_file", str(path),
                       "--headless", "--screenshot", str(tmp_path / "x.png"))
    assert_one_line("DeepMimic.py", path, code, errors)


# (broken file, the arguments naming it) for the drill under mpi_run: every kind a run reads.
MPI_DRILL = [("args", "--arg_file"), ("clip", "--motion_file"), ("char", "--character_files"),
             ("ctrl", "--char_ctrl_files"), ("agent", "--agent_files"), ("model", "--model_files")]


@pytest.mark.slow
@pytest.mark.parametrize("key, option", MPI_DRILL, ids=[key for key, _ in MPI_DRILL])
def test_mpi_run_broken_file_is_one_line(tmp_path, key, option):
    """Under `mpi_run.py --num_workers 2` every rank meets the bad file: the run ends (no hang),
    status 2, one error line naming the file (not one per rank), no traceback, no MPI banner."""
    path = broken_files(tmp_path)[key]
    base = [] if key == "args" else ["--arg_file", "args/train_humanoid3d_walk_args.txt"]
    code, errors, stderr = run("mpi_run.py", "--num_workers", "2", *base, option, str(path), "--max_iters", "1",
                               "--output_path", str(tmp_path / "out"), full=True)
    assert_one_line("mpi_run.py" if key == "args" else "DeepMimic_Optimizer.py", path, code, errors)
    assert "Traceback" not in stderr and "MPI_ABORT" not in stderr, stderr


ABORT_STDERR = """DeepMimic_Optimizer.py: error: clip.txt: NaN is not a finite number
DeepMimic_Optimizer.py: error: clip.txt: NaN is not a finite number
--------------------------------------------------------------------------
MPI_ABORT was invoked on rank 1 in communicator MPI_COMM_WORLD
  Errorcode: 2
--------------------------------------------------------------------------
--------------------------------------------------------------------------
prterun has exited due to process rank 1 with PID 0 on node vm calling
"abort". This may have caused other processes in the application to be
--------------------------------------------------------------------------
"""


def test_rank_stderr_filter_keeps_one_error_and_drops_the_abort_banner():
    lines = ABORT_STDERR.splitlines(keepends=True)
    assert list(mpi_run.filter_rank_stderr(lines)) == lines[:1]


def test_rank_stderr_filter_drops_a_banner_forwarded_before_the_errors_and_nul_bytes():
    """Seen under load: the banner first, then the ranks' lines, one with a NUL in front."""
    lines = ABORT_STDERR.splitlines(keepends=True)
    reordered = [*lines[2:], "\x00" + lines[0], lines[1], "\x00"]
    assert list(mpi_run.filter_rank_stderr(reordered)) == lines[:1]


def test_rank_stderr_filter_keeps_banners_without_an_error_and_other_lines():
    """A rank that crashed without our one-line error keeps Open MPI's explanation, at the end."""
    banners = ABORT_STDERR.splitlines(keepends=True)[2:]
    lines = ["step 1\n", *banners, "step 2\n"]
    assert list(mpi_run.filter_rank_stderr(lines)) == ["step 1\n", "step 2\n", *banners]
