"""The AMP discriminator's losses and the style rewards (deepmimic.md 5.8, amp-variants.md).

D is the discriminator's raw logit (one per observation). Least-squares GAN (DeepMimic): targets
+1 for expert observations, -1 for the agent's. Binary cross-entropy (DeepMimic's successor):
labels 1 for expert observations, 0 for the agent's, on sigmoid(D).
"""
import numpy as np
import tensorflow as tf


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


DISC_LOSSES = {"lsgan": lsgan_loss, "bce": bce_loss}


def grad_penalty(logits, inputs, tape):
    """0.5 mean over samples of |dD/dx|^2, x the (normalised) inputs `tape` watched."""
    grad = tape.gradient(logits, inputs)
    return 0.5 * tf.reduce_mean(tf.reduce_sum(tf.square(grad), axis=-1))


def disc_accuracy(logits_expert, logits_agent):
    """(fraction of expert logits > 0, fraction of agent logits < 0)."""
    acc_expert = tf.reduce_mean(tf.cast(logits_expert > 0, tf.float32))
    acc_agent = tf.reduce_mean(tf.cast(logits_agent < 0, tf.float32))
    return acc_expert, acc_agent


def style_reward(logits, reward_scale):
    """max(0, 1 - 0.25 (1 - D)^2) * reward_scale: 1 x scale at D = 1 (expert-like), 0 at D <= -1."""
    return np.maximum(1.0 - 0.25 * np.square(1.0 - logits), 0.0) * reward_scale


BCE_REWARD_FLOOR = 1e-4


def bce_style_reward(logits, reward_scale):
    """-log(max(1 - sigmoid(D), 1e-4)) * reward_scale: 0 at D -> -inf, log 2 at D = 0, at most
    -log(1e-4) = 9.21 times the scale."""
    prob_agent = 1.0 / (1.0 + np.exp(np.clip(logits, -50.0, 50.0)))          # 1 - sigmoid(D)
    return -np.log(np.maximum(prob_agent, BCE_REWARD_FLOOR)) * reward_scale


STYLE_REWARDS = {"lsgan": (style_reward, 1.0), "bce": (bce_style_reward, -np.log(BCE_REWARD_FLOOR))}
"""Per DiscLoss: the style reward and its largest value for a reward scale of 1 (the least is 0)."""

