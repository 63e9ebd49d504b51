"""Oracles for differential tests: DeepMimic's own code, never imported by the product.

- wheel_port: the older port in the pybullet wheel (pybullet_envs.deep_mimic), which carries
  DeepMimic's Python learning code (TF1) and a Python state builder for the 2018 layout. It is
  imported with run-time patches, in a process of its own (its TF1 graph mode must not touch a
  process that runs our TF2 code).
"""
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]


def run_oracle(script, workdir, timeout=300):
    """Runs tests/oracle/<script> in a process of its own on workdir/in.npz; its workdir/out.npz
    as {name: array}. Fails the calling test with the script's stderr tail."""
    workdir = Path(workdir)
    proc = subprocess.run([sys.executable, os.path.join(ROOT, "tests", "oracle", script),
                           str(workdir / "in.npz"), str(workdir / "out.npz")],
                          cwd=ROOT, capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, proc.stderr[-3000:]
    with np.load(workdir / "out.npz") as data:
        return {k: data[k] for k in data.files}
