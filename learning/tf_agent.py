"""TFAgent: an RLAgent whose model lives in TF2 variables, trained by MPI solvers, saved in
DeepMimic's TF1 checkpoint names (learning/checkpoint.py).

Template (DeepMimic's names): _build_nets, _build_losses (tf.functions), _build_solvers, then the
solvers broadcast rank 0's parameters. Subclasses list what checkpoints hold through
_checkpoint_variables / _normalizers, and what MPI averages through _solvers.
"""
from learning import checkpoint
from learning.rl_agent import RLAgent
from util.logger import Logger

RESOURCE_SCOPE = "agent/resource"


class TFAgent(RLAgent):
    def __init__(self, world, id, config):
        super().__init__(world, id, config)
        self._build_nets()
        self._build_losses()
        self._build_solvers()
        self._sync_solvers()

    def _build_nets(self):
        raise NotImplementedError

    def _build_losses(self):
        raise NotImplementedError

    def _build_solvers(self):
        raise NotImplementedError

    def _solvers(self):
        """{name: MPISolver}; their parameters are broadcast at start and checked for equality."""
        raise NotImplementedError

    def _checkpoint_variables(self):
        """{TF1 name: tf.Variable} saved and loaded with the model."""
        raise NotImplementedError

    def _optional_checkpoint_variables(self):
        """Names a loaded checkpoint may lack (they keep their value)."""
        return set()

    def _normalizers(self):
        """{TF1 scope: Normalizer} saved and loaded with the model."""
        return {f"{RESOURCE_SCOPE}/s_norm": self.s_norm, f"{RESOURCE_SCOPE}/g_norm": self.g_norm,
                f"{RESOURCE_SCOPE}/a_norm": self.a_norm}

    def _sync_solvers(self):
        for solver in self._solvers().values():
            solver.sync()
        self._on_params_changed()

    def _on_params_changed(self):
        """Called after the variables change outside a train step (sync, load)."""

    # ---- checkpoints ----
    def save_model(self, path):
        tensors = {name: v.numpy() for name, v in self._checkpoint_variables().items()}
        for scope, norm in self._normalizers().items():
            tensors.update(checkpoint.normalizer_tensors(scope, norm))
        checkpoint.write_checkpoint(path, tensors)
        Logger.print(f"Model saved to: {path}")

    def load_model(self, path):
        """Loads our checkpoints and the 2018-layout ones of the pybullet wheel (same on all ranks)."""
        prefix = checkpoint.resolve_checkpoint(path)
        tensors = checkpoint.to_current_layout(checkpoint.read_checkpoint(prefix))
        checkpoint.assign_variables(self._checkpoint_variables(), tensors, prefix,
                                    self._optional_checkpoint_variables())
        for scope, norm in self._normalizers().items():
            checkpoint.load_normalizer(norm, scope, tensors, prefix)
        self._on_params_changed()
        Logger.print(f"Model loaded from: {prefix}")

    # ---- resume ----
    def save_resume_state(self, path):
        checkpoint.write_resume_state(path, self.resume_state())

    def resume_state(self):
        state = super().resume_state()
        for name, solver in self._solvers().items():
            solver_state = solver.state()
            state[f"solver/{name}/iter"] = solver_state["iter"]
            state[f"solver/{name}/stepsize"] = solver_state["stepsize"]
            for i, slot in enumerate(solver_state["slots"]):
                state[f"solver/{name}/slot{i}"] = slot
        return state

    def load_resume_state(self, state):
        super().load_resume_state(state)
        for name, solver in self._solvers().items():
            slots = []
            for i, var in enumerate(solver.variables):
                key = f"solver/{name}/slot{i}"
                slots.append(checkpoint.checked_tensor(state, key, var.shape, "resume state"))
            solver.load_state({"iter": state[f"solver/{name}/iter"],
                               "stepsize": float(state[f"solver/{name}/stepsize"]), "slots": slots})
