"""pybullet's build banner once per run (silenced on MPI ranks > 0) and no TensorFlow/CUDA noise
on stderr of the entry points."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

from util.cli import launched_rank

ROOT = Path(__file__).resolve().parent.parent
BANNER = "pybullet build time"
IMPORT_AS_RANK = ("import sys; from util.cli import configure_process_env; configure_process_env(); "
                  "import pybullet; print('done'); sys.stderr.write('err kept')")


def run_as_rank(rank):
    env = {k: v for k, v in os.environ.items() if k not in ("OMPI_COMM_WORLD_RANK", "PMI_RANK")}
    env["OMPI_COMM_WORLD_RANK"] = str(rank)
    return subprocess.run([sys.executable, "-c", IMPORT_AS_RANK], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=120)


def test_launched_rank_reads_mpiexec_variables(monkeypatch):
    monkeypatch.delenv("OMPI_COMM_WORLD_RANK", raising=False)
    monkeypatch.delenv("PMI_RANK", raising=False)
    assert launched_rank() == 0
    monkeypatch.setenv("PMI_RANK", "3")
    assert launched_rank() == 3
    monkeypatch.setenv("OMPI_COMM_WORLD_RANK", "1")
    assert launched_rank() == 1


def test_banner_only_on_rank_zero_and_stdout_kept():
    """pybullet writes the banner to stderr at import; rank 1 loses it, and keeps stdout and stderr."""
    rank0, rank1 = run_as_rank(0), run_as_rank(1)
    assert rank0.returncode == 0 and rank1.returncode == 0, rank1.stderr
    assert rank0.stderr.count(BANNER) == 1
    assert BANNER not in rank1.stdout + rank1.stderr
    assert rank1.stdout == "done\n" and rank1.stderr == "err kept"


# What TensorFlow prints at import without QUIET_ENV on this machine (absl's preamble and
# cpu_feature_guard.cc's line), plus the CUDA/oneDNN lines other builds print.
NOISE = ("cuInit", "cuda", "tensorflow/", "oneDNN", "TF-TRT", "absl::", "cpu_feature_guard", "TensorFlow binary")


@pytest.mark.slow
@pytest.mark.mpi
def test_two_worker_run_prints_banner_once_and_no_tf_noise(tmp_path):
    from tests.test_learning_entry_points import SMOKE_AGENT
    agent_file = tmp_path / "agent.txt"
    agent_file.write_text(SMOKE_AGENT)
    cmd = [sys.executable, "mpi_run.py", "--num_workers", "2", "--arg_file", "args/train_humanoid3d_walk_args.txt",
           "--agent_files", str(agent_file), "--output_path", str(tmp_path / "out"), "--int_output_path", "",
           "--max_iters", "1"]
    env = {k: v for k, v in os.environ.items() if not k.startswith("TF_")}
    run = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    assert (run.stdout + run.stderr).count(BANNER) == 1
    noise = [line for line in run.stderr.splitlines() if any(n.lower() in line.lower() for n in NOISE)]
    assert noise == []


NOISY_MODULE = """import os, sys
os.write(2, b"WARNING: All log messages before absl::InitializeLog() is called are written to STDERR\\n")
os.write(2, b"I0000 port.cc:153] oneDNN custom operations are on. You may see slightly different results\\n")
os.write(2, b"a real warning\\n")
sys.stderr.write("from python\\n")
if os.environ.get("NOISY_FAIL"):
    raise ImportError("noisy broke")
"""


@pytest.mark.parametrize("fail", [False, True])
def test_import_quietly_drops_only_the_notices(tmp_path, fail):
    """TensorFlow's import notices (util/cli.TF_IMPORT_NOTICES) go; every other line written to
    fd 2 during the import is kept, in order, and a failing import still raises."""
    (tmp_path / "noisy.py").write_text(NOISY_MODULE)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tmp_path), str(ROOT)]), NOISY_FAIL="1" if fail else "")
    code = "from util.cli import import_quietly; import_quietly('noisy'); print('imported')"
    run = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    assert run.stderr.startswith("a real warning\nfrom python\n")
    if fail:
        assert run.returncode == 1 and "ImportError: noisy broke" in run.stderr and "imported" not in run.stdout
    else:
        assert run.returncode == 0 and run.stderr == "a real warning\nfrom python\n" and run.stdout == "imported\n"


# app/skill_training.main with its training loop replaced by what the loop does first in the
# launching process (reading a resume state imports TensorFlow through learning/checkpoint.py).
SKILL_MAIN = """import sys
from app import skill_training
def run(cfg, curve):
    import learning.checkpoint
    print("tensorflow" in sys.modules)
skill_training.run = run
sys.exit(skill_training.main(sys.argv[1:]))
"""


def test_skill_training_process_prints_no_tf_notices(tmp_path):
    """scripts/train_skill.py and tests/bench/time_to_skill.py (both app/skill_training.main) import
    TensorFlow in their own process: without its notices, as the ranks do."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("TF_")}
    cmd = [sys.executable, "-c", SKILL_MAIN, "--arg_file", "args/train_humanoid3d_walk_args.txt",
           "--output", str(tmp_path / "run")]
    run = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.splitlines()[-1] == "True"
    noise = [line for line in run.stderr.splitlines() if any(n.lower() in line.lower() for n in NOISE)]
    assert noise == []
