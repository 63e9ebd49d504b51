"""DeepMimicEnv: DeepMimic's environment, built from the arguments.

DeepMimic's Python side built `DeepMimicEnv(args, enable_draw)`, a class forwarding every Env call
to its C++ core. Here the scenes are Python and implement the Env API themselves (env/env.py,
env/scenes/), so DeepMimicEnv builds the scene --scene names and returns it, reset and ready: there
is nothing left to forward.

Args read here: scene (required; env/scenes/scene_builder.py), rand_seed (the scene's randomness
when no `seed` is given; offset by 1000 x the MPI rank so ranks draw different resets, as
DeepMimic seeds them). Everything else belongs to the scene (num_update_substeps: Scene).
"""
import numpy as np

from env.scenes.scene_builder import scene_class
from util import mpi_util


def DeepMimicEnv(arg_parser, enable_draw=False, seed=None):  # noqa: N802 (DeepMimic's constructor call)
    """The scene the args name, reset; enable_draw: a viewer draws it (Env.enable_draw)."""
    if seed is None and arg_parser.has_key("rand_seed"):
        seed = mpi_util.rank_seed(arg_parser.parse_int("rand_seed", at_least=0))
    env = scene_class(arg_parser.parse_string("scene", required=True))(arg_parser, np.random.default_rng(seed))
    env.enable_draw = enable_draw
    env.reset()
    return env
