"""Runs a policy exported with `scripts/export_policy.py --format npz`; needs numpy only.

    policy = NpzPolicy("walk.npz")
    action = policy(state)          # raw state (batch, S) -> raw action (batch, A); policy(state, goal) with a goal
    policy.metadata["action_names"]

The file holds float32 constants by name, "graph" (JSON: inputs, outputs, constants, and nodes
[op, input names, output name] run in order) and "metadata" (JSON).
"""
import json

import numpy as np

OPS = {"MatMul": np.matmul, "Add": np.add, "Sub": np.subtract, "Mul": np.multiply, "Div": np.divide,
       "Relu": lambda x: np.maximum(x, 0), "Sigmoid": lambda x: 1 / (1 + np.exp(-x)),
       "Identity": lambda x: x, "Concat": lambda *xs: np.concatenate(xs, axis=-1)}


class NpzPolicy:
    def __init__(self, path):
        with np.load(path, allow_pickle=False) as npz:
            self.graph = json.loads(str(npz["graph"]))
            self.metadata = json.loads(str(npz["metadata"]))
            self.constants = {name: npz[name] for name in self.graph["constants"]}

    def run(self, state, goal=None):
        """{output name: float32 array}: "action" and, when exported, "log_std"."""
        values = dict(self.constants, state=np.asarray(state, np.float32))
        if goal is not None:
            values["goal"] = np.asarray(goal, np.float32)
        with np.errstate(over="ignore"):        # exp overflow in Sigmoid gives its limit, 0
            for op, inputs, output in self.graph["nodes"]:
                values[output] = OPS[op](*(values[name] for name in inputs)).astype(np.float32)
        return {name: values[name] for name in self.graph["outputs"]}

    def __call__(self, state, goal=None):
        return self.run(state, goal)["action"]
