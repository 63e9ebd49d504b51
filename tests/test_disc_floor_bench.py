"""tests/bench/disc_floor.py: the operation count it divides by, and the steps it multiplies by."""
import pytest
import tensorflow as tf

from learning.agents.amp_agent import disc_steps
from learning.models.amp_discriminator import Discriminator
from tests.bench.disc_floor import graph_flops


def test_flops_of_a_multiply_are_two_per_multiply_add():
    spec = [tf.TensorSpec((128, 1024)), tf.TensorSpec((1024, 512))]
    assert graph_flops(tf.function(tf.linalg.matmul).get_concrete_function(*spec)) == 2 * 128 * 1024 * 512


def test_flops_of_the_discriminator_are_its_layers_multiplies_and_bias_adds():
    """DeepMimic's DiscNet (1024 then 512 units, then one logit) on a batch of b observations of
    size d: 2 b (d 1024 + 1024 512 + 512 1) for the multiplies, b (1024 + 512 + 1) for the biases."""
    b, d = 64, 226
    disc = Discriminator("fc_2layers_1024units", d, 1.0)
    forward = tf.function(disc).get_concrete_function(tf.TensorSpec((b, d), tf.float32))
    assert graph_flops(forward) == 2 * b * (d * 1024 + 1024 * 512 + 512) + b * (1024 + 512 + 1)


@pytest.mark.parametrize("steps_per_batch, count, ranks, batch, steps", [
    (2, 4096, 1, 256, 32), (2, 4096, 2, 128, 32), (1, 4096, 2, 128, 16), (2, 4100, 2, 128, 33), (1, 100, 1, 256, 1)])
def test_disc_steps_pass_over_the_iteration_steps_per_batch_times(steps_per_batch, count, ranks, batch, steps):
    assert disc_steps(steps_per_batch, count, ranks, batch) == steps
