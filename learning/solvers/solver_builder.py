"""The agent file's optimizers by name (ActorOptimizer, CriticOptimizer)."""
from learning.solvers.mpi_adam import MPIAdamSolver
from learning.solvers.mpi_solver import MPISolver

OPTIMIZERS = ("SGD", "Adam")


def build_solver(optimizer, name, variables, stepsize, momentum):
    """"SGD": momentum SGD (DeepMimic's); "Adam" (momentum unused)."""
    if optimizer == "Adam":
        return MPIAdamSolver(name, variables, stepsize)
    return MPISolver(name, variables, stepsize, momentum)
