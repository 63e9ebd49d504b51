"""Entry points: a full disk or an unusable output path ends in one line, not a traceback."""
import errno
import os

from DeepMimic_Optimizer import copy_run_inputs
from tests.toy_env import toy_args, write_agent_file
from util.cli import run_main


def test_output_path_that_is_a_file_is_one_line(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("DEEPMIMIC_TRACEBACK", raising=False)
    occupied = tmp_path / "output"
    occupied.write_text("not a folder")
    status = run_main(lambda: os.makedirs(occupied, exist_ok=True), "prog")
    err = capsys.readouterr().err
    assert status == 1
    assert err == f"prog: error: cannot use {occupied}: File exists\n"


def test_full_disk_is_one_line(capsys, monkeypatch):
    monkeypatch.delenv("DEEPMIMIC_TRACEBACK", raising=False)

    def write_on_full_disk():
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), "output/agent0_model.ckpt")

    assert run_main(write_on_full_disk, "prog") == 1
    assert capsys.readouterr().err == "prog: error: cannot use output/agent0_model.ckpt: No space left on device\n"


def test_missing_file_stays_a_bad_input_error(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("DEEPMIMIC_TRACEBACK", raising=False)
    assert run_main(lambda: open(tmp_path / "nope.txt").read(), "prog") == 2
    assert capsys.readouterr().err.startswith("prog: error: [Errno 2] No such file")


def test_optimizer_output_path_that_is_a_file(tmp_path, capsys, monkeypatch):
    """The issue's case: --output_path names an existing file; the run's first write says so."""
    monkeypatch.delenv("DEEPMIMIC_TRACEBACK", raising=False)
    occupied = tmp_path / "out"
    occupied.write_text("a file, not a folder")
    args = toy_args(write_agent_file(tmp_path / "agent.txt"), "--output_path", occupied)
    assert run_main(lambda: copy_run_inputs(args, str(occupied)), "DeepMimic_Optimizer.py") == 1
    assert capsys.readouterr().err == f"DeepMimic_Optimizer.py: error: cannot use {occupied}: File exists\n"
    assert occupied.read_text() == "a file, not a folder"
