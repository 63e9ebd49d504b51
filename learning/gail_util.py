"""GAIL's maths (learning/gail_agent.py): the discriminator's loss with its entropy bonus, the two
reward forms, and the TensorFlow side of the TRPO step (the Gaussian policy's KL, flat parameter
vectors, Fisher-vector products by double backprop; the numpy step is learning/solvers/trpo.py).
"""
import numpy as np
import tensorflow as tf


def bernoulli_entropy(logits):
    """Entropy of Bernoulli(sigmoid(D)): softplus(D) - sigmoid(D) D."""
    return tf.nn.softplus(logits) - tf.sigmoid(logits) * logits


def gail_disc_loss(logits_expert, logits_agent, entropy_coef):
    """(loss, info) of the discriminator (module docstring); info: the cross-entropy, the mean
    entropy over both classes, and the accuracy on each class (D > 0 counts as expert)."""
    ent_expert, ent_agent = bernoulli_entropy(logits_expert), bernoulli_entropy(logits_agent)
    cross_entropy = tf.reduce_mean(tf.nn.softplus(-logits_expert)) + tf.reduce_mean(tf.nn.softplus(logits_agent))
    entropy = tf.reduce_mean(ent_expert) + tf.reduce_mean(ent_agent)
    loss = cross_entropy - entropy_coef * entropy
    info = {"loss": loss, "cross_entropy": cross_entropy, "entropy": 0.5 * entropy,
            "acc_expert": tf.reduce_mean(tf.cast(logits_expert > 0, tf.float32)),
            "acc_agent": tf.reduce_mean(tf.cast(logits_agent < 0, tf.float32))}
    return loss, info


def _neg_log_one_minus_d(logits):
    return np.logaddexp(0.0, logits)            # -log(1 - sigmoid(D)) = softplus(D)


def _log_d(logits):
    return -np.logaddexp(0.0, -logits)          # log sigmoid(D) = -softplus(-D)


# name -> (reward of logits (float64), (min, max) of the unscaled reward)
DISC_REWARDS = {"neg_log_one_minus_d": (_neg_log_one_minus_d, (0.0, np.inf)),
                "log_d": (_log_d, (-np.inf, 0.0))}


def disc_reward(logits, reward_type, scale):
    return DISC_REWARDS[reward_type][0](np.asarray(logits, dtype=np.float64)) * scale


def gaussian_kl(old_mean, old_logstd, new_mean, new_logstd):
    """mean over samples of KL(N(old_mean, s_old^2) || N(new_mean, s_new^2)) for diagonal Gaussians:
    sum over dimensions of log(s_new / s_old) + (s_old^2 + (old_mean - new_mean)^2) / (2 s_new^2) - 1/2
    (= 0.5 sum ((old_mean - new_mean) / s)^2 when both stds are s)."""
    var_ratio = tf.exp(2.0 * (old_logstd - new_logstd))
    per_dim = (new_logstd - old_logstd + 0.5 * var_ratio - 0.5
               + 0.5 * tf.square(old_mean - new_mean) * tf.exp(-2.0 * new_logstd))
    return tf.reduce_mean(tf.reduce_sum(per_dim, axis=-1))


def flat_concat(tensors):
    return tf.concat([tf.reshape(t, [-1]) for t in tensors], axis=0)


def get_flat(variables):
    return np.concatenate([v.numpy().reshape(-1).astype(np.float64) for v in variables])


def set_flat(variables, flat):
    start = 0
    for v in variables:
        n = int(np.prod(v.shape))
        v.assign(np.asarray(flat[start:start + n], dtype=np.float32).reshape(v.shape))
        start += n


def fisher_vector_product(variables, constraint_fn):
    """v -> H v, H the Hessian of constraint_fn() (a scalar built from `variables`, zero with zero
    gradient at the current values: then H is its Fisher / Gauss-Newton matrix) by double backprop."""
    def fvp(v):
        with tf.GradientTape() as outer:
            with tf.GradientTape() as inner:
                c = constraint_fn()
            grads = inner.gradient(c, variables)
            gv = tf.reduce_sum(flat_concat(grads) * v)
        return flat_concat(outer.gradient(gv, variables))
    return fvp
