"""Imports the older DeepMimic port shipped in the pybullet wheel (pybullet_envs.deep_mimic),
patched at run time. Only for tests and benchmarks, and only in a process of its own: patch 3
switches TensorFlow to TF1 graph mode for the whole process.

Patches:
  1. A stub `gym` module (with gym.envs.registration: registry.env_specs, register, make, spec)
     in sys.modules: pybullet_envs/__init__.py imports gym and registers gym envs, and
     gym 0.26 is neither installed nor compatible. The deep_mimic code itself does not use gym.
  2. TF_USE_LEGACY_KERAS=1 before TensorFlow is imported, with the tf_keras package installed
     (requirements-bench.txt): the port calls tf.compat.v1.layers.dense, which needs Keras 2.
  3. tf.compat.v1.disable_v2_behavior(): the port builds TF1 graphs and sessions; with TF2's
     resource variables its normaliser update (TFNormalizer._update_resource_tf) fails, because
     it feeds values into variables (count_ph, mean_ph, std_ph) through feed_dict, which only
     TF1 reference variables allow. This is "the normaliser fix".
"""
import os
import sys
import types


def install_gym_stub():
    """Patch 1: just enough `gym` for pybullet_envs/__init__.py to import."""
    registry = types.SimpleNamespace(env_specs={})
    registration = types.ModuleType("gym.envs.registration")
    registration.registry = registry
    registration.register = lambda id, *args, **kwargs: registry.env_specs.setdefault(id, kwargs)
    registration.make = registration.spec = lambda *args, **kwargs: None
    envs = types.ModuleType("gym.envs")
    envs.registration = registration
    gym = types.ModuleType("gym")
    gym.envs = envs
    sys.modules.update({"gym": gym, "gym.envs": envs, "gym.envs.registration": registration})


def prepare_tensorflow():
    """Patches 2 and 3; returns tf.compat.v1."""
    if "tensorflow" in sys.modules and os.environ.get("TF_USE_LEGACY_KERAS") != "1":
        raise RuntimeError("the older port must be imported in a process of its own, before TensorFlow")
    os.environ["TF_USE_LEGACY_KERAS"] = "1"
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    import tensorflow.compat.v1 as tf
    tf.disable_v2_behavior()
    return tf


def import_port():
    """All patches; returns the port's testrl module (its package is then importable as
    pybullet_envs.deep_mimic.{learning,env})."""
    install_gym_stub()
    prepare_tensorflow()
    from pybullet_envs.deep_mimic import testrl
    return testrl
