"""Networks: TF1 names, the numpy mirror equals TF, and the loss formulas against hand values."""
import numpy as np
import pytest
import tensorflow as tf

from learning.losses import (action_bound_loss, critic_loss, gaussian_logp,
                             ppo_clip_loss, weight_decay_loss)
from learning.models.actor_critic import ActorCritic, build_actor, build_critic
from learning.nets.net_builder import build_net
from learning.tf_util import limit_tf_threads

limit_tf_threads()


def test_fc_net_names_and_shapes():
    net = build_net("fc_2layers_1024units", [197], "agent/main/actor")
    shapes = {n: tuple(v.shape) for n, v in net.variables.items()}
    assert shapes == {
        "agent/main/actor/0/dense/kernel": (197, 1024), "agent/main/actor/0/dense/bias": (1024,),
        "agent/main/actor/1/dense/kernel": (1024, 512), "agent/main/actor/1/dense/bias": (512,)}
    half = build_net("fc_2layers_512units", [197, 213], "agent/main/critic")
    assert {n: tuple(v.shape) for n, v in half.variables.items()} == {
        "agent/main/critic/0/dense/kernel": (410, 512), "agent/main/critic/0/dense/bias": (512,),
        "agent/main/critic/1/dense/kernel": (512, 256), "agent/main/critic/1/dense/bias": (256,)}
    assert half.out_size == 256
    assert np.all(net.variables["agent/main/actor/0/dense/bias"].numpy() == 0)
    limit = np.sqrt(6 / (197 + 1024))    # Glorot uniform
    kernel = net.variables["agent/main/actor/0/dense/kernel"].numpy()
    assert np.abs(kernel).max() <= limit and np.abs(kernel).max() > 0.9 * limit


def test_gated_net_names():
    net = build_net("fc_2layers_gated_1024units", [10, 3], "agent/main/critic")
    names = set(net.variables)
    assert "agent/main/critic/gate_common/0/dense/kernel" in names
    assert "agent/main/critic/0/dense/kernel" in names and "agent/main/critic/1/dense/bias" in names
    assert "agent/main/critic/gate1/0/dense/kernel" in names
    assert tuple(net.variables["agent/main/critic/gate0/dense_1/kernel"].shape) == (64, 1024)
    assert tuple(net.variables["agent/main/critic/0/dense/kernel"].shape) == (13, 1024)
    with pytest.raises(ValueError, match="goal"):
        build_net("fc_2layers_gated_1024units", [10], "x")


@pytest.mark.parametrize("net_name,sizes", [("fc_2layers_1024units", [197]),
                                            ("fc_2layers_gated_1024units", [12, 3])])
def test_numpy_mirror_equals_tf(net_name, sizes):
    np.random.seed(0)
    model = ActorCritic(build_actor(net_name, sizes, 28, init_output_scale=0.5, noise=0.05),
                        build_critic(net_name, sizes))
    for v in model.actor_vars + model.critic_vars:     # non-zero biases too
        v.assign(v + np.random.normal(scale=0.05, size=v.shape).astype(np.float32))
    model.refresh_mirror()
    for batch in (1, 7):
        inputs = [np.random.normal(size=(batch, n)).astype(np.float32) for n in sizes]
        tf_mean = model.actor_mean([tf.constant(x) for x in inputs]).numpy()
        tf_val = model.critic([tf.constant(x) for x in inputs]).numpy()
        # equal up to float32 rounding (the summation order of the 1024-term dot products differs)
        for mirror, reference in ((model.actor_mean_np(inputs), tf_mean), (model.critic_np(inputs), tf_val)):
            assert mirror.shape == reference.shape and mirror.dtype == np.float32
            np.testing.assert_allclose(mirror, reference, rtol=1e-5, atol=1e-5)
    assert np.all(model.logstd_np() == np.float32(np.log(0.05)))
    assert all(v.trainable for v in model.actor_vars) and not model.logstd.trainable


def test_actor_head_init_scale():
    np.random.seed(1)
    model = ActorCritic(build_actor("fc_2layers_1024units", [5], 3, 0.01, 0.05), build_critic("fc_2layers_1024units", [5]))
    kernel = model.variables["agent/main/actor/dist_gauss_diag/mean/kernel"].numpy()
    assert kernel.shape == (512, 3) and np.abs(kernel).max() <= 0.01
    assert model.variables["agent/main/critic/dense/kernel"].shape == (512, 1)


def test_gaussian_logp_matches_formula():
    x = np.array([[0.3, -1.0]], dtype=np.float32)
    mean = np.array([[0.1, -0.5]], dtype=np.float32)
    logstd = np.log(np.array([0.5, 2.0], dtype=np.float32))
    expected = sum(-0.5 * ((xi - mi) / si) ** 2 - np.log(si) - 0.5 * np.log(2 * np.pi)
                   for xi, mi, si in zip(x[0], mean[0], [0.5, 2.0]))
    assert gaussian_logp(tf.constant(x), tf.constant(mean), tf.constant(logstd)).numpy()[0] == pytest.approx(expected, rel=1e-6)


def test_ppo_clip_loss_hand_values():
    # ratios e^0.1 = 1.105 (inside), e^0.5 = 1.649 (clipped to 1.2), e^-0.5 = 0.607 (clipped to 0.8)
    logp = tf.constant([0.1, 0.5, -0.5, -0.5])
    old = tf.zeros(4)
    adv = tf.constant([1.0, 2.0, -1.0, 1.0])
    loss, clip_frac = ppo_clip_loss(logp, old, adv, 0.2)
    r = np.exp([0.1, 0.5, -0.5, -0.5])
    terms = [r[0] * 1, min(r[1] * 2, 1.2 * 2), min(r[2] * -1, 0.8 * -1), min(r[3] * 1, 0.8 * 1)]
    assert loss.numpy() == pytest.approx(-np.mean(terms), rel=1e-6)
    assert clip_frac.numpy() == pytest.approx(0.75)


def test_bound_critic_and_weight_decay_losses():
    mean = tf.constant([[1.5, 0.0], [-3.0, 0.5]])
    lo, hi = tf.constant([-1.0, -1.0]), tf.constant([1.0, 1.0])
    # violations: 0.5 above on row 0; 2.0 below on row 1 -> 0.5 * mean(0.25, 4.0)
    assert action_bound_loss(mean, lo, hi).numpy() == pytest.approx(0.5 * (0.25 + 4.0) / 2)
    assert critic_loss(tf.constant([1.0, 3.0]), tf.constant([0.0, 1.0])).numpy() == pytest.approx(0.5 * (1 + 4) / 2)
    k = tf.Variable([[1.0, 2.0]], name="net/dense/kernel")
    b = tf.Variable([5.0], name="net/dense/bias")
    assert weight_decay_loss([k, b]).numpy() == pytest.approx(0.5 * (1 + 4))
