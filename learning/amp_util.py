"""The AMP discriminator's losses and the style reward (deepmimic.md 5.8).

D is the discriminator's raw logit (one per observation). Least-squares GAN targets: +1 for
expert observations, -1 for the agent's.
"""
import numpy as np
import tensorflow as tf


def lsgan_loss(logits_expert, logits_agent):
    """0.5 [mean 0.5 (D_expert - 1)^2 + mean 0.5 (D_agent + 1)^2]."""
    loss_expert = tf.reduce_mean(0.5 * tf.square(logits_expert - 1))
    loss_agent = tf.reduce_mean(0.5 * tf.square(logits_agent + 1))
    return 0.5 * (loss_expert + loss_agent)


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


def lerp_reward(style_r, task_r, task_weight):
    """(1 - w) style + w task."""
    return (1.0 - task_weight) * style_r + task_weight * task_r
