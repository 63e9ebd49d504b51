"""GAIL's discriminator D(x), x = the normalised concat(state, action): DiscHiddenLayers dense
layers of DiscHiddenUnits units with DiscActivation, then one logit whose layer starts at zero.
Its loss and rewards: learning/disc_losses.py.

TF1 names: agent/main/disc/{i}/dense/{kernel,bias}, agent/main/disc/disc_logits/{kernel,bias}.
"""
import numpy as np
import tensorflow as tf

from learning.models.amp_discriminator import DISC_LOGIT_NAME, DISC_SCOPE
from learning.nets.net import Net, glorot_uniform

DISC_ACTIVATIONS = {"tanh": tf.tanh, "relu": tf.nn.relu}


class GAILDiscriminator(Net):
    """D(x): hidden dense layers with `activation`, then a zero-initialised logit layer."""

    def __init__(self, in_size, num_layers, units, activation):
        super().__init__(DISC_SCOPE)
        self.activation = DISC_ACTIVATIONS[activation]
        self.layer_names = []
        size = in_size
        for i in range(num_layers):
            self.layer_names.append(self.add_dense(f"{i}/dense", size, units, glorot_uniform))
            size = units
        self.out = self.add_dense(DISC_LOGIT_NAME, size, 1, lambda n_in, n_out: np.zeros((n_in, n_out)))

    def forward(self, ops, params, inputs):
        h = inputs[0]
        for prefix in self.layer_names:
            h = self.activation(self.dense(ops, params, prefix, h))
        return self.dense(ops, params, self.out, h)[..., 0]
