"""Evaluations in a child process of their own: a fresh world built from an args file with a fixed
seed and a checkpoint, so every evaluation of a run sees the same initial states and a crash or a
TF graph of one evaluation never touches the caller. The child prints one RESULT line (JSON)."""
import json
import os
import subprocess
import sys

from util.paths import project_root

PYTHON = sys.executable
RESULT_PREFIX = "RESULT "


def child_env():
    return dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2", PYTHONUNBUFFERED="1", OPENBLAS_NUM_THREADS="1")


def run_worker(module, spec, timeout=3600, preexec_fn=None):
    """Runs `python -m module --worker SPEC` in the project root on spec (a JSON-able dict); its RESULT.
    preexec_fn runs in the child before it starts (e.g. die with the parent). SystemExit with the
    tail of the child's output when it fails."""
    cmd = [PYTHON, "-m", module, "--worker", json.dumps(spec)]
    proc = subprocess.run(cmd, cwd=project_root(), env=child_env(), capture_output=True, text=True, timeout=timeout,
                          preexec_fn=preexec_fn)
    for line in reversed(proc.stdout.splitlines()):
        if line.startswith(RESULT_PREFIX):
            return json.loads(line[len(RESULT_PREFIX):])
    tail = "\n".join((proc.stderr or proc.stdout).strip().splitlines()[-15:])
    raise SystemExit(f"evaluation worker failed (exit code {proc.returncode}):\n{tail}")


def build_eval_world(spec):
    """The world of a worker: the training args, a fixed seed, `model` loaded (or none)."""
    from app.build import build_world
    from util.arg_parser import load_args

    scratch = spec["scratch"]   # output_path of the worker's world (nothing is written there)
    args = load_args(["--arg_file", spec["arg_file"], "--rand_seed", str(spec["seed"]),
                      "--model_files", spec["model"], "--output_path", scratch,
                      "--int_output_path", f"{scratch}/intermediate", *spec["agent_args"],
                      *spec.get("extra_args", [])])
    return build_world(args)
