"""The PG/PPO model: a Gaussian actor and a critic over normalised inputs, separate from the agent.

Inputs are [normalised state] or [normalised state, normalised goal] (float32). The actor gives
the mean of a diagonal Gaussian in normalised action units (the agent un-normalises with a_norm);
its log-std is a variable set to log(Noise), fixed (DeepMimic's PPO) unless learn_std (GAIL's TRPO
step trains it, as its reference does). The critic gives the raw value.
Every function exists in TF (training, batches) and as a numpy mirror (one decision at a time),
refreshed from the variables by `refresh_mirror()` after each update; the actor mean can also be
recorded as a graph (policy export).

TF1 names (DeepMimic 2021): agent/main/actor/{trunk}, agent/main/actor/dist_gauss_diag/mean/
{kernel,bias}, agent/main/actor/dist_gauss_diag/logstd/bias, agent/main/critic/{trunk},
agent/main/critic/dense/{kernel,bias}.
"""
import numpy as np

from learning.losses import LOG_2PI
from learning.nets.net import NP_OPS, TF_OPS, Net, uniform_init
from learning.nets.net_builder import build_net

ACTOR_SCOPE = "agent/main/actor"
CRITIC_SCOPE = "agent/main/critic"


class GaussianHead(Net):
    """Mean layer (kernel uniform +-init_output_scale, zero bias) and a state-independent log-std
    (trainable only when learn_std)."""

    def __init__(self, in_size, action_size, init_output_scale, noise, scope, learn_std=False):
        super().__init__(scope)
        self.mean = self.add_dense("mean", in_size, action_size, uniform_init(init_output_scale))
        self.logstd_name = f"{scope}/logstd/bias"
        self.add_variable(self.logstd_name, np.full(action_size, np.log(noise)), trainable=learn_std)

    def forward(self, ops, params, inputs):
        return self.dense(ops, params, self.mean, inputs[0])


class ValueHead(Net):
    def __init__(self, in_size, scope):
        super().__init__(scope)
        self.out = self.add_dense("dense", in_size, 1)

    def forward(self, ops, params, inputs):
        return self.dense(ops, params, self.out, inputs[0])[..., 0]


class ActorCritic:
    def __init__(self, actor_net, critic_net, input_sizes, action_size, init_output_scale, noise,
                 learn_std=False):
        self.actor_trunk = build_net(actor_net, input_sizes, ACTOR_SCOPE)
        self.actor_head = GaussianHead(self.actor_trunk.out_size, action_size, init_output_scale,
                                       noise, f"{ACTOR_SCOPE}/dist_gauss_diag", learn_std)
        self.critic_trunk = build_net(critic_net, input_sizes, CRITIC_SCOPE)
        self.critic_head = ValueHead(self.critic_trunk.out_size, CRITIC_SCOPE)
        self.actor_nets = (self.actor_trunk, self.actor_head)
        self.critic_nets = (self.critic_trunk, self.critic_head)
        self.variables = {}
        for net in self.actor_nets + self.critic_nets:
            self.variables.update(net.variables)
        self.actor_vars = [v for net in self.actor_nets for v in net.trainable_variables()]
        self.critic_vars = [v for net in self.critic_nets for v in net.trainable_variables()]
        self.logstd = self.variables[self.actor_head.logstd_name]
        self.refresh_mirror()

    @staticmethod
    def _run(nets, ops, params, inputs):
        trunk, head = nets
        return head.forward(ops, params, [trunk.forward(ops, params, inputs)])

    # ---- TF (inside tf.function) ----
    def actor_mean(self, inputs):
        return self._run(self.actor_nets, TF_OPS, self.variables, inputs)

    def critic(self, inputs):
        return self._run(self.critic_nets, TF_OPS, self.variables, inputs)

    # ---- numpy mirror ----
    def refresh_mirror(self):
        self._params = {name: v.numpy() for name, v in self.variables.items()}
        logstd = self._params[self.actor_head.logstd_name].astype(np.float64)
        self.std_np = np.exp(logstd)
        # log N(mean; mean, std^2): a sample mean + std * z has this minus 0.5 |z|^2
        self.logp_at_mean_np = float(-0.5 * logstd.size * LOG_2PI - logstd.sum())

    def actor_mean_np(self, inputs):
        return self._run(self.actor_nets, NP_OPS, self._params, inputs)

    def critic_np(self, inputs):
        return self._run(self.critic_nets, NP_OPS, self._params, inputs)

    def logstd_np(self):
        return self._params[self.actor_head.logstd_name]

    # ---- recorded (learning/nets/graph_ops.py) ----
    def actor_mean_graph(self, graph, inputs):
        """The actor mean over the graph's input tensors, recorded into `graph` with the mirror's
        values as constants."""
        return self._run(self.actor_nets, graph.ops, graph.params(self._params), inputs)

