"""Process-level TF and RNG set-up for the entry points (one MPI rank = one process)."""
import random

import numpy as np
import tensorflow as tf

import util.mpi_util as mpi_util


def limit_tf_threads():
    """One intra-op and one inter-op thread per rank (ranks share the cores). TF accepts this
    only before its runtime starts; later calls keep whatever was set first."""
    try:
        tf.config.threading.set_intra_op_parallelism_threads(1)
        tf.config.threading.set_inter_op_parallelism_threads(1)
    except RuntimeError:
        pass


def seed_rank(rand_seed):
    """Seeds numpy, random and TF with rand_seed + 1000 * rank; returns that seed."""
    seed = mpi_util.rank_seed(rand_seed)
    np.random.seed(seed)
    random.seed(seed)
    tf.random.set_seed(seed)
    return seed
