"""Registry of networks by the name agent files use (ActorNet, CriticNet, DiscNet)."""
from learning.nets import (fc_2layers_64units, fc_2layers_512units, fc_2layers_1024units,
                          fc_2layers_gated_1024units)

NETS = {
    fc_2layers_1024units.NAME: fc_2layers_1024units.FCNet,
    fc_2layers_gated_1024units.NAME: fc_2layers_gated_1024units.GatedFCNet,
    fc_2layers_64units.NAME: fc_2layers_64units.build,
    fc_2layers_512units.NAME: fc_2layers_512units.build,
}


def register_net(name, factory):
    """factory(input_sizes, scope) -> Net: a trunk beyond the shipped ones (tests' smaller trunks)."""
    NETS[name] = factory


def build_net(name, input_sizes, scope):
    """The trunk `name` over inputs of the given sizes, its variables under `scope`."""
    if name not in NETS:
        raise KeyError(f"unknown net {name!r} (known: {', '.join(sorted(NETS))})")
    return NETS[name](list(input_sizes), scope)
