"""All inter-process communication of the project: a few collectives over MPI.COMM_WORLD.

Works as one process without mpiexec: when COMM_WORLD has a single rank every helper returns
its input (as a copy) without calling MPI. Every rank must call the collectives (reduce_*, bcast,
allreduce_sum*, gather) in the same order, as with MPI itself.
"""
from functools import lru_cache

import numpy as np


@lru_cache(maxsize=None)
def _comm():
    from mpi4py import MPI
    return MPI.COMM_WORLD


def _mpi():
    from mpi4py import MPI
    return MPI


def rank():
    return _comm().Get_rank()


def size():
    return _comm().Get_size()


def is_root():
    return rank() == 0


def rank_seed(rand_seed):
    """DeepMimic's per-rank seed, rand_seed + 1000 x rank, so ranks draw different episodes."""
    return int(rand_seed) + 1000 * rank()


def allreduce_sum(x):
    """Element-wise sum over ranks of an array (a new array, same dtype and shape)."""
    x = np.ascontiguousarray(x)
    if size() == 1:
        return x.copy()
    out = np.empty_like(x)
    _comm().Allreduce(x, out, op=_mpi().SUM)
    return out


def allreduce_sum_into(x, out):
    """Element-wise sum over ranks of a contiguous array written into `out` (same dtype and shape,
    another buffer); x may be read-only (e.g. a view of a TF tensor). Returns out."""
    if size() == 1:
        np.copyto(out, x)
    else:
        _comm().Allreduce(x, out, op=_mpi().SUM)
    return out


def _reduce(x, op_name):
    scalar = np.isscalar(x) or np.ndim(x) == 0
    arr = np.atleast_1d(np.asarray(x, dtype=np.float64))
    if size() > 1:
        out = np.empty_like(arr)
        _comm().Allreduce(arr, out, op=getattr(_mpi(), op_name))
        arr = out
    return float(arr[0]) if scalar else arr


def reduce_sum(x):
    """Sum over ranks of a number (float) or an array (float64 array)."""
    return _reduce(x, "SUM")


def reduce_mean(x):
    return reduce_sum(x) / size()


def reduce_min(x):
    return _reduce(x, "MIN")


def reduce_max(x):
    return _reduce(x, "MAX")


def reduce_dict_mean(info):
    """Mean over ranks of every value of a dict of numbers (same keys, same order on all ranks)."""
    keys = list(info)
    means = reduce_mean(np.array([float(info[k]) for k in keys]))
    return {k: float(v) for k, v in zip(keys, means)}


def bcast(x, root=0):
    """Root's array on every rank (a new array; x gives the shape and dtype on the others)."""
    x = np.ascontiguousarray(x).copy()
    if size() > 1:
        _comm().Bcast(x, root=root)
    return x


def ibarrier():
    """A non-blocking barrier: its request's Test() is True once every rank has called ibarrier."""
    return _comm().Ibarrier()


def gather(obj, root=0):
    """A list of every rank's Python object on root, None elsewhere (for tests and checks)."""
    if size() == 1:
        return [obj]
    return _comm().gather(obj, root=root)


def abort(code):
    """Ends every rank of the job (a failing rank must not leave the others waiting in a
    collective); returns normally when running as one process."""
    if size() > 1:
        _comm().Abort(code)
