"""The arguments an entry point reads itself, outside the world, and the unused-argument warning.

One args file serves the viewer (DeepMimic.py), the optimizer (DeepMimic_Optimizer.py) and the
launcher (mpi_run.py), so a key that only another entry point reads is not reported as unused.
"""
import sys

from util import mpi_util

VIEWER_KEYS = frozenset({
    "headless", "record", "record_seconds", "screenshot", "episodes", "stats", "cam_track_mode", "msaa",
    "record_demos", "demo_actions", "demo_ctrl_file", "demo_episode_time", "success_body_pos_err",
    "policy_file"})
OPTIMIZER_KEYS = frozenset({"max_samples", "max_iters", "output_path", "int_output_path"})
LAUNCHER_KEYS = frozenset({"num_workers", "hostfile"})
ENTRY_POINT_KEYS = VIEWER_KEYS | OPTIMIZER_KEYS | LAUNCHER_KEYS


def warn_unused_args(arg_parser):
    """Rank 0 prints one line to stderr naming the keys given but read by nobody (call it once the
    world is built): `warning: args/x.txt: unused argument --tme_lim_min (did you mean
    --time_lim_min?)`."""
    line = arg_parser.unused_warning(ENTRY_POINT_KEYS)
    if line and mpi_util.is_root():
        print(line, file=sys.stderr, flush=True)
