"""AMPAgent: discriminator losses, gradient penalty and style reward against hand-computed values;
buffers, normaliser, rewards, logs and checkpoints on a toy AMP environment."""
import json

import numpy as np
import pytest
import tensorflow as tf

from app.rollout import update_world
from learning.agent_builder import load_agent_config
from learning.agents.amp_agent import AMPAgent
from learning.amp_buffer import AMPObsBuffer
from learning.checkpoint import read_checkpoint
from learning.configs.config import ConfigError
from learning.disc_losses import style_reward
from learning.nets.net import NP_OPS, Net
from learning.nets.net_builder import register_net
from learning.rl_world import RLWorld
from learning.tf_util import limit_tf_threads, seed_rank
from tests.toy_env import SMALL_NET, TOY_AGENT, PointMassEnv, register_small_net, toy_args

limit_tf_threads()
register_small_net()

IDENTITY_NET = "identity_trunk"
PPO_COLUMNS = ["Iteration", "Wall_Time", "Samples", "Train_Return", "Test_Return", "State_Mean",
               "State_Std", "Goal_Mean", "Goal_Std", "Exp_Rate", "Exp_Noise", "Critic_Loss",
               "Critic_Stepsize", "Actor_Loss", "Actor_Stepsize", "Clip_Frac", "Adv_Mean", "Adv_Std"]
AMP_COLUMNS = ["Disc_Loss", "Disc_Acc_Expert", "Disc_Acc_Agent", "Disc_Stepsize", "Disc_Steps", "Disc_Prob",
               "Disc_Abs_Logit", "Disc_Reward_Mean", "Disc_Reward_Std", "Grad_Penalty"]


class IdentityTrunk(Net):
    """No layers: D(x) is then the logit layer alone, w . x + b."""

    def __init__(self, input_sizes, scope):
        super().__init__(scope)
        self.out_size = sum(input_sizes)

    def forward(self, ops, params, inputs):
        return ops.concat(inputs)


register_net(IDENTITY_NET, IdentityTrunk)


class PointMassAMPEnv(PointMassEnv):
    """The toy point mass with AMP observations [pos, vel] now and at the previous decision.
    The expert circles the origin at radius 1 and unit speed."""

    def __init__(self, task_reward=False, **kwargs):
        self.task_reward = task_reward
        super().__init__(**kwargs)

    def reset(self):
        super().reset()
        self.prev = np.concatenate([self.pos, self.vel])
        self.save_hist = False

    def set_action(self, agent_id, action):
        super().set_action(agent_id, action)
        self.save_hist = True

    def update(self, timestep):
        if self.save_hist:       # the state the last decision was taken in
            self.prev, self.save_hist = np.concatenate([self.pos, self.vel]), False
        super().update(timestep)

    def enable_amp_task_reward(self):
        return self.task_reward

    def set_amp_obs_steps(self, num_steps):
        if num_steps != 2:
            raise ValueError(f"the point mass's AMP observation is a pair, not {num_steps} states")

    def get_amp_obs_size(self):
        return 8

    def get_amp_obs_offset(self):
        return np.zeros(8)

    def get_amp_obs_scale(self):
        return np.ones(8)

    def get_amp_obs_norm_group(self):
        return np.zeros(8, dtype=np.int32)

    def record_amp_obs_agent(self, agent_id):
        return np.concatenate([self.pos, self.vel, self.prev])

    def record_amp_obs_expert(self, agent_id):
        theta = self.rng.uniform(0, 2 * np.pi)
        prev = theta - 1 / 30
        return np.array([np.cos(theta), np.sin(theta), -np.sin(theta), np.cos(theta),
                         np.cos(prev), np.sin(prev), -np.sin(prev), np.cos(prev)])


AMP_KEYS = {
    "AgentType": "AMP", "TaskRewardLerp": 0.5,
    "DiscNet": SMALL_NET, "DiscInitOutputScale": 1, "DiscStepSize": 0.01, "DiscMomentum": 0.9,
    "DiscWeightDecay": 0.0005, "DiscLogitRegWeight": 0.05, "DiscGradPenalty": 10,
    "DiscBatchSize": 64, "DiscStepsPerBatch": 2, "DiscExpertBufferSize": 5000, "DiscAgentBufferSize": 5000,
    "RewardScale": 2,
}


def write_amp_agent_file(path, **overrides):
    """The toy AMP agent file with `overrides`; an override of None leaves its key out."""
    data = {**TOY_AGENT, **AMP_KEYS, **overrides}
    path.write_text(json.dumps({k: v for k, v in data.items() if v is not None}, indent=1))
    return path


def make_world(tmp_path, *extra, env=None, **overrides):
    agent_file = write_amp_agent_file(tmp_path / "amp_agent.txt", **overrides)
    return RLWorld(env or PointMassAMPEnv(seed=3), toy_args(agent_file, *extra))


def read_log(path):
    lines = path.read_text().splitlines()
    return lines[0].split(), np.array([list(map(float, line.split())) for line in lines[1:]])


# ---- pure formulas ----

def test_style_reward_by_hand():
    logits = np.array([-2.0, -1.0, 0.0, 1.0, 2.0, 3.0, 4.0])
    # 1 - 0.25 (1 - D)^2: -1.25, 0, 0.75, 1, 0.75, 0, -1.25 -> floored at 0, times 2
    np.testing.assert_allclose(style_reward(logits, 2.0), [0, 0, 1.5, 2, 1.5, 0, 0])


def test_obs_buffer_fills_then_overwrites_random_slots():
    np.random.seed(0)
    buf = AMPObsBuffer(5, 1)
    buf.store(np.arange(3)[:, None])
    np.testing.assert_array_equal(buf.data[:3, 0], [0, 1, 2])
    buf.store(np.arange(10, 14)[:, None])       # 2 free slots, then 2 of the 3 old ones
    assert buf.size == 5 and buf.total_count == 7
    np.testing.assert_array_equal(buf.data[3:, 0], [10, 11])
    assert len(set(buf.data[:3, 0]) & {0, 1, 2}) == 1        # one old value kept
    assert {12, 13} <= set(buf.data[:3, 0])
    before = buf.data[:, 0].copy()
    buf.store(np.array([[20], [21]]))
    changed = np.nonzero(buf.data[:, 0] != before)[0]
    assert len(changed) == 2 and set(buf.data[changed, 0]) == {20, 21}
    assert set(buf.sample(200)[:, 0]) == set(buf.data[:, 0])
    with pytest.raises(ValueError, match="shorter than"):
        buf.store(np.zeros((5, 1)))


def test_obs_buffer_overwrites_uniform_distinct_slots_of_a_full_buffer():
    """A path's observations into a full buffer land in distinct slots, every slot equally likely."""
    np.random.seed(1)
    capacity = 1000
    buf = AMPObsBuffer(capacity, 1)
    buf.store(np.zeros((capacity - 1, 1)))
    buf.store(np.zeros((1, 1)))
    assert buf.size == capacity
    hits = np.zeros(capacity)
    for i in range(1, 401):
        values = np.arange(25) + 100.0 * i
        before = buf.data[:, 0].copy()
        buf.store(values[:, None])
        changed = np.nonzero(buf.data[:, 0] != before)[0]
        assert len(changed) == 25 and set(buf.data[changed, 0]) == set(values)
        hits[changed] += 1
    # 10,000 overwrites over 1000 slots: 10 per slot on average, binomial spread (std ~3.2; the
    # bounds below hold for 1000 slots with probability > 0.9)
    assert hits.sum() == 10000 and 1 <= hits.min() and hits.max() <= 26
    assert abs(hits[:500].sum() / hits.sum() - 0.5) < 0.02 and abs(hits[::2].sum() / hits.sum() - 0.5) < 0.02


# ---- the discriminator's step on tiny nets ----

def disc_agent(tmp_path, **overrides):
    """An agent whose discriminator is linear unless DiscNet says otherwise."""
    agent_file = write_amp_agent_file(tmp_path / "disc.txt", **{"DiscNet": IDENTITY_NET, **overrides})
    env = PointMassAMPEnv(seed=0)
    world = RLWorld(env, toy_args(agent_file))
    return world.agents[0]


def disc_grads(agent, norm_expert, norm_agent):
    """(info, gradients of the discriminator's variables) of one step, before the solver applies them."""
    info, (grads,) = agent._disc_grads(norm_expert, norm_agent)
    return info, grads


def step_linear_disc(agent):
    """The discriminator step with D(x) = (3, 4, 0...) . x + 0.5 on expert e1, e2 and agent -e1, -e2."""
    kernel = np.zeros((8, 1), np.float32)
    kernel[:2, 0] = (3, 4)
    agent.disc.logit_kernel.assign(kernel)
    agent.disc.variables["agent/main/disc/disc_logits/bias"].assign([0.5])
    eye = np.eye(8, dtype=np.float32)[:2]
    return disc_grads(agent, tf.constant(eye), tf.constant(-eye))


def test_disc_loss_and_gradients_by_hand(tmp_path):
    """D(x) = w . x + b on 8-d inputs, w = (3, 4, 0...), b = 0.5.
    Expert x: e1, e2 -> D = 3.5, 4.5; agent x: -e1, -e2 -> D = -2.5, -3.5.
    LSGAN: 0.5 [mean 0.5 (2.5^2, 3.5^2) + mean 0.5 (1.5^2, 2.5^2)] = 0.5 (4.625 + 2.125) = 3.375
    weight decay = logit reg = l2(w) = 12.5; gradient penalty = 0.5 |w|^2 = 12.5
    total = 3.375 + 0.1 * 12.5 + 0.05 * 12.5 + 10 * 12.5 = 130.25
    dL/db = 0.5 [mean(D_e - 1) + mean(D_a + 1)] = 0.5 (3 - 2) = 0.5
    dL/dw = 0.5 [mean((D_e - 1) x_e) + mean((D_a + 1) x_a)] + (0.1 + 0.05 + 10) w
          = (1.0, 1.5) + 10.15 (3, 4) = (31.45, 42.1)."""
    agent = disc_agent(tmp_path, DiscWeightDecay=0.1, DiscLogitRegWeight=0.05, DiscGradPenalty=10)
    info, grads = step_linear_disc(agent)
    assert float(info["loss"]) == pytest.approx(130.25)
    assert float(info["grad_penalty"]) == pytest.approx(12.5)
    assert float(info["acc_expert"]) == 1.0 and float(info["acc_agent"]) == 1.0
    assert float(info["abs_logit"]) == pytest.approx(3.0)
    assert float(info["prob_agent"]) == pytest.approx(np.mean(1 / (1 + np.exp([2.5, 3.5]))))
    grad_kernel, grad_bias = grads
    np.testing.assert_allclose(grad_kernel.numpy()[:, 0], [31.45, 42.1, 0, 0, 0, 0, 0, 0], rtol=1e-6)
    np.testing.assert_allclose(grad_bias.numpy(), [0.5], rtol=1e-6)


def test_grad_penalty_on_a_two_layer_net_matches_finite_differences(tmp_path):
    """0.5 mean |dD/dx|^2 through ReLU layers, against central differences of the numpy forward."""
    seed_rank(5)
    agent = disc_agent(tmp_path, DiscNet=SMALL_NET, DiscWeightDecay=0, DiscLogitRegWeight=0,
                              DiscGradPenalty=1)
    disc = agent.disc
    params = {name: v.numpy().astype(np.float64) for name, v in disc.variables.items()}

    def forward(x):
        return disc.head.forward(NP_OPS, params, [disc.trunk.forward(NP_OPS, params, [x])])

    rng = np.random.default_rng(1)
    expert, agent_obs = rng.normal(size=(6, 8)), rng.normal(size=(6, 8))
    grads = np.zeros_like(expert)
    for k in range(8):
        step = np.zeros(8)
        step[k] = 1e-5
        grads[:, k] = (forward(expert + step) - forward(expert - step)) / 2e-5
    penalty = 0.5 * np.mean(np.sum(grads ** 2, axis=1))
    d_e, d_a = forward(expert), forward(agent_obs)
    lsgan = 0.5 * (np.mean(0.5 * (d_e - 1) ** 2) + np.mean(0.5 * (d_a + 1) ** 2))
    info, _ = disc_grads(agent, tf.constant(expert, tf.float32), tf.constant(agent_obs, tf.float32))
    assert float(info["grad_penalty"]) == pytest.approx(penalty, rel=1e-3)
    assert float(info["loss"]) == pytest.approx(lsgan + penalty, rel=1e-3)


def test_config_validation(tmp_path):
    cls, config, _ = load_agent_config(write_amp_agent_file(tmp_path / "a.txt"))
    assert cls is AMPAgent and config.reward_scale == 2 and config.disc_steps_per_batch == 2
    data = {**TOY_AGENT, **AMP_KEYS}
    del data["DiscNet"]
    (tmp_path / "b.txt").write_text(json.dumps(data))
    with pytest.raises(ConfigError, match="b.txt: DiscNet: required key missing"):
        load_agent_config(tmp_path / "b.txt")
    with pytest.raises(ConfigError, match="c.txt: TaskRewardLerp: must be in"):
        load_agent_config(write_amp_agent_file(tmp_path / "c.txt", TaskRewardLerp=1.5))
    with pytest.raises(ConfigError, match="d.txt: DiscStepsize: unknown key"):
        load_agent_config(write_amp_agent_file(tmp_path / "d.txt", DiscStepsize=0.1))


def test_project_agent_files():
    _, amp, _ = load_agent_config("data/agents/ct_agent_humanoid_amp.txt")
    _, task, _ = load_agent_config("data/agents/ct_agent_humanoid_amp_task.txt")
    assert (amp.disc_net, amp.disc_stepsize, amp.disc_grad_penalty, amp.reward_scale) == \
        ("fc_2layers_1024units", 1e-5, 10, 2)
    assert (amp.discount, amp.exp_anneal_samples, amp.disc_steps_per_batch) == (0.95, 2e8, 2)
    assert (task.actor_net, task.critic_net, task.discount, task.task_reward_lerp) == \
        ("fc_2layers_gated_1024units", "fc_2layers_gated_1024units", 0.99, 0.5)


# ---- training on the toy env ----

def test_training_loop_buffers_rewards_logs_checkpoint(tmp_path):
    seed_rank(7)
    out = tmp_path / "out"
    world = make_world(tmp_path, "--output_path", out, OutputIters=2, TestEpisodes=0)
    agent = world.agents[0]
    stored = []
    store = agent._store_path

    def store_and_count(path):
        path_id = store(path)
        n = path.pathlength()
        assert len(path.extras["amp_obs_expert"]) == len(path.extras["amp_obs_agent"]) == n
        stored.append(n)
        return path_id

    agent._store_path = store_and_count
    fetched = {}
    fetch = agent._fetch_batch_rewards

    def fetch_and_check(idx):
        rewards = fetch(idx)
        logits = agent.calc_disc_logits(agent.replay_buffer.get("amp_obs_agent", idx))
        np.testing.assert_allclose(rewards, style_reward(logits, 2.0))
        fetched["rewards"] = rewards
        return rewards

    agent._fetch_batch_rewards = fetch_and_check
    while agent.iter < 6:
        update_world(world, 1 / 60)

    assert agent.disc_expert_buffer.total_count == agent.disc_agent_buffer.total_count == sum(stored)
    assert agent.amp_obs_norm.count == 2 * sum(stored)     # fed both kinds
    assert "rewards" in fetched

    header, rows = read_log(out / "agent0_log.txt")
    assert header == PPO_COLUMNS + AMP_COLUMNS
    col = {name: rows[:, i] for i, name in enumerate(header)}
    assert np.all(col["Disc_Stepsize"] == pytest.approx(0.01))
    assert np.all(np.diff(col["Disc_Steps"]) > 0)
    assert col["Disc_Acc_Expert"][-1] > 0.5 and col["Disc_Acc_Agent"][-1] > 0.5
    assert np.all(col["Grad_Penalty"] > 0) and np.all((col["Disc_Reward_Mean"] >= 0) & (col["Disc_Reward_Mean"] <= 2))

    agent.save_outputs()
    saved = read_checkpoint(out / "agent0_model.ckpt")
    for name in ("agent/main/disc/0/dense/kernel", "agent/main/disc/1/dense/bias",
                 "agent/main/disc/disc_logits/kernel", "agent/main/disc/disc_logits/bias",
                 "agent/main/actor/0/dense/kernel", "agent/resource/amp_obs_norm/mean",
                 "agent/resource/amp_obs_norm/std", "agent/resource/amp_obs_norm/count"):
        assert name in saved, name
    np.testing.assert_array_equal(saved["agent/main/disc/disc_logits/kernel"], agent.disc.logit_kernel.numpy())
    assert saved["agent/resource/amp_obs_norm/count"][0] == agent.amp_obs_norm.count

    (tmp_path / "b").mkdir()
    other = make_world(tmp_path / "b", env=PointMassAMPEnv(seed=9))
    other.agents[0].load_model(out / "agent0_model.ckpt")
    for name, var in agent.disc.variables.items():
        np.testing.assert_array_equal(other.agents[0].disc.variables[name].numpy(), var.numpy())
    np.testing.assert_array_equal(other.agents[0].amp_obs_norm.mean, agent.amp_obs_norm.mean.astype(np.float32))


def test_task_reward_lerp_and_value_bounds(tmp_path):
    seed_rank(8)
    world = make_world(tmp_path, env=PointMassAMPEnv(seed=4, task_reward=True), TestEpisodes=0, Discount=0.9)
    agent = world.agents[0]
    # targets clipped to what lerped rewards can reach: 0.5 [0, 2] + 0.5 [0, 1]
    assert (agent.val_min, agent.val_max) == pytest.approx((0.0, 1.5 / 0.1))
    train_checking_rewards(world, 2, style_weight=0.5, task_weight=0.5)


def train_checking_rewards(world, iters, style_weight, task_weight):
    """Trains `iters` iterations checking each batch's rewards: style_weight times the style
    reward (scale 2) plus task_weight times the stored task reward, inside the seen range."""
    agent = world.agents[0]
    checked = []
    fetch = agent._fetch_batch_rewards

    def fetch_and_check(idx):
        rewards = fetch(idx)
        style = style_reward(agent.calc_disc_logits(agent.replay_buffer.get("amp_obs_agent", idx)), 2.0)
        task = agent.replay_buffer.get("rewards", idx)
        np.testing.assert_allclose(rewards, style_weight * style + task_weight * task)
        valid = ~agent.replay_buffer.is_path_end(idx)
        assert agent.reward_min <= rewards[valid].min() and agent.reward_max >= rewards[valid].max()
        checked.append(True)
        return rewards

    agent._fetch_batch_rewards = fetch_and_check
    while agent.iter < iters:
        update_world(world, 1 / 60)
    assert checked


def test_amp_agent_needs_amp_observations(tmp_path):
    agent_file = write_amp_agent_file(tmp_path / "a.txt")
    with pytest.raises(ConfigError, match="a.txt: AgentType: AMP needs a scene with AMP observations"):
        RLWorld(PointMassEnv(seed=0), toy_args(agent_file))


# ---- the successor's variants (amp-variants.md): BCE, penalty on both inputs, weights, replay ----

def test_bce_loss_reward_and_both_input_penalty_by_hand(tmp_path):
    """D(x) = w . x + b, w = (3, 4, 0...), b = 0.5; expert e1, e2 -> D = 3.5, 4.5; agent -e1, -e2
    -> D = -2.5, -3.5. BCE = 0.5 [mean softplus(-D_e) + mean softplus(D_a)]; with "both" the
    penalty is 0.5 |w|^2 for each input kind: 25."""
    agent = disc_agent(tmp_path, DiscLoss="bce", DiscGradPenaltyInputs="both", DiscWeightDecay=0,
                       DiscLogitRegWeight=0, DiscGradPenalty=2)
    info, grads = step_linear_disc(agent)
    softplus = lambda x: np.log1p(np.exp(x))  # noqa: E731
    bce = 0.5 * (np.mean(softplus(-np.array([3.5, 4.5]))) + np.mean(softplus(np.array([-2.5, -3.5]))))
    assert float(info["grad_penalty"]) == pytest.approx(25.0)
    assert float(info["loss"]) == pytest.approx(bce + 2 * 25.0, rel=1e-6)
    sig = lambda x: 1 / (1 + np.exp(-x))  # noqa: E731
    # dBCE/db = 0.5 [mean(s(D_e) - 1) + mean(s(D_a))]
    grad_b = 0.5 * (np.mean(sig(np.array([3.5, 4.5])) - 1) + np.mean(sig(np.array([-2.5, -3.5]))))
    np.testing.assert_allclose(grads[1].numpy(), [grad_b], rtol=1e-5)
    # reward -log(max(1 - s(D), 1e-4)) * 2: log 2 at D = 0, capped at -log(1e-4) for large D
    logits = np.array([-30.0, 0.0, 2.0, 30.0])
    expected = -np.log(np.maximum(1 - sig(logits), 1e-4)) * 2
    np.testing.assert_allclose(expected[1], 2 * np.log(2))
    np.testing.assert_allclose(agent.style_reward_fn(logits, 2.0), expected, rtol=1e-12, atol=1e-12)
    assert agent.val_max == pytest.approx(-np.log(1e-4) * 2 / (1 - agent.config.discount))


def test_bfloat16_discriminator(tmp_path):
    """DiscComputeDtype bfloat16: the layers run in bfloat16 (a linear D(x) = x_0 reads 1 + 2^-10 as 1,
    float32 keeps it), the variables and logits stay float32, and on a real net with the penalty on
    both inputs the loss and gradients from the same weights are within a few percent of float32's."""
    x = np.zeros((1, 8), np.float32)
    x[0, 0] = 1 + 2 ** -10
    kernel = np.zeros((8, 1), np.float32)
    kernel[0, 0] = 1
    logits = {}
    for dtype in ("float32", "bfloat16"):
        (tmp_path / dtype).mkdir()
        agent = disc_agent(tmp_path / dtype, DiscComputeDtype=dtype)
        agent.disc.logit_kernel.assign(kernel)
        logits[dtype] = agent.disc(tf.constant(x))
        assert logits[dtype].dtype == tf.float32
        assert all(v.dtype == tf.float32 for v in agent.disc.variables.values())
    assert float(logits["float32"][0]) == 1 + 2 ** -10 and float(logits["bfloat16"][0]) == 1.0

    batches = [tf.constant(np.random.default_rng(k).normal(size=(64, 8)), tf.float32) for k in range(2)]
    results = {}
    for dtype in ("float32", "bfloat16"):
        seed_rank(3)
        (tmp_path / f"net_{dtype}").mkdir()
        agent = disc_agent(tmp_path / f"net_{dtype}", DiscNet=SMALL_NET, DiscLoss="bce",
                           DiscGradPenaltyInputs="both", DiscGradPenalty=5, DiscComputeDtype=dtype)
        results[dtype] = agent, disc_grads(agent, *batches)
    agent32, (info32, grads32) = results["float32"]
    agent16, (info16, grads16) = results["bfloat16"]
    for name, v in agent32.disc.variables.items():
        np.testing.assert_array_equal(v.numpy(), agent16.disc.variables[name].numpy())
    for key in ("loss", "grad_penalty"):
        assert float(info16[key]) == pytest.approx(float(info32[key]), rel=0.03)
        assert float(info16[key]) != float(info32[key])
    for g32, g16 in zip(grads32, grads16):
        assert np.linalg.norm(g16.numpy() - g32.numpy()) <= 0.05 * np.linalg.norm(g32.numpy())


def test_explicit_defaults_give_the_same_step(tmp_path):
    """An agent file that spells out DeepMimic's choices (LSGAN, penalty on expert inputs, pairs,
    TaskRewardLerp 0.5) takes exactly the step of one that leaves them out."""
    batches = [tf.constant(np.random.default_rng(k).normal(size=(16, 8)), tf.float32) for k in range(2)]
    results = []
    for name, extra in (("implicit", {}), ("explicit", {"DiscLoss": "lsgan", "DiscGradPenaltyInputs": "expert",
                                                         "DiscObsSteps": 2, "TaskRewardLerp": 0.5})):
        seed_rank(3)
        (tmp_path / name).mkdir()
        agent = disc_agent(tmp_path / name, DiscNet=SMALL_NET, **extra)
        info, grads = disc_grads(agent, *batches)
        results.append((float(info["loss"]), [g.numpy() for g in grads], agent.style_weight, agent.task_weight))
    assert results[0][0] == results[1][0]
    for a, b in zip(results[0][1], results[1][1]):
        np.testing.assert_array_equal(a, b)
    assert results[0][2:] == results[1][2:] == (0.5, 0.5)


def test_reward_weights(tmp_path):
    """DiscRewardWeight r_style + TaskRewardWeight r_task, with the value range to match; refused
    beside TaskRewardLerp; without a task only the style weight applies."""
    seed_rank(8)
    world = make_world(tmp_path, env=PointMassAMPEnv(seed=4, task_reward=True), TestEpisodes=0, Discount=0.9,
                       TaskRewardLerp=None, TaskRewardWeight=0.25, DiscRewardWeight=2.0)
    agent = world.agents[0]
    assert (agent.style_weight, agent.task_weight) == (2.0, 0.25)
    assert (agent.val_min, agent.val_max) == pytest.approx((0.0, (2.0 * 2 + 0.25 * 1) / 0.1))
    train_checking_rewards(world, 1, style_weight=2.0, task_weight=0.25)
    (tmp_path / "b").mkdir()
    alone = make_world(tmp_path / "b", TestEpisodes=0, Discount=0.9, TaskRewardLerp=None, DiscRewardWeight=0.5)
    assert (alone.agents[0].style_weight, alone.agents[0].val_max) == (0.5, pytest.approx(0.5 * 2 / 0.1))
    with pytest.raises(ConfigError, match="e.txt: TaskRewardLerp: give either TaskRewardLerp or"):
        load_agent_config(write_amp_agent_file(tmp_path / "e.txt", TaskRewardWeight=1.0))
    for name, key_val, message in (("f", {"DiscLoss": "wgan"}, "DiscLoss: is 'wgan', expected one of lsgan, bce"),
                                   ("g", {"DiscObsSteps": 1}, "DiscObsSteps: must be >= 2"),
                                   ("h", {"DiscReplaySamples": 65}, r"DiscReplaySamples: must be in \[0, DiscBatch"),
                                   ("i", {"DiscGradPenaltyInputs": "agent"}, "DiscGradPenaltyInputs: is 'agent'"),
                                   ("j", {"DiscComputeDtype": "float16"},
                                    "DiscComputeDtype: is 'float16', expected one of float32, bfloat16")):
        with pytest.raises(ConfigError, match=f"{name}.txt: {message}"):
            load_agent_config(write_amp_agent_file(tmp_path / f"{name}.txt", **key_val))


def test_disc_replay_mix(tmp_path):
    """DiscReplaySamples 16 of a 64 batch: 16 agent observations from the buffer, 48 from the
    paths stored since the last update; without the key all 64 from the buffer."""
    np.random.seed(0)
    agent = disc_agent(tmp_path, DiscReplaySamples=16)
    agent.disc_agent_buffer.store(np.zeros((100, 8)))
    fresh = np.ones((30, 8), np.float32)
    batch = agent._sample_disc_agent_obs(64, fresh)
    assert batch.shape == (64, 8) and int(batch[:, 0].sum()) == 48
    (tmp_path / "b").mkdir()
    plain = disc_agent(tmp_path / "b")
    plain.disc_agent_buffer.store(np.zeros((100, 8)))
    assert plain._sample_disc_agent_obs(64, fresh)[:, 0].sum() == 0
