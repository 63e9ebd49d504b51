"""The policy's and the critic's losses (DeepMimic deepmimic.md 5.3: PPO's; the Gaussian KL of the
TRPO step). TF functions; each documented where its maths lives.

All action quantities are in normalised action units (a_norm): the actor's mean, the stored
actions after a_norm.normalize, the action bounds after a_norm.normalize.
"""
import numpy as np
import tensorflow as tf

LOG_2PI = float(np.log(2 * np.pi))
ACTION_BOUND_WEIGHT = 10.0   # DeepMimic hard-codes the bound penalty's weight


def gaussian_logp(x, mean, logstd):
    """log N(x; mean, diag(exp(logstd)^2)), summed over the last axis."""
    z = (x - mean) / tf.exp(logstd)
    return -0.5 * tf.reduce_sum(tf.square(z), axis=-1) - 0.5 * x.shape[-1] * LOG_2PI \
        - tf.reduce_sum(logstd)


def gaussian_kl(old_mean, old_logstd, new_mean, new_logstd):
    """mean over samples of KL(N(old_mean, s_old^2) || N(new_mean, s_new^2)) for diagonal Gaussians:
    sum over dimensions of log(s_new / s_old) + (s_old^2 + (old_mean - new_mean)^2) / (2 s_new^2) - 1/2
    (= 0.5 sum ((old_mean - new_mean) / s)^2 when both stds are s)."""
    var_ratio = tf.exp(2.0 * (old_logstd - new_logstd))
    per_dim = (new_logstd - old_logstd + 0.5 * var_ratio - 0.5
               + 0.5 * tf.square(old_mean - new_mean) * tf.exp(-2.0 * new_logstd))
    return tf.reduce_mean(tf.reduce_sum(per_dim, axis=-1))


def critic_loss(target, value):
    """0.5 mean (target - V)^2."""
    return 0.5 * tf.reduce_mean(tf.square(target - value))


def ppo_clip_loss(logp, old_logp, adv, ratio_clip):
    """-mean(min(ratio A, clip(ratio, 1-eps, 1+eps) A)), ratio = exp(logp - old_logp).

    Returns (loss, clip_frac): the fraction of samples with |ratio - 1| > eps.
    """
    ratio = tf.exp(logp - old_logp)
    surrogate = tf.minimum(adv * ratio, adv * tf.clip_by_value(ratio, 1 - ratio_clip, 1 + ratio_clip))
    clip_frac = tf.reduce_mean(tf.cast(tf.abs(ratio - 1) > ratio_clip, tf.float32))
    return -tf.reduce_mean(surrogate), clip_frac


def action_bound_loss(norm_mean, norm_bound_min, norm_bound_max):
    """0.5 mean over samples of the summed squared violations of the bounds by the mean."""
    below = tf.minimum(norm_mean - norm_bound_min, 0)
    above = tf.maximum(norm_mean - norm_bound_max, 0)
    return 0.5 * tf.reduce_mean(tf.reduce_sum(tf.square(below) + tf.square(above), axis=-1))


def weight_decay_loss(variables):
    """sum of tf.nn.l2_loss (half the sum of squares) over the non-bias variables."""
    kernels = [v for v in variables if not v.name.split(":")[0].endswith("bias")]
    return tf.add_n([tf.nn.l2_loss(v) for v in kernels])
