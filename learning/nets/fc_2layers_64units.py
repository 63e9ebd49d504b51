"""fc_2layers_64units: fc_2layers_1024units' structure at 64 x 64 (the trunks of small scenes such as
goals_point). TF1 names as fc_2layers_1024units'."""
from learning.nets.fc_2layers_1024units import FCNet

NAME = "fc_2layers_64units"
LAYERS = (64, 64)


def build(input_sizes, scope):
    return FCNet(input_sizes, scope, layers=LAYERS)
