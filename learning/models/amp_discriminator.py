"""AMP's discriminator D(x): the DiscNet trunk over a normalised AMP observation, then one logit
(kernel uniform in +-DiscInitOutputScale, zero bias). Its losses: learning/disc_losses.py.

TF1 names: agent/main/disc/{trunk}, agent/main/disc/disc_logits/{kernel,bias}.
"""
from learning.nets.net import TF_OPS, Net, TrunkHead, uniform_init
from learning.nets.net_builder import build_net

DISC_SCOPE = "agent/main/disc"
DISC_LOGIT_NAME = "disc_logits"


class LogitHead(Net):
    """One linear logit, kernel uniform in +-init_output_scale, zero bias."""

    def __init__(self, in_size, init_output_scale, scope):
        super().__init__(scope)
        self.out = self.add_dense(DISC_LOGIT_NAME, in_size, 1, uniform_init(init_output_scale))

    def forward(self, ops, params, inputs):
        return self.dense(ops, params, self.out, inputs[0])[..., 0]


class Discriminator(TrunkHead):
    def __init__(self, net_name, obs_size, init_output_scale):
        trunk = build_net(net_name, [obs_size], DISC_SCOPE)
        super().__init__(trunk, LogitHead(trunk.out_size, init_output_scale, DISC_SCOPE))
        self.logit_kernel = self.variables[f"{self.head.out}/kernel"]

    def __call__(self, norm_obs):
        """Logits (batch,) of normalised observations (batch, obs_size)."""
        return self.forward(TF_OPS, self.variables, [norm_obs])
