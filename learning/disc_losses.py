"""Discriminators' losses and rewards: AMP's (deepmimic.md 5.8, amp-variants.md) and GAIL's.

D is a discriminator's raw logit (one per sample). Labels: expert 1, agent 0 (D > 0 reads as
expert). Least-squares GAN (DeepMimic's AMP): targets +1 for expert samples, -1 for the agent's.
Binary cross-entropy (DeepMimic's successor, and GAIL's with an entropy bonus) on sigmoid(D).
The rewards -log(1 - sigmoid(D)) of AMP's BCE variant and of GAIL are one function,
neg_log_one_minus_sigmoid = softplus(D), which AMP caps at -log(1e-4).
"""
import numpy as np
import tensorflow as tf

# ---- losses (TF) ----


def lsgan_loss(logits_expert, logits_agent):
    """0.5 [mean 0.5 (D_expert - 1)^2 + mean 0.5 (D_agent + 1)^2]."""
    loss_expert = tf.reduce_mean(0.5 * tf.square(logits_expert - 1))
    loss_agent = tf.reduce_mean(0.5 * tf.square(logits_agent + 1))
    return 0.5 * (loss_expert + loss_agent)


def bce_loss(logits_expert, logits_agent):
    """0.5 [mean BCE(D_expert, 1) + mean BCE(D_agent, 0)], BCE(D, y) = -y log s(D) - (1 - y) log(1 - s(D))."""
    loss_expert = tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(tf.ones_like(logits_expert), logits_expert))
    loss_agent = tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(tf.zeros_like(logits_agent), logits_agent))
    return 0.5 * (loss_expert + loss_agent)


DISC_LOSSES = {"lsgan": lsgan_loss, "bce": bce_loss}     # AMP's DiscLoss


def bernoulli_entropy(logits):
    """Entropy of Bernoulli(sigmoid(D)): softplus(D) - sigmoid(D) D."""
    return tf.nn.softplus(logits) - tf.sigmoid(logits) * logits


def gail_disc_loss(logits_expert, logits_agent, entropy_coef):
    """(loss, info) of GAIL's discriminator: class-balanced cross-entropy minus entropy_coef times
    the Bernoulli entropy,
        mean_agent [softplus(D) - c H(D)] + mean_expert [softplus(-D) - c H(D)];
    info: the cross-entropy, the mean entropy over both classes, and the accuracy on each class."""
    ent_expert, ent_agent = bernoulli_entropy(logits_expert), bernoulli_entropy(logits_agent)
    cross_entropy = tf.reduce_mean(tf.nn.softplus(-logits_expert)) + tf.reduce_mean(tf.nn.softplus(logits_agent))
    entropy = tf.reduce_mean(ent_expert) + tf.reduce_mean(ent_agent)
    loss = cross_entropy - entropy_coef * entropy
    acc_expert, acc_agent = disc_accuracy(logits_expert, logits_agent)
    info = {"loss": loss, "cross_entropy": cross_entropy, "entropy": 0.5 * entropy,
            "acc_expert": acc_expert, "acc_agent": acc_agent}
    return loss, info


def grad_penalty(logits, inputs, tape):
    """0.5 mean over samples of |dD/dx|^2, x the (normalised) inputs `tape` watched."""
    grad = tape.gradient(logits, inputs)
    return 0.5 * tf.reduce_mean(tf.reduce_sum(tf.square(grad), axis=-1))


def disc_accuracy(logits_expert, logits_agent):
    """(fraction of expert logits > 0, fraction of agent logits < 0)."""
    acc_expert = tf.reduce_mean(tf.cast(logits_expert > 0, tf.float32))
    acc_agent = tf.reduce_mean(tf.cast(logits_agent < 0, tf.float32))
    return acc_expert, acc_agent


# ---- rewards (numpy, float64) ----


def neg_log_one_minus_sigmoid(logits):
    """-log(1 - sigmoid(D)) = softplus(D), in [0, inf): log 2 at D = 0."""
    return np.logaddexp(0.0, logits)


def log_sigmoid(logits):
    """log sigmoid(D) = -softplus(-D), in (-inf, 0]."""
    return -np.logaddexp(0.0, -logits)


def style_reward(logits, reward_scale):
    """AMP's least-squares style reward max(0, 1 - 0.25 (1 - D)^2) * reward_scale: 1 x scale at
    D = 1 (expert-like), 0 at D <= -1."""
    return np.maximum(1.0 - 0.25 * np.square(1.0 - logits), 0.0) * reward_scale


BCE_REWARD_FLOOR = 1e-4


def bce_style_reward(logits, reward_scale):
    """AMP's BCE style reward -log(max(1 - sigmoid(D), 1e-4)) * reward_scale: 0 at D -> -inf,
    log 2 at D = 0, at most -log(1e-4) = 9.21 times the scale."""
    return np.minimum(neg_log_one_minus_sigmoid(logits), -np.log(BCE_REWARD_FLOOR)) * reward_scale


STYLE_REWARDS = {"lsgan": (style_reward, 1.0), "bce": (bce_style_reward, -np.log(BCE_REWARD_FLOOR))}
"""Per AMP DiscLoss: the style reward and its largest value for a reward scale of 1 (the least is 0)."""

# per GAIL DiscRewardType: the reward of logits and the (min, max) of the unscaled reward
DISC_REWARDS = {"neg_log_one_minus_d": (neg_log_one_minus_sigmoid, (0.0, np.inf)),
                "log_d": (log_sigmoid, (-np.inf, 0.0))}


def disc_reward(logits, reward_type, scale):
    """GAIL's reward (DiscRewardType) of logits, times scale."""
    return DISC_REWARDS[reward_type][0](np.asarray(logits, dtype=np.float64)) * scale
