"""TFAgent: an RLAgent whose model lives in TF2 variables, trained by MPI solvers, saved in
DeepMimic's TF1 checkpoint names (learning/checkpoint.py).

Template (DeepMimic's names): _build_nets (the models, learning/models/), _build_losses
(tf.functions), _build_solvers (learning/solvers/: optimisers and policy steps), then the solvers
broadcast rank 0's parameters. Subclasses list what checkpoints hold through
_checkpoint_variables / _normalizers, and what MPI averages through _solvers.

Checkpoint layout: an agent whose controller uses DeepMimic's 2018 state and action layout (the
controller file's "Layout": "2018", as the wheel's pretrained policies) saves in the 2018 names,
which DeepMimic's 2018 code and the older port in the pybullet wheel restore; any other agent in
DeepMimic's 2021 names (learning/checkpoint.py). Loading reads either. The 2018 critic's last layer
is stored un-folded by val_norm, exact to an ulp only, so the resume state keeps its exact values.
"""
import numpy as np

from learning import checkpoint
from learning.agents.rl_agent import RLAgent
from learning.resume_state import write_checkpoint_and_resume_state
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
        """tf.functions of the agent's own losses (a policy step builds its own: _build_solvers)."""

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

    def _check_synced(self):
        for solver in self._solvers().values():
            solver.check_synced()

    def _sync_solvers(self):
        for solver in self._solvers().values():
            solver.sync()
        self._on_params_changed()

    def _on_params_changed(self):
        """Called after the variables change outside a train step (sync, load)."""

    # ---- checkpoints ----
    def checkpoint_layout(self):
        """"2018" when the agent's controller uses the 2018 state/action layout, else "2021"."""
        return "2018" if self.env.get_layout_desc(self.id).get("layout") == "2018" else "2021"

    def _legacy_val_norm(self):
        """(mean, std) of the val_norm a 2018 checkpoint stores (PGAgent: from its value bounds)."""
        return 0.0, 1.0

    def checkpoint_tensors(self, layout=None):
        """{TF1 name: array} as save_model writes them, in `layout` (default: checkpoint_layout())."""
        tensors = {name: v.numpy() for name, v in self._checkpoint_variables().items()}
        for scope, norm in self._normalizers().items():
            tensors.update(checkpoint.normalizer_tensors(scope, norm))
        if (layout or self.checkpoint_layout()) == "2018":
            tensors = checkpoint.to_legacy_layout(tensors, *self._legacy_val_norm())
        return tensors

    def save_model(self, path):
        checkpoint.write_checkpoint(path, self.checkpoint_tensors())
        Logger.print(f"Model saved to: {path}")

    def save_model_and_resume_state(self, path):
        write_checkpoint_and_resume_state(path, self.checkpoint_tensors(), self.resume_state())
        Logger.print(f"Model saved to: {path}")

    def load_model(self, path):
        """Loads our checkpoints and the 2018-layout ones of the pybullet wheel (same on all ranks)."""
        prefix, tensors = checkpoint.read_current(path)
        checkpoint.assign_variables(self._checkpoint_variables(), tensors, prefix,
                                    self._optional_checkpoint_variables())
        for scope, norm in self._normalizers().items():
            checkpoint.load_normalizer(norm, scope, tensors, prefix)
        self._on_params_changed()
        Logger.print(f"Model loaded from: {prefix}")

    def _first_layers(self):
        """{name: input sizes} of the first-layer kernels init_model may widen (PGAgent: the actor's
        and the critic's)."""
        return {}

    def _init_kept_inputs(self, name):
        """How many rows, of the last inputs, the widened first layer `name` keeps at its own initial
        draw instead of zeros (GoalsAgent: its action policy's goal one-hot, so that the goals start apart)."""
        return 0

    def _init_tensors(self, tensors, source):
        """The checkpoint's tensors as init_model copies them (GoalsAgent: InitGoalCommands)."""
        return tensors

    def init_model(self, path):
        """--init_model_files: training starts from another agent's checkpoint, e.g. a shipped
        skill's for a policy whose input adds a goal to the same state. Variables of the same name
        and shape are copied; the first layer of a network whose inputs begin with the checkpoint's
        (its state, and its goal if it has one) takes the checkpoint's rows for those inputs and
        zeros for the new ones (except _init_kept_inputs' rows), so the started policy acts as the
        checkpoint's whatever the new inputs hold; normalisers of the same size are copied with
        their counts (new samples blend into them as after a load); what the checkpoint lacks keeps
        its initial value. Any other difference is a CheckpointError naming the variable."""
        prefix, tensors = checkpoint.read_current(path)
        tensors = self._init_tensors(tensors, prefix)
        inputs = checkpoint.checkpoint_input_sizes(tensors)
        widen = {name: self._init_kept_inputs(name) for name, sizes in self._first_layers().items()
                 if list(sizes[:len(inputs)]) == inputs}
        copied, widened, kept = checkpoint.init_variables(self._checkpoint_variables(), tensors, prefix, widen)
        norms = [scope for scope, norm in self._normalizers().items()
                 if norm.size and tensors.get(f"{scope}/mean", np.zeros(0)).shape == (norm.size,)]
        for scope in norms:
            checkpoint.load_normalizer(self._normalizers()[scope], scope, tensors, prefix)
        self._on_params_changed()
        Logger.print(f"Model initialised from: {prefix} ({len(copied)} variables copied, {len(widened)} widened "
                     f"for new inputs, {len(kept)} not in it kept; normalisers {', '.join(norms) or 'none'})")

    # ---- resume ----
    def resume_state(self):
        state = super().resume_state()
        if self.checkpoint_layout() == "2018":
            variables = self._checkpoint_variables()
            for name in checkpoint.LEGACY_INEXACT:
                if name in variables:
                    state[f"model/{name}"] = variables[name].numpy()
        for name, solver in self._solvers().items():
            solver_state = solver.state()
            state[f"solver/{name}/iter"] = solver_state["iter"]
            state[f"solver/{name}/stepsize"] = solver_state["stepsize"]
            for i, slot in enumerate(solver_state["slots"]):
                state[f"solver/{name}/slot{i}"] = slot
            for i, v in enumerate(solver_state.get("v_slots", ())):     # Adam's second moments
                state[f"solver/{name}/v{i}"] = v
        return state

    def load_resume_state(self, state):
        super().load_resume_state(state)
        for name, solver in self._solvers().items():
            solver_state = {"iter": state[f"solver/{name}/iter"],
                            "stepsize": float(state[f"solver/{name}/stepsize"]),
                            "slots": [checkpoint.checked_tensor(state, f"solver/{name}/slot{i}", var.shape, "resume state")
                                      for i, var in enumerate(solver.variables)]}
            if hasattr(solver, "v_slots"):
                solver_state["v_slots"] = [checkpoint.checked_tensor(state, f"solver/{name}/v{i}", var.shape,
                                                                     "resume state")
                                           for i, var in enumerate(solver.variables)]
            solver.load_state(solver_state)
        # exact values of what the checkpoint layout stores rounded (the 2018 critic's last layer)
        exact = {key[len("model/"):]: state[key] for key in state if key.startswith("model/")}
        if exact:
            checkpoint.assign_variables({name: self._checkpoint_variables()[name] for name in exact},
                                        exact, "resume state")
            self._on_params_changed()
