"""Our PPO against DeepMimic's own learning code (issue #14 part 1): the TF1 PPOAgent, rl_util,
tf_util and normalizer of the older port in the pybullet wheel, run by tests/oracle/ppo_reference.py
in one subprocess (TF1 graph mode) on the inputs this module prepares.

The reference agent is built on a fake env with this module's sizes, offsets, scales and bounds,
and loads our weights and normalisers from checkpoints that learning/checkpoint.py writes in
DeepMimic 2018's names (the port's layout). Deliberate differences, all DeepMimic 2018 (the port)
against 2021 (ours), are taken out on the reference side or measured as what they are:
- Action-bound loss weight: 10 in 2021, 1 in the port; the oracle's agent adds 9 x the port's own
  bound loss (BoundWeightPPOAgent).
- The critic: the port's is un-normalised by val_norm and its loss is on normalised values,
  0.5 mean(((R - V) / val_std)^2); 2021's is the raw value and 0.5 mean((R - V)^2). With val_norm
  (0, 1) the two are one function; with the val_norm our 2018-layout checkpoints carry (the middle
  and half-width of the value bounds) the port's squared error is ours / val_std^2, its gradients
  ours / val_std^2 in the trunk (weight decay's part aside) and ours / val_std in the last layer
  (whose kernel and bias the checkpoint divides by val_std): test_critic_with_value_normaliser.
  A momentum step of the last layer is then the same, one of the trunk ~val_std^2 times smaller.
- The port bakes the normalised action bounds into its graph with the env's a_norm at build time
  and its Gaussian std with ExpParamsBeg.Noise; ours reads a_norm and the log-std variable at each
  step. DeepMimic never updates a_norm and the noise does not anneal (a checked rule), so they agree.
- _valid_train_step: the port trains when the global sample count exceeds BatchSize and every rank
  has one exploratory sample; 2021 (ours) when this rank holds ceil(BatchSize / N) samples and
  MiniBatchSize / N exploratory ones. Not exercised here (the update is called directly).
- ExpParams: the port also anneals InitActionRate, NoiseInternal (lerp) and Temp (log-lerp), which
  no 2021 agent reads; ours accepts those keys and ignores them (LEGACY_KEYS), as UpdatePeriod.
- PGAgent's own losses (the port's bound loss / Noise, its one-step critic targets) are not a
  product path: our PG machinery is PPO's.
- TarClipFrac / ActorStepsizeDecay: the port adapts the actor's step size (update_actor_stepsize);
  DeepMimic 2021 reads TarClipFrac and never uses it. Ours has the port's rule, off by default
  (TarClipFrac -1), so by default it trains as 2021 does; ActorStepsizeDecay must be in (0, 1]
  (the port takes any number).
"""
import dataclasses
import json

import numpy as np
import pytest
import tensorflow as tf

from learning import checkpoint
from learning.configs.config import ConfigError, config_from_dict
from learning.configs.exp_params import ExpParams
from learning.configs.ppo_agent import PPOAgentConfig
from learning.losses import action_bound_loss
from learning.models.actor_critic import CRITIC_SCOPE
from learning.normalizer import Normalizer
from learning.path import Path
from learning.rl_util import compute_return
from learning.rl_world import RLWorld
from learning.solvers.ppo_step import ACTOR_STEPSIZE_RANGE
from learning.tf_util import limit_tf_threads
from tests.oracle import run_oracle
from tests.toy_env import ShapedEnv, toy_args

limit_tf_threads()

STATE, GOAL, ACTION = 7, 3, 4
NOISE = 0.3
AGENT = {
    "AgentType": "PPO",
    "ActorNet": "fc_2layers_1024units", "ActorStepsize": 2e-3, "ActorMomentum": 0.9,
    "ActorWeightDecay": 5e-3, "ActorInitOutputScale": 0.01,
    "CriticNet": "fc_2layers_1024units", "CriticStepsize": 5e-3, "CriticMomentum": 0.8,
    "CriticWeightDecay": 1e-3,
    "Discount": 0.9, "BatchSize": 64, "MiniBatchSize": 32, "Epochs": 2, "ReplayBufferSize": 2000,
    "InitSamples": 1, "NormalizerSamples": 100000, "RatioClip": 0.2, "NormAdvClip": 1.5,
    "TDLambda": 0.9, "TarClipFrac": 0.2, "ActorStepsizeDecay": 0.5,
    "OutputIters": 5, "IntOutputIters": 10, "TestEpisodes": 0, "ExpAnnealSamples": 10000,
    "ExpParamsBeg": {"Rate": 1, "Noise": NOISE}, "ExpParamsEnd": {"Rate": 0.2, "Noise": NOISE},
}
PATH_LENGTHS = [12, 1, 30, 25, 7, 40, 20]
PATH_ENDS = [0, 1, 2, 0, 1, 2, 0]        # Terminate: Null, Fail, Succ
UPDATE_ITER = 10                          # past the step-size warm-up, so TarClipFrac acts
SEED = 7
RTOL = 1e-5


def env_spec():
    rng = np.random.default_rng(0)
    action_offset, action_scale = np.array([0.1, -0.2, 0.0, 0.3]), np.array([2.0, 0.5, 1.0, 1.5])
    # normalised action bounds +-0.8: the random actor's means cross them
    return {"state_offset": rng.normal(size=STATE), "state_scale": rng.uniform(0.5, 2, STATE),
            "state_norm_groups": np.array([0, 0, 1, 1, -1, 0, 0]),
            "goal_offset": rng.normal(size=GOAL), "goal_scale": rng.uniform(0.5, 2, GOAL),
            "goal_norm_groups": np.zeros(GOAL, dtype=np.int64),
            "action_offset": action_offset, "action_scale": action_scale,
            "action_bound_min": -0.8 / action_scale - action_offset,
            "action_bound_max": 0.8 / action_scale - action_offset,
            "reward": np.array([0.0, 1.0, 0.0, 1.0])}   # min, max, fail, succ


class SpecEnv(ShapedEnv):
    """The point mass's loop with env_spec()'s sizes, normalisation and bounds."""

    def __init__(self):
        self.spec = env_spec()
        super().__init__(STATE, ACTION, GOAL)

    def __getattribute__(self, name):
        if name.startswith("build_"):
            return lambda agent_id: self.spec[name[len("build_"):]].copy()
        return super().__getattribute__(name)

    def get_reward_min(self, agent_id):
        return self.spec["reward"][0]

    def get_reward_max(self, agent_id):
        return self.spec["reward"][1]

    def get_reward_fail(self, agent_id):
        return self.spec["reward"][2]

    def get_reward_succ(self, agent_id):
        return self.spec["reward"][3]


def build_agent(tmp_path, agent=AGENT):
    path = tmp_path / "agent.txt"
    path.write_text(json.dumps(agent))
    return RLWorld(SpecEnv(), toy_args(path)).agents[0]


def randomise(agent, rng):
    """Random weights (O(1) activations, values around 9.5 of [0, 10]) and state/goal normalisers;
    a_norm stays the env's."""
    for name, var in agent.model.variables.items():
        shape = var.shape.as_list()
        scale = 1.0 / np.sqrt(shape[0]) if len(shape) == 2 else 0.1
        var.assign(rng.normal(0.0, scale, shape).astype(np.float32))
    agent.model.logstd.assign(np.full(ACTION, np.log(NOISE), np.float32))
    agent.model.variables[checkpoint.CRITIC_OUT_LAYER + "/bias"].assign([9.5])
    agent._on_params_changed()
    for norm in (agent.s_norm, agent.g_norm):
        norm.load(int(rng.integers(1000, 10 ** 6)), rng.normal(size=norm.size), rng.uniform(0.5, 2, norm.size))


def f32(x):
    """x as the float32 values both sides see."""
    return np.asarray(x, np.float32).astype(np.float64)


def make_paths(agent, rng):
    """Paths of PATH_LENGTHS around the normalisers' means; exploratory steps (70%) take the
    policy's mean plus NOISE noise, with logps a little off the policy's (ratios near 1)."""
    paths = []
    for n, end in zip(PATH_LENGTHS, PATH_ENDS):
        path = Path()
        states = f32(agent.s_norm.mean + agent.s_norm.std * rng.normal(size=(n + 1, STATE)))
        goals = f32(agent.g_norm.mean + agent.g_norm.std * rng.normal(size=(n + 1, GOAL)))
        norm_mean = agent.model.actor_mean_np(agent._norm_inputs(states[:n], goals[:n])).astype(np.float64)
        explore = rng.random(n) < 0.7
        z = rng.normal(size=(n, ACTION)) * explore[:, None]
        path.states, path.goals = list(states), list(goals)
        path.actions = list(agent.a_norm.unnormalize(norm_mean + NOISE * z))
        logp = -0.5 * np.sum(z ** 2, axis=1) - 0.5 * ACTION * np.log(2 * np.pi) - ACTION * np.log(NOISE)
        path.logps = list(logp + 0.15 * rng.normal(size=n) * explore)
        path.rewards = list(rng.uniform(-1, 2, n))   # beyond [reward_min, reward_max]: targets clip
        path.flags = [int(e) for e in explore]
        path.terminate = end
        paths.append(path)
    return paths


def paths_npz(paths):
    cat = lambda name: np.concatenate([np.asarray(getattr(p, name), dtype=np.float64) for p in paths])
    return {"update/lengths": np.array([p.pathlength() for p in paths]),
            "update/terminate": np.array([int(p.terminate) for p in paths]),
            "update/states": cat("states"), "update/goals": cat("goals"), "update/actions": cat("actions"),
            "update/logps": cat("logps"), "update/rewards": cat("rewards"), "update/flags": cat("flags"),
            "update/seed": SEED, "update/checkpoint": 0, "update/iter": UPDATE_ITER}


def our_minibatch(agent, mb):
    """Losses, clip fraction, values, normalised means and gradients {TF1 name: array} of ours."""
    inputs = tuple(agent._norm_inputs(mb["s"], mb["g"]))
    f = lambda x: tf.constant(np.asarray(x, np.float32))
    critic_loss, critic_grads = agent.policy_step._critic_grads(inputs, f(mb["tar_val"]))
    bounds = [f(agent.a_norm.normalize(b)) for b in (agent.a_bound_min, agent.a_bound_max)]
    actor_loss, clip_frac, actor_grads = agent.policy_step._actor_grads(
        inputs, f(agent.a_norm.normalize(mb["a"])), f(mb["logp"]), f(mb["adv"]), *bounds)
    names = {id(v): name for name, v in agent.model.variables.items()}
    out = {"critic_loss": float(critic_loss), "actor_loss": float(actor_loss), "clip_frac": float(clip_frac),
           "val": agent._eval_critic(mb["s"], mb["g"]),
           "norm_a_mean": agent.model.actor_mean(list(inputs)).numpy()}
    for scope, variables, grads in (("critic", agent.model.critic_vars, critic_grads),
                                    ("actor", agent.model.actor_vars, actor_grads)):
        for var, grad in zip(variables, grads):
            out[f"{scope}_grad/{names[id(var)]}"] = grad.numpy()
    return out


def recorder(record, method, fetch):
    """Wraps a policy step's minibatch update (batch, critic rows, targets, actor rows,
    advantages), recording fetch(critic rows, targets, actor rows, advantages) per minibatch."""
    calls = [0]

    def wrapped(batch, *args):
        for name, value in fetch(*args).items():
            prefix, key = name.split("/")
            record[f"{prefix}{calls[0]}/{key}"] = value
        calls[0] += 1
        return method(batch, *args)
    return wrapped


def our_update(agent, paths):
    """One _train_step over `paths` with np.random seeded as the oracle seeds it: the weights
    after, the log row, the batch's values and returns and each minibatch's inputs."""
    buf, record, step = agent.replay_buffer, {}, agent.policy_step
    for path in paths:
        assert buf.store(path) >= 0
    idx = np.concatenate(buf.path_slots())          # the batch's rows are these slots
    step._update_minibatch = recorder(
        record, step._update_minibatch,
        lambda critic_rows, tar, actor_rows, adv: {
            "critic/s": buf.get("states", idx[critic_rows]), "critic/tar_val": tar,
            "actor/s": buf.get("states", idx[actor_rows]), "actor/a": buf.get("actions", idx[actor_rows]),
            "actor/adv": adv})
    compute_vals, compute_new_vals = agent._compute_batch_vals, agent._compute_batch_new_vals
    agent._compute_batch_vals = lambda *a: record.setdefault("vals", compute_vals(*a))
    agent._compute_batch_new_vals = lambda *a: record.setdefault("new_vals", compute_new_vals(*a).copy())
    record["var0"] = {name: v.numpy() for name, v in agent.model.variables.items() if v.trainable}
    agent.iter = UPDATE_ITER
    np.random.seed(SEED)
    agent._train_step()
    del step._update_minibatch, agent._compute_batch_vals, agent._compute_batch_new_vals
    agent.logger.dump_tabular()
    record["log"] = dict(agent.logger.last_row)
    record["var"] = {name: v.numpy() for name, v in agent.model.variables.items() if v.trainable}
    return record


def reference_name(name):
    """Our TF1 name in the port's (2018) layout."""
    return name.replace(checkpoint.MEAN_LAYER, checkpoint.LEGACY_MEAN_LAYER)


# ---- inputs for the pure functions ----
RETURN_CASES = [(0.95, 0.95, 40), (0.9, 0.0, 10), (0.99, 1.0, 25), (0.5, 0.7, 1), (0.95, 0.3, 2)]
EXP_SAMPLES = [0, 1, 2500, 5000, 9999, 10000, 20000, 10 ** 9]
NORM_GROUPS = np.array([0, 0, 1, 1, 1, -1, 2, 2, 0])
NORM_BATCHES = [50, 200, 7, 1]
STEPSIZE_CASES = np.array([[0.1, 0.5, 1e-3], [0.1, 0.8, 2e-6], [0.0, 0.5, 1e-4], [-1.0, 0.5, 1e-3]])


def clip_fractions(rng):
    """Warm-up iterations, a run under the band (to the upper bound), in-band values and the
    band's edges, a run over it (to the lower bound), then random values."""
    edges = [0.1 * 1.5, 0.1 / 1.5, np.nextafter(0.1 * 1.5, 1), np.nextafter(0.1 / 1.5, 0)]
    return np.concatenate([[0.5] * 5, [0.0] * 6, [0.1, 0.12, 0.08], edges, [0.4] * 30,
                           [0.0] * 3, rng.choice([0, 0.02, 0.066, 0.1, 0.15, 0.2, 0.5], 20)])


@pytest.fixture(scope="module")
def case(tmp_path_factory):
    """Our side: the agent, its checkpoints and every input; our outputs computed before the
    update changes the weights."""
    out = tmp_path_factory.mktemp("ppo_reference")
    agent = build_agent(out)
    rng = np.random.default_rng(1)
    randomise(agent, rng)
    prefixes = [out / "identity.ckpt", out / "val_norm.ckpt"]
    checkpoint.write_checkpoint(prefixes[0], checkpoint.to_legacy_layout(agent.checkpoint_tensors("2021"), 0.0, 1.0))
    checkpoint.write_checkpoint(prefixes[1], agent.checkpoint_tensors("2018"))
    paths = make_paths(agent, rng)
    steps = [(p, t) for p in paths for t in range(p.pathlength()) if p.flags[t]][:32]
    mb = {"s": f32([p.states[t] for p, t in steps]), "g": f32([p.goals[t] for p, t in steps]),
          "a": np.array([p.actions[t] for p, t in steps]), "logp": f32([p.logps[t] for p, t in steps]),
          "adv": f32(np.clip(1.5 * rng.normal(size=len(steps)), -4, 4)),
          "tar_val": f32(rng.uniform(0, 10, len(steps)))}
    inputs = {"agent_json": json.dumps(AGENT), "checkpoints": np.array([str(p) for p in prefixes]),
              **{f"env/{k}": v for k, v in env_spec().items()}, **{f"mb/{k}": v for k, v in mb.items()},
              **paths_npz(paths), "keys": 1}
    for k, (gamma, td_lambda, n) in enumerate(RETURN_CASES):
        inputs.update({f"returns/{k}/params": np.array([gamma, td_lambda]),
                       f"returns/{k}/rewards": rng.uniform(-1, 2, n), f"returns/{k}/vals": rng.normal(3, 2, n + 1)})
    inputs.update({"bound/x": f32(rng.normal(0, 1.5, (50, 6))), "bound/min": f32(-rng.uniform(0.2, 1, 6)),
                   "bound/max": f32(rng.uniform(0.2, 1, 6)), "exp/samples": np.array(EXP_SAMPLES)})
    inputs.update({"norm/groups": NORM_GROUPS, "norm/mean0": rng.normal(size=NORM_GROUPS.size),
                   "norm/std0": rng.uniform(0.5, 2, NORM_GROUPS.size),
                   **{f"norm/batch{k}": rng.normal(rng.normal(size=NORM_GROUPS.size), 3, (n, NORM_GROUPS.size))
                      for k, n in enumerate(NORM_BATCHES)}})
    inputs.update({"stepsize/cases": STEPSIZE_CASES, "stepsize/clip_fracs": clip_fractions(rng)})
    np.savez(out / "in.npz", **inputs)
    return {"agent": agent, "inputs": inputs, "dir": out, "minibatch": our_minibatch(agent, mb),
            "val_std": float(checkpoint.read_checkpoint(prefixes[1])[checkpoint.VAL_NORM + "/std"][0]),
            "stepsize0": float(agent.actor_solver.stepsize.numpy()), "update": our_update(agent, paths)}


@pytest.fixture(scope="module")
def ref(case):
    return run_oracle("ppo_reference.py", case["dir"])


def assert_close(ours, theirs, what, rtol=RTOL):
    """Within rtol of the reference's largest magnitude."""
    ours, theirs = np.asarray(ours, np.float64), np.asarray(theirs, np.float64)
    scale = max(float(np.abs(theirs).max()), 1e-30)
    diff = float(np.abs(ours - theirs).max()) / scale
    assert diff <= rtol, f"{what}: relative difference {diff:.3g} > {rtol}"


# ---- 1. the PPO step ----
def test_minibatch_losses_and_gradients(case, ref):
    """From the same weights (our checkpoint with val_norm (0, 1)), normalisers and minibatch:
    values, normalised mean actions, both losses, the clip fraction and every gradient."""
    ours = case["minibatch"]
    assert 0 < ref["0/clip_frac"] < 1            # some ratios are clipped, some not
    nb = case["agent"].a_norm.normalize(case["agent"].a_bound_max)
    assert np.any(np.abs(ref["0/norm_a_mean"]) > nb)  # the bound loss is active
    for name in ("val", "norm_a_mean", "critic_loss", "actor_loss", "clip_frac"):
        assert_close(ours[name], ref[f"0/{name}"], name)
    grads = [k for k in ours if "_grad/" in k]
    assert len(grads) == 12
    for key in grads:
        assert_close(ours[key], ref["0/" + reference_name(key)], key, rtol=1e-4)


def test_critic_with_value_normaliser(case, ref):
    """Our 2018-layout checkpoint (val_norm: mean and std the middle and half-width of the value
    bounds) in the port: the same values; the port's squared error is ours / val_std^2 and its
    gradients ours / val_std^2 in the trunk and ours / val_std in the last layer (whose kernel the
    checkpoint divides by val_std, which CriticWeightDecay's term then sees; see the module
    docstring)."""
    ours, std, decay = case["minibatch"], case["val_std"], AGENT["CriticWeightDecay"]
    assert std == pytest.approx(0.5 / (1 - AGENT["Discount"]))
    weights = {k: v for k, v in case["update"]["var0"].items()
               if k.startswith(CRITIC_SCOPE) and k.endswith("kernel")}
    l2 = {k: 0.5 * np.sum(np.square(v.astype(np.float64))) for k, v in weights.items()}
    l2_out = l2.pop(checkpoint.CRITIC_OUT_LAYER + "/kernel")
    squared_error = ours["critic_loss"] - decay * (sum(l2.values()) + l2_out)
    expected = squared_error / std ** 2 + decay * (sum(l2.values()) + l2_out / std ** 2)
    assert_close(ours["val"], ref["1/val"], "val")
    assert_close(expected, ref["1/critic_loss"], "critic loss")
    for key in (k for k in ours if k.startswith("critic_grad/")):
        name = key[len("critic_grad/"):]
        if name.startswith(checkpoint.CRITIC_OUT_LAYER):
            expected = ours[key] / std
        else:
            decay_grad = decay * weights[name] if name in weights else 0.0
            expected = (ours[key] - decay_grad) / std ** 2 + decay_grad
        assert_close(expected, ref["1/" + key], key, rtol=1e-4)
    assert_close(ours["actor_loss"], ref["1/actor_loss"], "actor loss")


def test_full_update(case, ref):
    """One _train_step over the same stored paths with the same shuffles (np.random seeded alike):
    critic values and TD(lambda) returns of the batch, each minibatch's states, actions, clipped
    targets and normalised, clipped advantages, the log row, and every weight after 2 epochs x 5
    minibatches of momentum steps (also the adapted actor step size: TarClipFrac 0.2). The weights'
    changes agree to ~7e-5 of their largest: float32 rounding (the actor's gradients differ by
    ~4e-6 from the first step on: exp(logp - old_logp) of float32 logps), grown over 10 steps."""
    ours = case["update"]
    assert_close(ours["vals"], ref["update/vals"], "vals")
    assert_close(ours["new_vals"], ref["update/new_vals"], "new_vals")
    mini_batches = int(np.ceil(sum(PATH_LENGTHS) / AGENT["MiniBatchSize"])) * AGENT["Epochs"]
    for prefix, names in (("critic", ("s", "tar_val")), ("actor", ("s", "a", "adv"))):
        assert f"update/{prefix}{mini_batches}/s" not in ref and f"{prefix}{mini_batches}/s" not in ours
        for b in range(mini_batches):
            for name in names:
                key = f"{prefix}{b}/{name}"
                assert_close(ours[key], ref[f"update/{key}"], key)
    advs = np.concatenate([ours[f"actor{b}/adv"] for b in range(mini_batches)])
    tar_vals = np.concatenate([ours[f"critic{b}/tar_val"] for b in range(mini_batches)])
    assert np.abs(advs).max() == AGENT["NormAdvClip"]     # clipping happened, of both
    assert tar_vals.min() == 0 and tar_vals.max() == pytest.approx(1 / (1 - AGENT["Discount"]))
    for column in ("Critic_Loss", "Actor_Loss", "Clip_Frac", "Adv_Mean", "Adv_Std", "Critic_Stepsize",
                   "Actor_Stepsize"):
        assert_close(ours["log"][column], ref[f"update/log/{column}"], column)
    assert ours["log"]["Actor_Stepsize"] != case["stepsize0"]
    for name, value in ours["var"].items():
        before = ours["var0"][name]
        assert_close(value - before, ref["update/var/" + reference_name(name)] - before, name, rtol=5e-4)


# ---- 2. the pure functions on random inputs ----
def test_td_lambda_returns(case, ref):
    """rl_util.compute_return on random rewards and values, lambda in {0, 0.3, ..., 1}, paths of
    1 to 40 steps."""
    inputs = case["inputs"]
    for k, (gamma, td_lambda, _) in enumerate(RETURN_CASES):
        ours = compute_return(inputs[f"returns/{k}/rewards"], gamma, td_lambda, inputs[f"returns/{k}/vals"])
        assert_close(ours, ref[f"returns/{k}"], f"returns {k}", rtol=1e-14)


def test_action_bound_loss(case, ref):
    """tf_util.calc_bound_loss on random normalised means and bounds (float32)."""
    inputs = case["inputs"]
    ours = action_bound_loss(*(tf.constant(inputs[f"bound/{k}"], tf.float32) for k in ("x", "min", "max")))
    assert ref["bound/loss"] > 0
    assert_close(float(ours), ref["bound/loss"], "bound loss", rtol=1e-6)


def test_exploration_schedule(case, ref):
    """RLAgent._update_exp_params: Rate and Noise lerped by samples / ExpAnnealSamples, clipped."""
    agent = case["agent"]
    rates, noises = [], []
    for samples in EXP_SAMPLES:
        agent.total_sample_count = samples
        agent._update_exp_params()
        rates.append(agent.exp_params_curr.rate)
        noises.append(agent.exp_params_curr.noise)
    np.testing.assert_allclose(rates, ref["exp/rate"], rtol=1e-15)
    np.testing.assert_allclose(noises, ref["exp/noise"], rtol=1e-15)
    assert rates[0] == 1 and rates[-1] == pytest.approx(0.2)


def test_normalizer(case, ref):
    """normalizer.Normalizer without MPI: groups -1 (fixed), 0 (per entry) and shared ids; record
    and update over batches of 50, 200, 7 and 1 rows: mean, std, mean_sq, count after each, and
    normalize (DeepMimic's clip is np.inf wherever it builds a normaliser; ours has none)."""
    inputs = case["inputs"]
    norm = Normalizer(NORM_GROUPS.size, NORM_GROUPS)
    norm.set_mean_std(inputs["norm/mean0"], inputs["norm/std0"])
    for k in range(len(NORM_BATCHES)):
        norm.record(inputs[f"norm/batch{k}"])
        norm.update()
        for name in ("mean", "std", "mean_sq", "count"):
            assert_close(getattr(norm, name), ref[f"norm/{k}/{name}"], f"batch {k} {name}", rtol=1e-13)
    assert norm.count == sum(NORM_BATCHES)
    assert_close(norm.normalize(inputs["norm/batch0"]), ref["norm/normalized"], "normalize", rtol=1e-13)


# ---- 3. agent-file keys and the adaptive actor step size ----
ALL_KEYS = {
    "AgentType": "PPO", "UpdatePeriod": 2, "ItersPerUpdate": 2, "Discount": 0.8, "MiniBatchSize": 64,
    "ReplayBufferSize": 30000, "InitSamples": 5, "NormalizerSamples": 1000, "OutputIters": 7,
    "IntOutputIters": 9, "TestEpisodes": 3, "ExpAnnealSamples": 1000,
    "ExpParamsBeg": {"Rate": 0.9, "InitActionRate": 0.1, "Noise": 0.2, "NoiseInternal": 0.1, "Temp": 0.5},
    "ExpParamsEnd": {"Rate": 0.3, "InitActionRate": 0.0, "Noise": 0.2, "NoiseInternal": 0.0, "Temp": 0.05},
    "ActorNet": "fc_2layers_1024units", "ActorStepsize": 1e-4, "ActorMomentum": 0.8,
    "ActorWeightDecay": 1e-4, "ActorInitOutputScale": 0.1,
    "CriticNet": "fc_2layers_gated_1024units", "CriticStepsize": 1e-3, "CriticMomentum": 0.7,
    "CriticWeightDecay": 1e-4, "Epochs": 3, "BatchSize": 2048, "RatioClip": 0.1, "NormAdvClip": 3,
    "TDLambda": 0.8, "TarClipFrac": 0.05, "ActorStepsizeDecay": 0.7,
}
# ours only, not the reference's: the ranks' parameter check, the optimizer choice (default: its SGD)
OWN_KEYS = ("SyncCheckIters", "ActorOptimizer", "CriticOptimizer")
REFERENCE_DEFAULTS = ("iters_per_update", "discount", "mini_batch_size", "replay_buffer_size",
                      "init_samples", "normalizer_samples", "output_iters", "int_output_iters",
                      "test_episodes", "exp_anneal_samples", "epochs", "batch_size", "ratio_clip",
                      "norm_adv_clip", "td_lambda", "tar_clip_frac", "actor_stepsize_decay",
                      "actor_stepsize", "critic_stepsize", "actor_momentum", "critic_momentum")


def test_every_reference_agent_key_works_in_ours(ref):
    """The keys the reference's RLAgent, PGAgent, PPOAgent, ExpParams and agent_builder name are
    exactly ALL_KEYS; a file setting each to a non-default value loads, and every key but the
    legacy ones (UpdatePeriod; InitActionRate, NoiseInternal, Temp: accepted, ignored) reaches its
    field. The defaults a file naming only AgentType, ActorNet and CriticNet gets are the
    reference's. (ActorWeightDecay 0, CriticWeightDecay 0 and ActorInitOutputScale 1, the other
    defaults, are locals of its methods; test_learning_config covers them.)"""
    agent_keys = set().union(*(ref[f"keys/{c}"] for c in ("RLAgent", "PGAgent", "PPOAgent", "agent_builder")))
    assert agent_keys == set(ALL_KEYS)
    assert set(ref["keys/ExpParams"]) == set(ALL_KEYS["ExpParamsBeg"])
    cfg = config_from_dict(PPOAgentConfig, ALL_KEYS, "all.txt")
    default = config_from_dict(PPOAgentConfig, {k: AGENT[k] for k in ("AgentType", "ActorNet", "CriticNet")},
                               "minimal.txt")
    for field in dataclasses.fields(PPOAgentConfig):
        json_key = field.metadata["key"]
        if json_key in OWN_KEYS:
            continue
        value = getattr(cfg, field.name)
        if isinstance(value, ExpParams):
            assert value == ExpParams(rate=ALL_KEYS[json_key]["Rate"], noise=ALL_KEYS[json_key]["Noise"])
        else:
            assert value == ALL_KEYS[json_key], json_key
        if json_key not in ("AgentType", "ActorNet", "CriticNet"):      # the required keys
            assert value != getattr(default, field.name), json_key
    for name in REFERENCE_DEFAULTS:
        assert getattr(default, name) == pytest.approx(float(ref[f"defaults/{name}"]), rel=1e-7), name
    for params in ("exp_params_beg", "exp_params_end"):
        for name in ("rate", "noise"):
            assert getattr(getattr(default, params), name) == ref[f"defaults/{params}.{name}"]


@pytest.mark.parametrize("decay", [0, -0.5, 1.5])
def test_actor_stepsize_decay_is_validated(decay):
    with pytest.raises(ConfigError, match=r"a.txt: ActorStepsizeDecay: must be in \(0, 1\]"):
        config_from_dict(PPOAgentConfig, {**AGENT, "ActorStepsizeDecay": decay}, "a.txt")


def test_actor_stepsize_rule(case, ref):
    """PPOAgent.update_actor_stepsize against ours on one sequence of clip fractions at iterations
    1, 2, ... (5 of warm-up), for TarClipFrac 0.1 with decay 0.5 (reaching both bounds, 1e-2 and
    1e-8) and 0.8, TarClipFrac 0 (any clipping shrinks the step) and -1 (off): the returned step
    sizes and the variable the solver steps with. The port multiplies its float32 step size by
    decay in float32 (NumPy 2 keeps the type), ours in float64 before storing it in the float32
    variable: with decay 0.8 (not a float32 number) they part by ~2e-7 over the sequence."""
    agent, config = case["agent"], case["agent"].config
    step = agent.policy_step
    clip_fracs = case["inputs"]["stepsize/clip_fracs"]
    for k, (tar_clip_frac, decay, stepsize) in enumerate(STEPSIZE_CASES):
        step.config = dataclasses.replace(config, tar_clip_frac=tar_clip_frac, actor_stepsize_decay=decay)
        agent.actor_solver.stepsize.assign(stepsize)
        returned, held = [], []
        for i, clip_frac in enumerate(clip_fracs):
            returned.append(step._update_actor_stepsize(float(clip_frac), i + 1))
            held.append(float(agent.actor_solver.stepsize.numpy()))
        np.testing.assert_allclose(returned, ref[f"stepsize/{k}"], rtol=1e-6, err_msg=f"case {k}")
        np.testing.assert_allclose(held, ref[f"stepsize/{k}/var"], rtol=1e-6, err_msg=f"case {k}")
        if k == 0:
            assert np.allclose([min(held), max(held)], ACTOR_STEPSIZE_RANGE, rtol=1e-6)
        if tar_clip_frac < 0:
            assert set(held) == {float(np.float32(stepsize))}
    step.config = config


def test_adapted_stepsize_is_in_the_resume_state(case):
    agent = case["agent"]
    agent.actor_solver.stepsize.assign(3.5e-4)
    state = agent.resume_state()
    agent.actor_solver.stepsize.assign(1.0)
    agent.load_resume_state(state)
    assert agent.actor_solver.stepsize.numpy() == np.float32(3.5e-4)
