"""Checkpoints both ways (issue #14): an agent of ours with the 2018 controller layout saves in
DeepMimic's 2018 names, which the older DeepMimic port in the pybullet wheel restores (its own TF1
agent and tf.train.Saver, in a subprocess: tests/oracle/checkpoint_reference.py) to the same
actor and critic; a 2021-layout agent saves in DeepMimic's 2021 names; both read back into ours.

The oracle's tf.train.Saver restores every variable of its agent outside the solvers' scope, the
normalisers' placeholder variables (count_ph, mean_ph, std_ph) included: a checkpoint lacking one
fails to load there, so the subprocess's success is itself a check of the variable list. The
same holds for DeepMimic's own code (2018 and 2021: same TFNormalizer, same Saver).
"""

import numpy as np
import pybullet_data
import pytest

from env.deepmimic_env import DeepMimicEnv
from learning import checkpoint
from learning.resume_state import read_resume_state
from learning.rl_world import RLWorld
from tests.oracle import run_oracle
from learning.tf_util import limit_tf_threads
from util.arg_parser import load_args

limit_tf_threads()

WHEEL_WALK = f"{pybullet_data.getDataPath()}/data/policies/humanoid3d/humanoid3d_walk.ckpt"
RUN_2018 = "args/run_humanoid3d_walk_wheel_args.txt"        # controller humanoid3d_ctrl_2018.txt
TRAIN_2021 = "args/train_humanoid3d_walk_args.txt"    # controller humanoid3d_ctrl.txt
RTOL = 1e-5


def build_agent(arg_file, env=None):
    args = load_args(["--arg_file", arg_file, "--model_files", "none", "--output_path", "",
                      "--int_output_path", "", "--tensorboard", "false"])
    env = env or DeepMimicEnv(args, seed=0)
    return RLWorld(env, args).agents[0]


def randomise(agent, rng):
    """Random weights and normaliser statistics, of sizes that give O(1) activations."""
    for name, var in agent.model.variables.items():
        shape = var.shape.as_list()
        scale = 1.0 / np.sqrt(shape[0]) if len(shape) == 2 else 0.1
        var.assign(rng.normal(0.0, scale, shape).astype(np.float32))
    agent.model.variables[checkpoint.LOGSTD].assign(np.full(agent.get_action_size(), np.log(0.05), np.float32))
    agent._on_params_changed()
    n = agent.get_state_size()
    agent.s_norm.load(int(rng.integers(1000, 10 ** 7)), rng.normal(0.0, 1.0, n), rng.uniform(0.5, 2.0, n))
    a_mean, a_std = agent.a_norm.mean, agent.a_norm.std
    agent.a_norm.load(int(rng.integers(0, 100)), a_mean + 0.1 * rng.normal(size=a_mean.size),
                      a_std * rng.uniform(0.8, 1.2, a_std.size))


def ours(agent, states):
    """(un-normalised mean action, normalised mean action, value) of raw states."""
    goals = np.zeros((len(states), 0))
    norm_action = agent.model.actor_mean_np(agent._norm_inputs(states, goals)).astype(np.float64)
    return agent.a_norm.unnormalize(norm_action), norm_action, agent._eval_critic(states, goals)


def assert_close(ours_value, theirs, what):
    ours_value, theirs = np.asarray(ours_value, np.float64), np.asarray(theirs, np.float64)
    scale = np.abs(theirs).max()
    np.testing.assert_allclose(ours_value, theirs, rtol=RTOL, atol=RTOL * scale, err_msg=what)
    return float(np.abs(ours_value - theirs).max() / scale)


@pytest.fixture(scope="module")
def saved_2018(tmp_path_factory):
    """Our random 2018 agent saved, the states to evaluate on, and our outputs on them; also our
    outputs with the wheel's walk policy loaded (the control: both sides read a file DeepMimic's
    2018 layout wrote)."""
    out = tmp_path_factory.mktemp("ckpt2018")
    agent = build_agent(RUN_2018)
    assert agent.checkpoint_layout() == "2018"
    rng = np.random.default_rng(3)
    randomise(agent, rng)
    agent.save_model(str(out / "agent0_model.ckpt"))
    # states: normalised N(0, 1), the normaliser's mean (normalised 0), and RSI states of the walk
    s_mean, s_std = agent.s_norm.mean, agent.s_norm.std
    states = [s_mean + s_std * rng.normal(size=s_mean.size) for _ in range(3)] + [s_mean.copy()]
    for _ in range(2):
        agent.env.reset()
        states.append(agent.env.record_state(0))
    states = np.array(states).astype(np.float32).astype(np.float64)   # both sides see the same floats
    result = {"agent": agent, "prefix": out / "agent0_model.ckpt", "states": states,
              "ours": ours(agent, states), "dir": out}
    wheel_agent = build_agent(RUN_2018, env=agent.env)
    wheel_agent.load_model(WHEEL_WALK)
    result["ours_wheel"] = ours(wheel_agent, states)
    return result


@pytest.fixture(scope="module")
def oracle_2018(saved_2018):
    """The oracle's outputs: our checkpoint (through its start-up path), then the wheel's walk."""
    out = saved_2018["dir"]
    np.savez(out / "in.npz", states=saved_2018["states"],
             checkpoints=np.array([str(saved_2018["prefix"]), WHEEL_WALK]))
    return run_oracle("checkpoint_reference.py", out)


def test_2018_names_shapes_and_dtypes_equal_the_wheel_checkpoints(saved_2018):
    import tensorflow as tf
    ours_reader = tf.train.load_checkpoint(str(saved_2018["prefix"]))
    wheel_reader = tf.train.load_checkpoint(WHEEL_WALK)
    assert ours_reader.get_variable_to_shape_map() == wheel_reader.get_variable_to_shape_map()
    assert ours_reader.get_variable_to_dtype_map() == wheel_reader.get_variable_to_dtype_map()
    tensors = checkpoint.read_checkpoint(saved_2018["prefix"])
    # val_norm as DeepMimic's 2018 agent sets it: value bounds [0, 1 / (1 - 0.95)] -> mean 10, std 10
    assert tensors["agent/resource/val_norm/mean"][0] == pytest.approx(10.0)
    assert tensors["agent/resource/val_norm/std"][0] == pytest.approx(10.0)
    assert tensors["agent/resource/val_norm/count"][0] == 0


def test_older_port_restores_our_2018_checkpoint_to_the_same_policy_and_value(saved_2018, oracle_2018):
    agent, theirs = saved_2018["agent"], oracle_2018
    action, norm_action, value = saved_2018["ours"]
    rel = {"action": assert_close(action, theirs["0/action"], "mean action"),
           "norm_action": assert_close(norm_action, theirs["0/norm_action"], "normalised mean action"),
           "value": assert_close(value, theirs["0/value"], "critic value")}
    # the normalisers it restored (float32 in the file)
    for name, norm in (("s_norm", agent.s_norm), ("a_norm", agent.a_norm), ("g_norm", agent.g_norm)):
        np.testing.assert_allclose(theirs[f"0/{name}/mean"], norm.mean, rtol=1e-6, atol=1e-7)
        np.testing.assert_allclose(theirs[f"0/{name}/std"], norm.std, rtol=1e-6)
        assert int(theirs[f"0/{name}/count"]) == norm.count
    assert theirs["0/val_norm/mean"][0] == pytest.approx(10.0) and theirs["0/val_norm/std"][0] == pytest.approx(10.0)
    assert np.abs(value).max() > 0.1 and np.abs(norm_action).max() > 0.1     # not trivially zero
    print(f"\nours vs the older port on our 2018 checkpoint, max relative difference: {rel}")


def test_both_read_the_wheel_checkpoint_alike(saved_2018, oracle_2018):
    """The control: the wheel's own walk policy, read by each side."""
    action, norm_action, value = saved_2018["ours_wheel"]
    rel = {"action": assert_close(action, oracle_2018["1/action"], "mean action"),
           "norm_action": assert_close(norm_action, oracle_2018["1/norm_action"], "normalised mean action"),
           "value": assert_close(value, oracle_2018["1/value"], "critic value")}
    print(f"\nours vs the older port on the wheel's walk checkpoint, max relative difference: {rel}")


def test_2018_round_trip_ours_to_ours(saved_2018, tmp_path):
    src, prefix, states = saved_2018["agent"], str(saved_2018["prefix"]), saved_2018["states"]
    dst = build_agent(RUN_2018, env=src.env)
    dst.load_model(prefix)
    for name, var in src.model.variables.items():
        if name in checkpoint.LEGACY_INEXACT:
            # un-folded by val_norm (mean 10, std 10) and folded back: an ulp of the kernel, and an
            # ulp of (bias - 10) / 10 times 10 (~1e-6, against values of up to 20) for the bias
            np.testing.assert_allclose(dst.model.variables[name].numpy(), var.numpy(), rtol=3e-7, atol=2e-6)
        else:
            np.testing.assert_array_equal(dst.model.variables[name].numpy(), var.numpy(), err_msg=name)
    for name in ("s_norm", "g_norm", "a_norm"):
        a, b = getattr(src, name), getattr(dst, name)
        assert a.count == b.count
        np.testing.assert_array_equal(b.mean, a.mean.astype(np.float32))
        np.testing.assert_array_equal(b.std, a.std.astype(np.float32))
    for x, y in zip(ours(dst, states), saved_2018["ours"]):
        np.testing.assert_allclose(x, y, rtol=1e-6, atol=1e-6 * np.abs(y).max())
    # a resumed run gets the critic's last layer exactly back from the resume state
    src.save_model_and_resume_state(str(tmp_path / "m.ckpt"))
    dst.load_resume_state(read_resume_state(tmp_path / "m.ckpt"))
    for name in checkpoint.LEGACY_INEXACT:
        np.testing.assert_array_equal(dst.model.variables[name].numpy(), src.model.variables[name].numpy())


def test_2021_agent_saves_deepmimic_2021_names(tmp_path):
    """DeepMimic 2021's PPO agent: actor trunk, dist_gauss_diag mean layer and log-std bias,
    critic trunk and output, and its normalisers with their placeholder variables; no val_norm."""
    agent = build_agent(TRAIN_2021)
    assert agent.checkpoint_layout() == "2021"
    randomise(agent, np.random.default_rng(4))
    agent.save_model(str(tmp_path / "m.ckpt"))
    shapes = {k: tuple(v.shape) for k, v in checkpoint.read_checkpoint(tmp_path / "m.ckpt").items()}
    expected = {}
    for net in ("actor", "critic"):
        expected.update({f"agent/main/{net}/0/dense/kernel": (227, 1024), f"agent/main/{net}/0/dense/bias": (1024,),
                         f"agent/main/{net}/1/dense/kernel": (1024, 512), f"agent/main/{net}/1/dense/bias": (512,)})
    expected.update({"agent/main/actor/dist_gauss_diag/mean/kernel": (512, 28),
                     "agent/main/actor/dist_gauss_diag/mean/bias": (28,),
                     "agent/main/actor/dist_gauss_diag/logstd/bias": (28,),
                     "agent/main/critic/dense/kernel": (512, 1), "agent/main/critic/dense/bias": (1,)})
    for name, size in (("s_norm", 227), ("g_norm", 0), ("a_norm", 28)):
        for suffix in ("", "_ph"):
            expected.update({f"agent/resource/{name}/count{suffix}": (1,),
                             f"agent/resource/{name}/mean{suffix}": (size,),
                             f"agent/resource/{name}/std{suffix}": (size,)})
    assert shapes == expected
    dst = build_agent(TRAIN_2021, env=agent.env)
    dst.load_model(str(tmp_path / "m.ckpt"))
    for name, var in agent.model.variables.items():
        np.testing.assert_array_equal(dst.model.variables[name].numpy(), var.numpy(), err_msg=name)
