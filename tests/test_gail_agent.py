"""GAILAgent: the discriminator's loss and gradients and both rewards against hand computations;
config errors; training on the toy point mass with the PPO and the TRPO step (rewards from the
discriminator, log columns, checkpoint names, resume)."""

import numpy as np
import pytest
import tensorflow as tf

from app.rollout import update_world
from learning.agent_builder import load_agent_config
from learning.agents.gail_agent import GAILAgent
from learning.checkpoint import read_checkpoint
from learning.resume_state import read_resume_state
from learning.configs.config import ConfigError
from learning.disc_losses import disc_reward, gail_disc_loss
from learning.rl_world import RLWorld
from learning.tf_util import limit_tf_threads, seed_rank
from tests.gail_toy import TRPO_KEYS, record_toy_demos, write_gail_agent_file
from tests.toy_env import PointMassEnv, register_small_net, toy_args

limit_tf_threads()
register_small_net()

DISC_COLUMNS = ["Disc_Loss", "Disc_Acc_Expert", "Disc_Acc_Agent", "Disc_Entropy", "Disc_Reward_Mean",
                "Disc_Reward_Std", "Disc_Reward_Expert", "Grad_Penalty"]
TRPO_COLUMNS = ["Critic_Loss", "Actor_Loss", "KL", "Line_Search_Steps", "Action_Std", "Value_KL",
                "Value_Line_Search_Steps", "Adv_Mean", "Adv_Std"]


def softplus(x):
    return np.logaddexp(0, x)


def sigmoid(x):
    return 1 / (1 + np.exp(-x))


@pytest.fixture(scope="module")
def demo_file(tmp_path_factory):
    return record_toy_demos(tmp_path_factory.mktemp("demos") / "toy_demos.npz")


def make_world(tmp_path, demo_file, *extra, **overrides):
    agent_file = write_gail_agent_file(tmp_path / "gail_agent.txt", **overrides)
    return RLWorld(PointMassEnv(seed=3), toy_args(agent_file, "--demo_file", demo_file, *extra))


def read_log(path):
    lines = path.read_text().splitlines()
    return lines[0].split(), np.array([list(map(float, line.split())) for line in lines[1:]])


# ---- pure formulas ----

def test_disc_loss_at_zero_logits_by_hand():
    """D = 0 everywhere: each class's cross-entropy is log 2 and each entropy log 2, so the loss is
    2 log 2 - 0.001 (log 2 + log 2) = 1.998 log 2; accuracies 0 (a zero logit is right for neither class)."""
    zeros = tf.zeros([3])
    loss, info = gail_disc_loss(zeros, tf.zeros([5]), 0.001)
    assert float(loss) == pytest.approx(1.998 * np.log(2), rel=1e-6)
    assert float(info["entropy"]) == pytest.approx(np.log(2), rel=1e-6)
    assert float(info["acc_expert"]) == 0.0 and float(info["acc_agent"]) == 0.0


@pytest.mark.parametrize("gp", [0.0, 2.0])
def test_disc_loss_and_gradient_with_entropy_bonus_by_hand(tmp_path, demo_file, gp):
    """A linear discriminator (no hidden layer) D(x) = w . x + b on 6-d inputs, w = (1, -2, 0...),
    b = 0.5: expert e1, e2, e1 + e2 -> D = 1.5, -1.5, -0.5; agent -e1, e2 -> D = -0.5, -1.5.
    loss = mean_e [softplus(-D) - c H] + mean_a [softplus(D) - c H], H = softplus(D) - sigmoid(D) D;
    dloss/dD_i = (sigmoid(D_i) - label_i - c H'(D_i)) / n_class with H'(D) = -sigmoid'(D) D.
    Gradient penalty gp: dD/dx = w at every expert sample, so it adds gp 0.5 |w|^2 = 2.5 gp to the
    loss and gp w to the kernel's gradient (none to the bias)."""
    world = make_world(tmp_path, demo_file, DiscHiddenLayers=0, DiscEntropyCoef=0.1, DiscGradPenalty=gp)
    agent = world.agents[0]
    kernel, bias = agent.disc.trainable_variables()
    assert np.all(kernel.numpy() == 0) and np.all(bias.numpy() == 0)      # the logit layer starts at 0
    w = np.array([1.0, -2.0, 0, 0, 0, 0])
    kernel.assign(w[:, None].astype(np.float32))
    bias.assign([0.5])
    eye = np.eye(6)
    expert = np.stack([eye[0], eye[1], eye[0] + eye[1]])
    agent_x = np.stack([-eye[0], eye[1]])
    info, grads = agent._disc_step(tf.constant(expert, tf.float32), tf.constant(agent_x, tf.float32))
    d_e, d_a = expert @ w + 0.5, agent_x @ w + 0.5
    np.testing.assert_allclose(d_e, [1.5, -1.5, -0.5])

    def ent(d):
        return softplus(d) - sigmoid(d) * d

    expected = np.mean(softplus(-d_e) - 0.1 * ent(d_e)) + np.mean(softplus(d_a) - 0.1 * ent(d_a)) + gp * 2.5
    assert float(info["loss"]) == pytest.approx(expected, rel=1e-6)
    assert float(info["grad_penalty"]) == pytest.approx(2.5, rel=1e-6)
    assert float(info["acc_expert"]) == pytest.approx(1 / 3) and float(info["acc_agent"]) == 1.0

    def dloss(d, label, n):
        return (sigmoid(d) - label + 0.1 * sigmoid(d) * (1 - sigmoid(d)) * d) / n

    g_e, g_a = dloss(d_e, 1, 3), dloss(d_a, 0, 2)
    np.testing.assert_allclose(grads[0].numpy()[:, 0], expert.T @ g_e + agent_x.T @ g_a + gp * w, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(grads[1].numpy(), [g_e.sum() + g_a.sum()], rtol=1e-5)


def test_both_reward_forms():
    logits = np.array([-30.0, -1.0, 0.0, 2.0, 30.0])
    p = sigmoid(logits)
    # -log(1 - D): 0 for policy-like samples, large for expert-like ones
    np.testing.assert_allclose(disc_reward(logits, "neg_log_one_minus_d", 2.0), (-2 * np.log1p(-p[:4])).tolist()
                               + [2 * 30.0], rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(disc_reward([0.0], "neg_log_one_minus_d", 1.0), [np.log(2)])
    # log D: 0 for expert-like samples, very negative for policy-like ones
    np.testing.assert_allclose(disc_reward(logits, "log_d", 0.5), [-15.0] + (0.5 * np.log(p[1:])).tolist(),
                               rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(disc_reward([0.0], "log_d", 1.0), [-np.log(2)])


# ---- config ----

def test_config_errors_name_the_key(tmp_path, demo_file):
    cls, config, _ = load_agent_config(write_gail_agent_file(tmp_path / "a.txt"))
    assert cls is GAILAgent and config.policy_step == "PPO" and config.disc_stepsize == 0.01
    assert (config.trpo_max_kl, config.trpo_damping, config.trpo_cg_iters, config.trpo_fvp_subsample) == \
        (0.01, 0.1, 10, 0.1)
    cases = [("b", {"DiscStepSize": 0.1}, "b.txt: DiscStepSize: unknown key"),
             ("c", {"PolicyStep": "A2C"}, "c.txt: PolicyStep: is 'A2C', expected one of PPO, TRPO"),
             ("d", {"TRPOFVPSubsample": 0.0}, r"d.txt: TRPOFVPSubsample: must be in \(0, 1\]"),
             ("e", {"DiscRewardType": "lsgan"}, "e.txt: DiscRewardType: is 'lsgan', expected one of"),
             ("f", {"TRPOCGIters": 1.5}, "f.txt: TRPOCGIters: expects an integer, got 1.5"),
             ("g", {"DiscEntropyCoef": -1}, "g.txt: DiscEntropyCoef: must be >= 0"),
             ("h", {"TRPOMaxKL": 0}, "h.txt: TRPOMaxKL: must be > 0"),
             ("j", {"DiscInputs": "action"}, "j.txt: DiscInputs: is 'action', expected one of state_action, state"),
             ("k", {"DiscInputs": "state", "DiscExpertActionNoise": True},
              'k.txt: DiscExpertActionNoise: noise on the expert.s actions, which DiscInputs "state" does not show')]
    for name, overrides, message in cases:
        with pytest.raises(ConfigError, match=message):
            load_agent_config(write_gail_agent_file(tmp_path / f"{name}.txt", **overrides))
    with pytest.raises(ConfigError, match="AgentType: GAIL needs --demo_file"):
        RLWorld(PointMassEnv(seed=0), toy_args(write_gail_agent_file(tmp_path / "i.txt")))


def test_demo_sizes_checked_against_the_env(tmp_path, demo_file):
    from tests.toy_env import ShapedEnv
    agent_file = write_gail_agent_file(tmp_path / "a.txt")
    with pytest.raises(ValueError, match=r"toy_demos.npz: state_size: 4 in the demonstrations, 6 in the scene"):
        RLWorld(ShapedEnv(6, 2), toy_args(agent_file, "--demo_file", demo_file))


def test_demo_episodes_keeps_the_first_ones(tmp_path, demo_file):
    """--demo_episodes N: the discriminator's expert samples are the file's first N episodes."""
    from learning.demos import load_demos
    full = load_demos(demo_file)
    assert full.num_episodes >= 3
    world = make_world(tmp_path, demo_file, "--demo_episodes", "2")
    agent = world.agents[0]
    end = full.episode_starts[2]
    assert agent.demos.num_episodes == 2 and agent.demos.metadata["num_steps"] == end
    np.testing.assert_array_equal(agent.expert_x[:, :full.states.shape[1]], full.states[:end].astype(np.float64))
    with pytest.raises(ValueError, match=rf"toy_demos.npz: --demo_episodes {full.num_episodes + 1}: the file "
                                         rf"holds {full.num_episodes} episodes"):
        make_world(tmp_path, demo_file, "--demo_episodes", str(full.num_episodes + 1))


def test_expert_action_noise_is_the_policys(tmp_path, demo_file):
    """DiscExpertActionNoise: the discriminator's expert actions carry the policy's noise (std in
    normalised action units), the states none; off by default."""
    noise = {"Rate": 1, "Noise": 0.3}
    world = make_world(tmp_path, demo_file, DiscExpertActionNoise=True, ExpParamsBeg=noise, ExpParamsEnd=noise)
    agent = world.agents[0]
    assert not load_agent_config(write_gail_agent_file(tmp_path / "off.txt"))[1].disc_expert_action_noise
    x = agent.expert_x[np.random.default_rng(0).integers(0, len(agent.expert_x), 40000)]
    np.random.seed(1)
    a_norm = agent.a_norm
    kept = a_norm.mean, a_norm.std
    a_norm.mean, a_norm.std = np.array([0.1, -0.2]), np.array([2.0, 0.5])     # the toy's is the identity
    noisy = agent._with_policy_noise(x)
    n = agent.get_state_size()
    np.testing.assert_array_equal(noisy[:, :n], x[:, :n])
    dev = noisy[:, n:] - x[:, n:]
    np.testing.assert_allclose(dev.std(axis=0), [0.6, 0.15], rtol=0.03)
    np.testing.assert_allclose(dev.mean(axis=0), 0.0, atol=0.01)
    a_norm.mean, a_norm.std = kept

    seen = []
    step = agent._disc_step

    def spy(norm_expert, norm_agent):
        seen.append(norm_expert.numpy() if hasattr(norm_expert, "numpy") else np.array(norm_expert))
        return step(norm_expert, norm_agent)

    agent._disc_step = spy
    while agent.iter < 1:
        update_world(world, 1 / 60)
    norm_actions = seen[0][:, n:]
    expert_norm_actions = agent.disc_norm.normalize(agent.expert_x)[:, n:]
    # no row of the batch is an expert action as recorded
    gaps = np.abs(norm_actions[:, None, :] - expert_norm_actions[None, :, :]).max(axis=2).min(axis=1)
    assert gaps.min() > 1e-4


def test_state_only_discriminator_sees_the_states(tmp_path, demo_file):
    """DiscInputs "state": the discriminator's rows are the states alone, the expert's and the
    agent's; its normaliser spans the state; the agent's rewards do not change with its actions."""
    from learning.demos import load_demos
    world = make_world(tmp_path, demo_file, DiscInputs="state")
    agent = world.agents[0]
    n = agent.get_state_size()
    assert agent.disc_norm.mean.shape == (n,)
    np.testing.assert_array_equal(agent.expert_x, load_demos(demo_file).states.astype(np.float64))
    fetch, checked = agent._fetch_batch_rewards, []

    def fetch_checked(idx):
        """At the training step: the rows are the stored states; other actions give the same rewards."""
        buf = agent.replay_buffer
        np.testing.assert_array_equal(agent._agent_disc_inputs(idx), buf.get("states", idx).astype(np.float64))
        rewards = fetch(idx)
        buf.data["actions"][idx] += 1.0
        np.testing.assert_array_equal(fetch(idx), rewards)
        buf.data["actions"][idx] -= 1.0
        checked.append(len(idx))
        return rewards

    agent._fetch_batch_rewards = fetch_checked
    while agent.iter < 1:
        update_world(world, 1 / 60)
    assert checked and checked[0] > 0
    (tmp_path / "sa").mkdir()
    both = make_world(tmp_path / "sa", demo_file).agents[0]
    assert both.disc_norm.mean.shape == (n + both.get_action_size(),)


def test_project_agent_files():
    _, ppo, _ = load_agent_config("data/agents/ct_agent_humanoid_gail.txt")
    _, trpo, _ = load_agent_config("data/agents/ct_agent_humanoid_gail_trpo.txt")
    assert (ppo.policy_step, trpo.policy_step) == ("PPO", "TRPO")
    for cfg in (ppo, trpo):
        assert (cfg.disc_hidden_layers, cfg.disc_hidden_units, cfg.disc_activation, cfg.disc_stepsize,
                cfg.disc_entropy_coef, cfg.disc_grad_penalty) == (2, 100, "tanh", 0.001, 0.001, 10)
    assert (trpo.trpo_max_kl, trpo.trpo_damping, trpo.trpo_cg_iters, trpo.trpo_fvp_subsample) == (0.01, 0.1, 10, 0.1)
    assert trpo.exp_params_end.rate == 1 and trpo.trpo_learn_std
    assert ppo.exp_params_beg.noise == ppo.exp_params_end.noise == trpo.exp_params_beg.noise == 0.2


# ---- training on the toy env ----

@pytest.mark.parametrize("step", ["PPO", "TRPO"])
def test_training_rewards_logs_checkpoint_resume(tmp_path, demo_file, step):
    seed_rank(7)
    out = tmp_path / "out"
    extra = TRPO_KEYS if step == "TRPO" else {}
    world = make_world(tmp_path, demo_file, "--output_path", out, **extra)
    agent = world.agents[0]
    fetched = []
    fetch = agent._fetch_batch_rewards

    def fetch_and_check(idx):
        rewards = fetch(idx)
        buf = agent.replay_buffer
        x = np.concatenate([buf.get("states", idx).astype(np.float64), buf.get("actions", idx)], axis=1)
        logits = agent.calc_disc_logits(x)
        valid = ~buf.is_path_end(idx)
        np.testing.assert_allclose(rewards[valid], softplus(logits[valid]), rtol=1e-9)
        assert not np.allclose(rewards[valid], buf.get("rewards", idx)[valid])   # not the env's reward
        fetched.append(True)
        return rewards

    agent._fetch_batch_rewards = fetch_and_check
    while agent.iter < 6:
        update_world(world, 1 / 60)
    assert fetched
    assert agent.disc_norm.count > 0

    header, rows = read_log(out / "agent0_log.txt")
    assert header[-len(DISC_COLUMNS):] == DISC_COLUMNS
    if step == "TRPO":
        assert header[-len(DISC_COLUMNS) - len(TRPO_COLUMNS):-len(DISC_COLUMNS)] == TRPO_COLUMNS
    col = {name: rows[:, i] for i, name in enumerate(header)}
    accuracy = 0.5 * (col["Disc_Acc_Expert"] + col["Disc_Acc_Agent"])
    assert accuracy[-2:].mean() > 0.6, accuracy
    assert np.all(col["Disc_Reward_Mean"] > 0)
    if step == "TRPO":
        assert np.all(col["KL"] <= 2 * 0.01 + 1e-9) and np.any(col["KL"] > 0)
        assert np.all((col["Line_Search_Steps"] >= 0) & (col["Line_Search_Steps"] <= 10))

    agent.save_outputs()
    saved = read_checkpoint(out / "agent0_model.ckpt")
    for name in ("agent/main/disc/0/dense/kernel", "agent/main/disc/1/dense/bias",
                 "agent/main/disc/disc_logits/kernel", "agent/main/disc/disc_logits/bias",
                 "agent/resource/disc_norm/mean", "agent/resource/disc_norm/std", "agent/resource/disc_norm/count",
                 "agent/main/critic/0/dense/kernel"):
        assert name in saved, name
    state_size = 4 + (1 if step == "TRPO" else 0)     # the time feature
    assert saved["agent/main/critic/0/dense/kernel"].shape[0] == state_size
    assert read_resume_state(out / "agent0_model.ckpt")["solver/disc/v0"].shape == (6, 32)
    logstd = saved["agent/main/actor/dist_gauss_diag/logstd/bias"]
    if step == "TRPO":     # learned by the trust-region step from log(Noise), logged as Action_Std
        assert np.abs(logstd - np.log(agent.config.exp_params_beg.noise)).max() > 1e-3
        assert col["Action_Std"][-1] == pytest.approx(np.exp(logstd).mean(), rel=1e-5)
    else:
        np.testing.assert_allclose(logstd, np.log(agent.config.exp_params_beg.noise), rtol=1e-6)

    resumed = make_world(tmp_path, demo_file, "--output_path", out, "--resume", "true", **extra).agents[0]
    assert resumed.iter == agent.iter
    for name, var in agent.disc.variables.items():
        np.testing.assert_array_equal(resumed.disc.variables[name].numpy(), var.numpy())
    for a, b in zip(resumed.disc_solver.state()["v_slots"], agent.disc_solver.state()["v_slots"]):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(resumed.disc_norm.mean_sq, agent.disc_norm.mean_sq)
    assert resumed.disc_solver.iter == agent.disc_solver.iter
    np.testing.assert_array_equal(resumed.model.logstd.numpy(), agent.model.logstd.numpy())


def test_log_d_reward_and_terminal_values(tmp_path, demo_file):
    world = make_world(tmp_path, demo_file, DiscRewardType="log_d", RewardScale=2.0)
    agent = world.agents[0]
    assert (agent.val_min, agent.val_max) == (-np.inf, 0.0)
    assert agent.val_fail == agent.val_succ == 0.0
    x = agent.expert_x[:5]
    np.testing.assert_allclose(agent.calc_disc_rewards(x), 2.0 * np.log(sigmoid(agent.calc_disc_logits(x))))
