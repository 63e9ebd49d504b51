"""The PG/PPO model: a Gaussian actor and a critic over normalised inputs, separate from the agent.

The actor's inputs are [normalised state] or [normalised state, normalised goal] (float32); the
critic's are the same unless its builder gives it more (GAIL's TRPO step adds a time feature). The
actor gives the mean of a diagonal Gaussian in normalised action units (the agent un-normalises
with a_norm); its log-std is a variable set to log(Noise), fixed (DeepMimic's PPO) unless
learn_std (GAIL's TRPO step trains it, as its reference does). The critic gives the raw value.
Every function exists in TF (training, batches) and as a numpy mirror (one decision at a time),
refreshed from the variables by `refresh_mirror()` after each update; the actor mean can also be
recorded as a graph (policy export, learning/nets/graph_ops.py).

TF1 names (DeepMimic 2021): agent/main/actor/{trunk}, agent/main/actor/dist_gauss_diag/mean/
{kernel,bias}, agent/main/actor/dist_gauss_diag/logstd/bias, agent/main/critic/{trunk},
agent/main/critic/dense/{kernel,bias}.
"""
import numpy as np

from learning.losses import LOG_2PI
from learning.nets.net import NP_OPS, TF_OPS, Net, TrunkHead, uniform_init
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


def build_actor(net_name, input_sizes, action_size, init_output_scale, noise, learn_std=False):
    """The actor network: the trunk `net_name`, then the Gaussian head."""
    trunk = build_net(net_name, input_sizes, ACTOR_SCOPE)
    return TrunkHead(trunk, GaussianHead(trunk.out_size, action_size, init_output_scale, noise,
                                         f"{ACTOR_SCOPE}/dist_gauss_diag", learn_std))


def build_critic(net_name, input_sizes, scope=CRITIC_SCOPE):
    """The critic network: the trunk `net_name`, then one linear value."""
    trunk = build_net(net_name, input_sizes, scope)
    return TrunkHead(trunk, ValueHead(trunk.out_size, scope))


class ActorCriticBase:
    """An actor network and a critic network (TrunkHeads), their variables in one dict, run in TF
    (inside tf.function) or by the numpy mirror of the variables (refresh_mirror after updates)."""

    def __init__(self, actor, critic):
        self.actor_network, self.critic_network = actor, critic
        self.variables = {**actor.variables, **critic.variables}
        self.actor_vars = actor.trainable_variables
        self.critic_vars = critic.trainable_variables
        self.refresh_mirror()

    def actor_out(self, inputs):
        return self.actor_network.forward(TF_OPS, self.variables, inputs)

    def critic(self, inputs):
        return self.critic_network.forward(TF_OPS, self.variables, inputs)

    def refresh_mirror(self):
        self._params = {name: v.numpy() for name, v in self.variables.items()}

    def actor_out_np(self, inputs):
        return self.actor_network.forward(NP_OPS, self._params, inputs)

    def critic_np(self, inputs):
        return self.critic_network.forward(NP_OPS, self._params, inputs)


class ActorCritic(ActorCriticBase):
    """The Gaussian actor (build_actor) and the critic (build_critic); the actor's output is the
    mean (actor_mean, actor_mean_np), its std exp(logstd)."""

    def __init__(self, actor, critic):
        self.logstd_name = actor.head.logstd_name
        super().__init__(actor, critic)
        self.logstd = self.variables[self.logstd_name]

    actor_mean = ActorCriticBase.actor_out
    actor_mean_np = ActorCriticBase.actor_out_np

    def refresh_mirror(self):
        super().refresh_mirror()
        logstd = self._params[self.logstd_name].astype(np.float64)
        self.std_np = np.exp(logstd)
        # log N(mean; mean, std^2): a sample mean + std * z has this minus 0.5 |z|^2
        self.logp_at_mean_np = float(-0.5 * logstd.size * LOG_2PI - logstd.sum())

    def logstd_np(self):
        return self._params[self.logstd_name]

    # ---- recorded (learning/nets/graph_ops.py) ----
    def actor_mean_graph(self, graph, inputs):
        """The actor mean over the graph's input tensors, recorded into `graph` with the mirror's
        values as constants."""
        return self.actor_network.forward(graph.ops, graph.params(self._params), inputs)
