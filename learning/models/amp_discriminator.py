"""AMP's discriminator D(x): the DiscNet trunk over a normalised AMP observation, then one logit
(kernel uniform in +-DiscInitOutputScale, zero bias). Its losses: learning/disc_losses.py.

TF1 names: agent/main/disc/{trunk}, agent/main/disc/disc_logits/{kernel,bias}.

Compute dtype (DiscComputeDtype, opt-in): with bfloat16 the layers run on bfloat16 copies of the
float32 variables and inputs (8-bit mantissas: logits within ~1% of float32's; this CPU's matrix
products ~2x faster), the logits come back as float32, and the casts carry the gradients, input
gradients included, back to the float32 variables and inputs: the solver, the checkpoint and the
style reward's formula stay float32.
"""
import tensorflow as tf

from learning.nets.net import TF_OPS, Net, TrunkHead, uniform_init
from learning.nets.net_builder import build_net

DISC_SCOPE = "agent/main/disc"
DISC_LOGIT_NAME = "disc_logits"
COMPUTE_DTYPES = {"float32": tf.float32, "bfloat16": tf.bfloat16}


class LogitHead(Net):
    """One linear logit, kernel uniform in +-init_output_scale, zero bias."""

    def __init__(self, in_size, init_output_scale, scope):
        super().__init__(scope)
        self.out = self.add_dense(DISC_LOGIT_NAME, in_size, 1, uniform_init(init_output_scale))

    def forward(self, ops, params, inputs):
        return self.dense(ops, params, self.out, inputs[0])[..., 0]


class Discriminator(TrunkHead):
    def __init__(self, net_name, obs_size, init_output_scale, compute_dtype="float32"):
        trunk = build_net(net_name, [obs_size], DISC_SCOPE)
        super().__init__(trunk, LogitHead(trunk.out_size, init_output_scale, DISC_SCOPE))
        self.logit_kernel = self.variables[f"{self.head.out}/kernel"]
        self.compute_dtype = COMPUTE_DTYPES[compute_dtype]

    def __call__(self, norm_obs):
        """Logits (batch,) float32 of normalised observations (batch, obs_size) float32."""
        if self.compute_dtype == tf.float32:
            return self.forward(TF_OPS, self.variables, [norm_obs])
        params = {name: tf.cast(v, self.compute_dtype) for name, v in self.variables.items()}
        return tf.cast(self.forward(TF_OPS, params, [tf.cast(norm_obs, self.compute_dtype)]), tf.float32)
