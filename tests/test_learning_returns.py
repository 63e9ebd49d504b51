"""TD(lambda) returns and advantages on paths with Null, Fail and Succ ends, against hand values."""
import numpy as np
import pytest

from env.env import Terminate
from learning.path import Path
from learning.rl_util import compute_return
from learning.rl_world import RLWorld
from learning.tf_util import limit_tf_threads
from tests.toy_env import PointMassEnv, register_small_net, toy_args, write_agent_file

limit_tf_threads()
register_small_net()

REWARDS = [1.0, 0.5, 0.25]
VALS = [2.0, 3.0, 4.0]          # V(s_0..s_2)
# gamma 0.9, lambda 0.8, worked by hand:
#   R2 = r2 + g V_end;  R1 = r1 + g (0.2 V(s2) + 0.8 R2);  R0 = r0 + g (0.2 V(s1) + 0.8 R1)
HAND = {
    Terminate.Null: [4.8808, 4.64, 4.75],       # V_end = critic(s_3) = 5
    Terminate.Fail: [2.548, 1.4, 0.25],         # V_end = 0
    Terminate.Succ: [7.2136, 7.88, 9.25],       # V_end = r_max / (1 - g) = 10
}
END_VALUE = {Terminate.Null: 5.0, Terminate.Fail: 0.0, Terminate.Succ: 10.0}


@pytest.mark.parametrize("terminate", list(HAND))
def test_compute_return_hand_values(terminate):
    got = compute_return(REWARDS, 0.9, 0.8, VALS + [END_VALUE[terminate]])
    np.testing.assert_allclose(got, HAND[terminate], rtol=1e-12)


def test_compute_return_other_gamma_lambda():
    # gamma 0.5, lambda 0.5: R1 = 1 + 0.5 * 4 = 3; R0 = 1 + 0.5 (0.5 * 2 + 0.5 * 3) = 2.25
    np.testing.assert_allclose(compute_return([1.0, 1.0], 0.5, 0.5, [0.0, 2.0, 4.0]), [2.25, 3.0])


@pytest.mark.parametrize("gamma", [0.0, 0.5, 0.95])
def test_lambda_limits(gamma):
    r = np.array([0.3, 1.0, -0.2, 0.7])
    v = np.array([1.0, -2.0, 0.5, 3.0, 1.5])
    td0 = r + gamma * v[1:]                                  # lambda 0: one-step targets
    np.testing.assert_allclose(compute_return(r, gamma, 0.0, v), td0, rtol=1e-12)
    mc = [sum(gamma ** (k - t) * r[k] for k in range(t, 4)) + gamma ** (4 - t) * v[4] for t in range(4)]
    np.testing.assert_allclose(compute_return(r, gamma, 1.0, v), mc, rtol=1e-12)   # lambda 1: Monte Carlo


def _path(terminate):
    path = Path()
    for v in VALS + [END_VALUE[Terminate.Null]]:
        path.states.append(np.array([v, 0, 0, 0]))
        path.goals.append(np.zeros(0))
    for r in REWARDS:
        path.actions.append(np.array([0.1, -0.1]))
        path.logps.append(-1.0)
        path.flags.append(1)
        path.rewards.append(r)
    path.terminate = terminate
    return path


@pytest.fixture
def agent(tmp_path):
    world = RLWorld(PointMassEnv(), toy_args(write_agent_file(tmp_path / "a.txt", Discount=0.9, TDLambda=0.8)))
    agent = world.agents[0]
    agent._eval_critic = lambda states, goals: states[:, 0].astype(np.float64)   # V(s) = s[0]
    return agent


def test_ppo_batch_returns_and_advantages(agent):
    assert (agent.val_fail, agent.val_succ) == (0.0, pytest.approx(10.0))
    for terminate in HAND:
        agent.replay_buffer.store(_path(terminate))
    paths = agent.replay_buffer.path_slots()
    idx = np.concatenate(paths)
    is_end = agent.replay_buffer.is_path_end(idx)
    vals = agent._compute_batch_vals(idx, is_end)
    new_vals = agent._compute_batch_new_vals(paths, agent._fetch_batch_rewards(idx), vals)
    for k, terminate in enumerate(HAND):
        pos = slice(4 * k, 4 * k + 3)
        assert vals[4 * k + 3] == pytest.approx(END_VALUE[terminate])
        np.testing.assert_allclose(new_vals[pos], HAND[terminate], rtol=1e-6)
        np.testing.assert_allclose(new_vals[pos] - vals[pos], np.array(HAND[terminate]) - VALS, rtol=1e-6)


def test_ppo_step_logs_local_advantage_stats(agent):
    for terminate in HAND:
        agent.replay_buffer.store(_path(terminate))
    agent._train_step()
    agent.logger.dump_tabular()
    adv = np.concatenate([np.array(HAND[t]) - VALS for t in HAND])
    assert agent.logger.last_row["Adv_Mean"] == pytest.approx(adv.mean(), rel=1e-6)
    assert agent.logger.last_row["Adv_Std"] == pytest.approx(adv.std(), rel=1e-6)
