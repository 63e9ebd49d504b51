"""fc_2layers_gated_1024units: the goal (last input) gates each layer of a 1024-512 trunk.

gate_common = ReLU(Dense 128(goal)); for each layer i (size n):
    g_i = ReLU(Dense 64(gate_common)); scale_i = 2 sigmoid(Dense n(g_i)); bias_i = Dense n(g_i)
    h = ReLU(scale_i * Dense n(h) + bias_i)
with h starting at concat(all inputs). TF1 names as DeepMimic's: {scope}/gate_common/0/dense,
{scope}/{i}/dense, {scope}/gate{i}/0/dense, {scope}/gate{i}/dense (bias branch),
{scope}/gate{i}/dense_1 (scale branch).
"""
from learning.nets.net import Net

NAME = "fc_2layers_gated_1024units"
LAYERS = (1024, 512)
GATE_COMMON_SIZE = 128
GATE_SIZE = 64


class GatedFCNet(Net):
    def __init__(self, input_sizes, scope, layers=LAYERS):
        super().__init__(scope)
        if len(input_sizes) < 2 or input_sizes[-1] == 0:
            raise ValueError(f"{NAME} needs a goal input (the last input) to gate its layers")
        self.gate_common = self.add_dense("gate_common/0/dense", input_sizes[-1], GATE_COMMON_SIZE)
        self.layers = []
        in_size = sum(input_sizes)
        for i, size in enumerate(layers):
            self.layers.append((
                self.add_dense(f"{i}/dense", in_size, size),
                self.add_dense(f"gate{i}/0/dense", GATE_COMMON_SIZE, GATE_SIZE),
                self.add_dense(f"gate{i}/dense", GATE_SIZE, size),
                self.add_dense(f"gate{i}/dense_1", GATE_SIZE, size),
            ))
            in_size = size
        self.out_size = in_size

    def forward(self, ops, params, inputs):
        gate_common = ops.relu(self.dense(ops, params, self.gate_common, inputs[-1]))
        h = ops.concat(inputs)
        for main, gate_hidden, gate_bias, gate_scale in self.layers:
            g = ops.relu(self.dense(ops, params, gate_hidden, gate_common))
            scale = 2 * ops.sigmoid(self.dense(ops, params, gate_scale, g))
            h = ops.relu(scale * self.dense(ops, params, main, h) + self.dense(ops, params, gate_bias, g))
        return h
