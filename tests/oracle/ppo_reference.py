"""DeepMimic's own PPO code (the TF1 learning package of the older port in the pybullet wheel) on
inputs from an .npz; run in a process of its own (TF1 graph mode):

    python tests/oracle/ppo_reference.py IN.npz OUT.npz

IN.npz (every section optional but `agent_json` and `env/*`):
  agent_json          the agent file (JSON text); env/*: sizes, offsets, scales, norm groups, action
                      bounds and reward_min/max/fail/succ of a fake env (see FakeEnv)
  checkpoints         prefixes; for each tag i the agent loads it (tf.train.Saver) and evaluates the
                      minibatch mb/{s,g,a,logp,adv,tar_val}: OUT {i}/{critic_loss,actor_loss,
                      clip_frac,val,norm_a_mean}, {i}/critic_grad/<var>, {i}/actor_grad/<var>
  update/*            paths (lengths, terminate, states, goals, actions, logps, rewards, flags), a
                      seed and an iteration; after loading checkpoints[update/checkpoint] the paths
                      go into the agent's replay buffer and one _train_step runs at that iteration
                      with np.random seeded: OUT
                      update/var/<var> (weights after), update/log/<column>, update/vals,
                      update/new_vals and the inputs of each minibatch update/critic{b}/{s,tar_val},
                      update/actor{b}/{s,a,adv}
  returns/{i}/...     rl_util.compute_return(rewards, gamma, lambda, vals): OUT returns/{i}
  bound/{x,min,max}   tf_util.calc_bound_loss: OUT bound/loss
  exp/samples         RLAgent._update_exp_params at each sample count: OUT exp/{rate,noise}
  norm/...            normalizer.Normalizer(size, groups): set_mean_std(mean0, std0), then for each
                      batch record + update: OUT norm/{k}/{mean,std,mean_sq,count}, norm/normalized
  stepsize/...        PPOAgent.update_actor_stepsize over clip_fracs at iterations 1, 2, ... for
                      each case (TarClipFrac, ActorStepsizeDecay, initial step size): OUT
                      stepsize/{k} (the returned step sizes), stepsize/{k}/var (the variable's)
  keys                OUT keys/<class>: the agent-file keys its classes name (class constants),
                      defaults/<attr>: what PPOAgent sets from a file naming only AgentType,
                      ActorNet and CriticNet

The agent is the port's PPOAgent with one change (BoundWeightPPOAgent): DeepMimic 2021, which the
product follows, weights the action-bound loss by 10, the port (2018) by 1.
"""
import json
import os
import sys
import types

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

from tests.oracle import wheel_port  # noqa: E402

BOUND_WEIGHT_2021 = 10.0


class FakeEnv:
    """The env queries DeepMimic's agents make while they are built (sizes, normalisers, bounds,
    reward range), answered from the arrays env/* of the input: build_X returns env/X,
    get_reward_X the entry of env/reward at X's place in REWARDS."""
    REWARDS = ("min", "max", "fail", "succ")

    def __init__(self, data, action_space):
        self.data, self.action_space = data, action_space

    def get_action_space(self, id):
        return self.action_space

    def get_state_size(self, id):
        return self.data["env/state_offset"].size

    def get_goal_size(self, id):
        return self.data["env/goal_offset"].size

    def get_action_size(self, id=None):
        return self.data["env/action_offset"].size

    def __getattr__(self, name):
        if name.startswith("build_"):
            return lambda id: np.array(self.data["env/" + name[len("build_"):]])
        if name.startswith("get_reward_"):
            index = self.REWARDS.index(name[len("get_reward_"):])
            return lambda id: float(self.data["env/reward"][index])
        raise AttributeError(name)


def build_agent(data, json_data):
    from pybullet_envs.deep_mimic.env.action_space import ActionSpace
    from pybullet_envs.deep_mimic.learning.ppo_agent import PPOAgent
    import pybullet_envs.deep_mimic.learning.tf_util as TFUtil

    class BoundWeightPPOAgent(PPOAgent):
        def _build_losses(self, json_data):
            super()._build_losses(json_data)
            self.actor_loss_tf += (BOUND_WEIGHT_2021 - 1) * TFUtil.calc_bound_loss(
                self._norm_a_mean_tf, self.a_norm.normalize(self.a_bound_min),
                self.a_norm.normalize(self.a_bound_max))

    world = types.SimpleNamespace(env=FakeEnv(data, ActionSpace.Continuous))
    return BoundWeightPPOAgent(world, 0, json_data)


def var_name(var):
    return var.name.split(":")[0]


def minibatch_outputs(agent, data, tag, out):
    mb = {k: data[f"mb/{k}"] for k in ("s", "g", "a", "logp", "adv", "tar_val")}
    feed = {agent.s_tf: mb["s"], agent.g_tf: mb["g"], agent.a_tf: mb["a"], agent.old_logp_tf: mb["logp"],
            agent.adv_tf: mb["adv"], agent.tar_val_tf: mb["tar_val"]}
    fetch = [agent.critic_loss_tf, agent.actor_loss_tf, agent.clip_frac_tf, agent.critic_tf,
             agent._norm_a_mean_tf, agent.critic_grad_tf, agent.actor_grad_tf]
    critic_loss, actor_loss, clip_frac, val, norm_a_mean, critic_grads, actor_grads = agent.sess.run(fetch, feed)
    out.update({f"{tag}/critic_loss": critic_loss, f"{tag}/actor_loss": actor_loss,
                f"{tag}/clip_frac": clip_frac, f"{tag}/val": val, f"{tag}/norm_a_mean": norm_a_mean})
    for scope, grads in (("critic", critic_grads), ("actor", actor_grads)):
        for var, grad in zip(agent._tf_vars(f"main/{scope}"), grads):
            out[f"{tag}/{scope}_grad/{var_name(var)}"] = grad


def stored_paths(data):
    from pybullet_envs.deep_mimic.learning.path import Path
    lengths = data["update/lengths"]
    state_start = np.concatenate([[0], np.cumsum(lengths + 1)])
    step_start = np.concatenate([[0], np.cumsum(lengths)])
    for i, n in enumerate(lengths):
        path = Path()
        states = slice(state_start[i], state_start[i + 1])
        steps = slice(step_start[i], step_start[i + 1])
        path.states, path.goals = list(data["update/states"][states]), list(data["update/goals"][states])
        path.actions, path.logps = list(data["update/actions"][steps]), list(data["update/logps"][steps])
        path.rewards = list(data["update/rewards"][steps])
        path.flags = [int(f) for f in data["update/flags"][steps]]
        path.terminate = type(path.terminate)(int(data["update/terminate"][i]))
        yield path


def recording(out, prefix, method, names):
    """`method` wrapped to save its positional arguments as {prefix}{call}/{name}."""
    calls = [0]

    def wrapped(*args):
        for name, arg in zip(names, args):
            if name:
                out[f"{prefix}{calls[0]}/{name}"] = np.asarray(arg)
        calls[0] += 1
        return method(*args)
    return wrapped


def returning(out, key, method):
    """`method` wrapped to save a copy of its result as out[key]."""
    def wrapped(*args):
        result = method(*args)
        out[key] = result.copy()
        return result
    return wrapped


def run_update(agent, data, out):
    agent.load_model(str(data["checkpoints"][int(data["update/checkpoint"])]))
    for path in stored_paths(data):
        assert agent.replay_buffer.store(path) >= 0
    agent._update_critic = recording(out, "update/critic", agent._update_critic, ("s", None, "tar_val"))
    agent._update_actor = recording(out, "update/actor", agent._update_actor, ("s", None, "a", None, "adv"))
    agent._compute_batch_vals = returning(out, "update/vals", agent._compute_batch_vals)
    agent._compute_batch_new_vals = returning(out, "update/new_vals", agent._compute_batch_new_vals)
    agent.iter = int(data["update/iter"])
    np.random.seed(int(data["update/seed"]))
    with agent.sess.as_default(), agent.graph.as_default():
        agent._train_step()
        for var in agent._tf_vars("main"):
            out[f"update/var/{var_name(var)}"] = agent.sess.run(var)
    for column, val in agent.logger.log_current_row.items():
        out[f"update/log/{column}"] = np.asarray(val, dtype=np.float64)


def run_functions(agent, data, out):
    import pybullet_envs.deep_mimic.learning.rl_util as RLUtil
    import pybullet_envs.deep_mimic.learning.tf_util as TFUtil
    from pybullet_envs.deep_mimic.learning.normalizer import Normalizer
    import tensorflow.compat.v1 as tf

    k = 0
    while f"returns/{k}/rewards" in data:
        gamma, td_lambda = data[f"returns/{k}/params"]
        out[f"returns/{k}"] = RLUtil.compute_return(data[f"returns/{k}/rewards"], gamma, td_lambda,
                                                    data[f"returns/{k}/vals"])
        k += 1
    if "bound/x" in data:
        with tf.Graph().as_default(), tf.Session() as sess:
            x = tf.constant(data["bound/x"], dtype=tf.float32)
            out["bound/loss"] = sess.run(TFUtil.calc_bound_loss(x, data["bound/min"], data["bound/max"]))
    if "exp/samples" in data:
        rates, noises = [], []
        for samples in data["exp/samples"]:
            agent._total_sample_count = int(samples)
            agent._update_exp_params()
            rates.append(agent.exp_params_curr.rate)
            noises.append(agent.exp_params_curr.noise)
        out["exp/rate"], out["exp/noise"] = np.array(rates), np.array(noises)
    if "norm/groups" in data:
        norm = Normalizer(data["norm/groups"].size, data["norm/groups"])
        norm.set_mean_std(data["norm/mean0"].copy(), data["norm/std0"].copy())
        k = 0
        while f"norm/batch{k}" in data:
            norm.record(data[f"norm/batch{k}"])
            norm.update()
            for name in ("mean", "std", "mean_sq", "count"):
                out[f"norm/{k}/{name}"] = np.array(getattr(norm, name), dtype=np.float64)
            k += 1
        out["norm/normalized"] = norm.normalize(data["norm/batch0"])


def run_stepsizes(agent, data, out):
    with agent.sess.as_default(), agent.graph.as_default():
        for k, (tar_clip_frac, decay, stepsize) in enumerate(data["stepsize/cases"]):
            agent.tar_clip_frac, agent.actor_stepsize_decay = float(tar_clip_frac), float(decay)
            agent.set_actor_stepsize(stepsize)
            returned, held = [], []
            for i, clip_frac in enumerate(data["stepsize/clip_fracs"]):
                agent.iter = i + 1
                returned.append(agent.update_actor_stepsize(clip_frac))
                held.append(agent.actor_solver.get_stepsize())
            out[f"stepsize/{k}"], out[f"stepsize/{k}/var"] = np.array(returned), np.array(held)


def run_keys(data, out):
    from pybullet_envs.deep_mimic.learning import agent_builder, exp_params, pg_agent, ppo_agent, rl_agent
    for cls in (rl_agent.RLAgent, pg_agent.PGAgent, ppo_agent.PPOAgent, exp_params.ExpParams):
        out[f"keys/{cls.__name__}"] = np.array(sorted(
            v for n, v in vars(cls).items() if n.isupper() and isinstance(v, str) and n != "NAME"))
    out["keys/agent_builder"] = np.array([agent_builder.AGENT_TYPE_KEY])
    minimal = {k: json.loads(str(data["agent_json"]))[k] for k in ("AgentType", "ActorNet", "CriticNet")}
    agent = build_agent(data, minimal)
    for attr in ("iters_per_update", "discount", "mini_batch_size", "replay_buffer_size", "init_samples",
                 "normalizer_samples", "output_iters", "int_output_iters", "test_episodes",
                 "exp_anneal_samples", "epochs", "batch_size", "ratio_clip", "norm_adv_clip", "td_lambda",
                 "tar_clip_frac", "actor_stepsize_decay"):
        out[f"defaults/{attr}"] = np.asarray(getattr(agent, attr), dtype=np.float64)
    for name in ("rate", "noise"):
        out[f"defaults/exp_params_beg.{name}"] = getattr(agent.exp_params_beg, name)
        out[f"defaults/exp_params_end.{name}"] = getattr(agent.exp_params_end, name)
    with agent.sess.as_default(), agent.graph.as_default():
        for solver in ("actor", "critic"):
            out[f"defaults/{solver}_stepsize"] = getattr(agent, f"{solver}_solver").get_stepsize()
            out[f"defaults/{solver}_momentum"] = getattr(agent, f"{solver}_solver").optimizer._momentum


def main(in_path, out_path):
    wheel_port.import_port()
    with np.load(in_path) as npz:
        data = {k: npz[k] for k in npz.files}
    agent = build_agent(data, json.loads(str(data["agent_json"])))
    out = {}
    for tag, prefix in enumerate(data.get("checkpoints", [])):
        agent.load_model(str(prefix))
        with agent.sess.as_default(), agent.graph.as_default():
            minibatch_outputs(agent, data, tag, out)
    if "update/lengths" in data:
        run_update(agent, data, out)
    run_functions(agent, data, out)
    if "stepsize/cases" in data:
        run_stepsizes(agent, data, out)
    if "keys" in data:
        run_keys(data, out)
    np.savez(out_path, **out)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
