"""fc_2layers_512units: fc_2layers_1024units' structure at 512 x 256 (half the width: a quarter of
the hidden layer's weights, for recipes that trade capacity for update time). TF1 names as
fc_2layers_1024units'."""
from learning.nets.fc_2layers_1024units import FCNet

NAME = "fc_2layers_512units"
LAYERS = (512, 256)


def build(input_sizes, scope):
    return FCNet(input_sizes, scope, layers=LAYERS)
