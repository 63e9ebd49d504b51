"""The PPO step's joint update (learning/solvers/joint_update.py: one compiled call per minibatch
at one rank; gradients, one Allreduce and one apply call at N ranks) computes what the
straightforward update computes (tests/ppo_step_reference.py: per solver numpy flatten,
Allreduce, isfinite, unflatten, apply): from the same weights, solver states, batch and shuffles,
one PPOStep.step leaves bitwise the same weights, moments, update counts and log columns, with
Adam and with momentum SGD. ranks=2 runs the N-rank path in this one process (mpi_util.size
patched: an Allreduce over one process is the identity, and both sides divide by 2). Non-finite
gradients of one solver skip that solver's update only, as before."""
import numpy as np
import pytest
import tensorflow as tf

import util.mpi_util as mpi_util
from learning.rl_world import RLWorld
from learning.solvers.joint_update import JointUpdate
from learning.tf_util import limit_tf_threads
from tests.ppo_step_reference import both_steps, synthetic_batch
from tests.toy_env import ShapedEnv, register_small_net, toy_args, write_agent_file

limit_tf_threads()
register_small_net()

STATE, ACTION = 9, 3
DECISIONS = 200


def build_agent(tmp_path, optimizer):
    agent_file = write_agent_file(tmp_path / "agent.txt", ActorOptimizer=optimizer, CriticOptimizer=optimizer,
                                  ActorStepsize=1e-3, CriticStepsize=1e-2, BatchSize=DECISIONS, MiniBatchSize=32,
                                  Epochs=3, ExpParamsBeg={"Rate": 1, "Noise": 0.3},
                                  ExpParamsEnd={"Rate": 1, "Noise": 0.3})
    return RLWorld(ShapedEnv(STATE, ACTION), toy_args(agent_file)).agents[0]


def assert_same(new, ref):
    (log, (weights, states), skips), (ref_log, (ref_weights, ref_states), ref_skips) = new, ref
    np.testing.assert_equal(log, ref_log)      # NaN losses of skipped minibatches compare equal
    assert skips == ref_skips
    for w, r in zip(weights, ref_weights):
        np.testing.assert_array_equal(w, r)
    for name, state in states.items():
        assert state["iter"] == ref_states[name]["iter"]
        for key in ("slots", "v_slots"):
            for s, r in zip(state.get(key, []), ref_states[name].get(key, [])):
                np.testing.assert_array_equal(s, r)


def epochs_minibatches(ranks):
    """3 epochs of ceil(decisions / 32) minibatches (the patched ranks' sum is this process's)."""
    return 3 * int(np.ceil(DECISIONS // ranks / 32))


@pytest.fixture(params=[1, 2], ids=["1rank", "2ranks"])
def ranks(request, monkeypatch):
    if request.param == 2:
        monkeypatch.setattr(mpi_util, "size", lambda: 2)
    return request.param


@pytest.mark.parametrize("optimizer", ["Adam", "SGD"])
def test_joint_update_equals_the_straightforward_update(tmp_path, ranks, optimizer):
    agent = build_agent(tmp_path, optimizer)
    assert agent.local_mini_batch_size == 32 // ranks
    batch = synthetic_batch(agent, np.random.default_rng(1), DECISIONS // ranks)
    start = [v.numpy() for v in agent.model.variables.values()]
    new, ref = both_steps(agent, batch)
    assert_same(new, ref)
    minibatches = epochs_minibatches(ranks)
    (_, (weights, states), _) = new
    assert states["actor"]["iter"] == states["critic"]["iter"] == minibatches
    assert all(not np.array_equal(w, s) for w, s, v in zip(weights, start, agent.model.variables.values())
               if v.trainable)


def test_non_finite_gradients_skip_that_solver_only(tmp_path, ranks, capsys):
    """A NaN action in one exploratory row makes the actor's gradient NaN in the minibatches that
    hold it, a NaN return in one non-exploratory row the critic's: those updates are skipped
    (each solver counts its own), the others applied, all as the straightforward update does."""
    agent = build_agent(tmp_path, "Adam")
    batch = synthetic_batch(agent, np.random.default_rng(2), DECISIONS // ranks)
    batch.norm_actions[batch.exp_pos[3]] = np.nan
    batch.returns[np.setdiff1d(batch.valid_pos, batch.exp_pos)[0]] = np.nan
    new, ref = both_steps(agent, batch)
    assert_same(new, ref)
    minibatches = epochs_minibatches(ranks)
    (_, (weights, states), _) = new
    for name in ("actor", "critic"):
        assert 0 < states[name]["iter"] < minibatches
    assert all(np.isfinite(w).all() for w in weights)
    out = capsys.readouterr().out
    assert out.count("warning: actor: non-finite gradient, update skipped") == 2 * (minibatches - states["actor"]["iter"])


def test_solvers_sharing_variables_are_refused():
    from learning.solvers.mpi_solver import MPISolver

    var = tf.Variable([1.0])
    solvers = [MPISolver("a", [var], 0.1, 0.9), MPISolver("b", [var], 0.1, 0.9)]
    with pytest.raises(ValueError, match=r"JointUpdate: solvers \['a', 'b'\] share variables"):
        JointUpdate(solvers, lambda x: ((), [[x], [x]]), [tf.TensorSpec([1], tf.float32)])
