"""fc_2layers_1024units: concat(inputs) -> Dense 1024 ReLU -> Dense 512 ReLU (Glorot, zero bias).

TF1 names: {scope}/0/dense/{kernel,bias}, {scope}/1/dense/{kernel,bias}.
"""
from learning.nets.net import Net

NAME = "fc_2layers_1024units"
LAYERS = (1024, 512)


class FCNet(Net):
    def __init__(self, input_sizes, scope, layers=LAYERS):
        super().__init__(scope)
        self.layer_names = []
        in_size = sum(input_sizes)
        for i, size in enumerate(layers):
            self.layer_names.append(self.add_dense(f"{i}/dense", in_size, size))
            in_size = size
        self.out_size = in_size

    def forward(self, ops, params, inputs):
        h = ops.concat(inputs)
        for prefix in self.layer_names:
            h = ops.relu(self.dense(ops, params, prefix, h))
        return h
