"""Networks as TF1-named variables plus one forward function that TF or numpy runs.

A net keeps `variables`, an ordered dict from DeepMimic's TF1 name (e.g.
"agent/main/actor/0/dense/kernel") to a tf.Variable, so checkpoints map one to one. `forward(ops,
params, inputs)` is written once against a tiny op set: with TF_OPS and the variables it builds
the TF graph (gradients, batches); with NP_OPS and a numpy snapshot of the same variables it is the
fast batch-1 mirror used for every decision (a tf.function call costs ~1 ms, numpy ~0.2 ms).
"""
from types import SimpleNamespace

import numpy as np
import tensorflow as tf

TF_OPS = SimpleNamespace(
    matmul=tf.matmul,
    relu=tf.nn.relu,
    sigmoid=tf.sigmoid,
    concat=lambda xs: xs[0] if len(xs) == 1 else tf.concat(xs, axis=-1),
)

NP_OPS = SimpleNamespace(
    matmul=np.matmul,
    relu=lambda x: np.maximum(x, 0),
    sigmoid=lambda x: 1 / (1 + np.exp(-x)),
    concat=lambda xs: xs[0] if len(xs) == 1 else np.concatenate(xs, axis=-1),
)


def glorot_uniform(in_size, out_size):
    limit = np.sqrt(6.0 / (in_size + out_size))
    return np.random.uniform(-limit, limit, size=(in_size, out_size))


def uniform_init(scale):
    return lambda in_size, out_size: np.random.uniform(-scale, scale, size=(in_size, out_size))


class Net:
    """Base of the registered networks: owns variables, builds dense layers, runs forward."""

    def __init__(self, scope):
        self.scope = scope
        self.variables = {}

    def add_dense(self, name, in_size, out_size, kernel_init=glorot_uniform):
        """Creates `{scope}/{name}/kernel` and `/bias` (zero); returns the layer's name prefix."""
        prefix = f"{self.scope}/{name}"
        self.add_variable(f"{prefix}/kernel", kernel_init(in_size, out_size))
        self.add_variable(f"{prefix}/bias", np.zeros(out_size))
        return prefix

    def add_variable(self, name, value, trainable=True):
        if name in self.variables:
            raise ValueError(f"variable {name} defined twice")
        self.variables[name] = tf.Variable(np.asarray(value, dtype=np.float32), name=name,
                                           trainable=trainable)

    @staticmethod
    def dense(ops, params, prefix, x):
        return ops.matmul(x, params[prefix + "/kernel"]) + params[prefix + "/bias"]

    def trainable_variables(self):
        return [v for v in self.variables.values() if v.trainable]

    def __call__(self, inputs):
        return self.forward(TF_OPS, self.variables, inputs)

    def forward(self, ops, params, inputs):
        raise NotImplementedError


class TrunkHead:
    """A registered trunk (learning/nets/net_builder.py) followed by a head net: one network of the
    models (learning/models/), its variables in creation order (the trunk's, then the head's)."""

    def __init__(self, trunk, head):
        self.trunk, self.head = trunk, head
        self.variables = {**trunk.variables, **head.variables}
        self.trainable_variables = trunk.trainable_variables() + head.trainable_variables()

    def forward(self, ops, params, inputs):
        return self.head.forward(ops, params, [self.trunk.forward(ops, params, inputs)])
