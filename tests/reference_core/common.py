"""What both sides of the reference-core tests run: the same Python loops over an env with the
snake_case calls of env/env.py (our DeepMimicEnv, or core_server.CoreEnv over DeepMimic's SWIG
module). numpy only: core_server.py imports it in a process without pybullet.

Pins: the random draws a test fixes on both sides (None: left random).
    reset_time     the reference clip time at reset (DeepMimic's CalcRandKinResetTime)
    reset_heading  the heading turn at reset when enable_rand_rot_reset is on
    expert_time    the clip time of the next expert AMP observations
    target_dist, target_theta   target_amp's target, around the root, at reset and when redrawn
The core reads them from environment variables its patched copy checks (core_hooks.patch).
"""
import time

import numpy as np

FRAME_TIME = 1.0 / 60.0
PIN_ENV_VARS = {"reset_time": "DEEPMIMIC_RESET_TIME", "reset_heading": "DEEPMIMIC_RESET_HEADING",
                "expert_time": "DEEPMIMIC_EXPERT_TIME", "target_dist": "DEEPMIMIC_TARGET_DIST",
                "target_theta": "DEEPMIMIC_TARGET_THETA"}


def update_timestep(env):
    return FRAME_TIME / env.get_num_update_substeps()


def layout(env, agent_id=0):
    """Sizes, normalisation offsets/scales/groups, action bounds, reward range, AMP layout."""
    out = {
        "state_size": env.get_state_size(agent_id), "goal_size": env.get_goal_size(agent_id),
        "action_size": env.get_action_size(agent_id),
        "state_offset": env.build_state_offset(agent_id), "state_scale": env.build_state_scale(agent_id),
        "state_norm_groups": env.build_state_norm_groups(agent_id),
        "goal_offset": env.build_goal_offset(agent_id), "goal_scale": env.build_goal_scale(agent_id),
        "goal_norm_groups": env.build_goal_norm_groups(agent_id),
        "action_offset": env.build_action_offset(agent_id), "action_scale": env.build_action_scale(agent_id),
        "action_bound_min": env.build_action_bound_min(agent_id),
        "action_bound_max": env.build_action_bound_max(agent_id),
        "reward_min": env.get_reward_min(agent_id), "reward_max": env.get_reward_max(agent_id),
        "reward_fail": env.get_reward_fail(agent_id), "reward_succ": env.get_reward_succ(agent_id),
        "amp_obs_size": env.get_amp_obs_size(), "enable_amp_task_reward": bool(env.enable_amp_task_reward()),
    }
    if out["amp_obs_size"] > 0:
        out.update(amp_obs_offset=env.get_amp_obs_offset(), amp_obs_scale=env.get_amp_obs_scale(),
                   amp_obs_norm_group=env.get_amp_obs_norm_group())
    return {k: (np.asarray(v).tolist() if isinstance(v, (np.ndarray, list, tuple)) else v) for k, v in out.items()}


def _record(env, amp, with_reward, agent_id=0):
    """The record of one decision; the AMP agent observation when `amp` (DeepMimic's AMP agent
    records it from the second decision on: the core's heading_amp / target_amp have no history
    before their first action, and RecordAMPObsAgent fails an Eigen bounds assertion there)."""
    rec = {"time": float(env.get_time()),
           "state": np.asarray(env.record_state(agent_id), dtype=float).tolist(),
           "goal": np.asarray(env.record_goal(agent_id), dtype=float).tolist(),
           "terminate": int(env.check_terminate(agent_id))}
    if with_reward:
        rec["reward"] = float(env.calc_reward(agent_id))
    if amp:
        rec["amp_agent"] = np.asarray(env.record_amp_obs_agent(agent_id), dtype=float).tolist()
    return rec


def rollout(env, actions, amp=False, amp_at_reset=False, agent_id=0):
    """From the env's current (just reset) state, act as DeepMimic's RLWorld does: before each env
    update, an agent that needs an action records state, goal (and from the second decision on the
    reward of its last action) and acts; after each update, an invalid episode or an episode end
    stops the loop (recording the final state, reward and termination). Stops at the decision after
    the last action. steps[k] is the record at decision k; 'end' says why the loop stopped."""
    dt = update_timestep(env)
    steps, k = [], 0
    while True:
        if env.need_new_action(agent_id):
            steps.append(_record(env, amp and (k > 0 or amp_at_reset), with_reward=k > 0))
            if k >= len(actions):
                return {"steps": steps, "end": "actions"}
            env.set_action(agent_id, np.asarray(actions[k], dtype=float))
            k += 1
        env.update(dt)
        if not env.check_valid_episode():
            return {"steps": steps, "end": "invalid"}
        if env.is_episode_end():
            steps.append(_record(env, amp, with_reward=True))
            return {"steps": steps, "end": "episode_end"}


def noise_actions(offset, num, std=0.05, seed=0):
    """num actions N(-offset, std^2 I): the action normaliser's mean (the neutral action: exp maps 0,
    revolute joints mid-range) plus fixed-seed Gaussian noise."""
    offset = np.asarray(offset, dtype=float)
    rng = np.random.default_rng(seed)
    return (-offset + std * rng.standard_normal((num, offset.size))).tolist()


def bench(env, decisions=None, seconds=None, seed=0, std=0.05, agent_id=0):
    """Decisions per second of DeepMimic_Optimizer's training loop on either side, a noise policy
    in place of the network. Per env update of update_timestep(env) (DeepMimic.py's update_world
    runs num_update_substeps of them per 1/60 s frame and drops the rest of a frame after a reset,
    which skips no work, so one flat loop makes the same calls):
      - an agent that needs an action (RLAgent._update_new_action) records state and goal, and the
        reward of its last action unless this is the episode's first decision, then sets an action
        drawn N(-action_offset, std^2 I) (noise around the neutral action) clipped to the bounds;
      - the env updates; an invalid episode resets (its path is thrown away); an ended episode
        (RLAgent._end_path) records the final state, goal, reward and termination, then resets.
    Stops at the first decision after `decisions` decisions or `seconds` seconds (either may be
    None). Returns decisions_per_s, decisions, episodes (ended), invalid (resets after an invalid
    episode), seconds."""
    dt = update_timestep(env)
    offset = np.asarray(env.build_action_offset(agent_id), dtype=float)
    low = np.asarray(env.build_action_bound_min(agent_id), dtype=float)
    high = np.asarray(env.build_action_bound_max(agent_id), dtype=float)
    max_decisions = np.inf if decisions is None else decisions
    max_seconds = np.inf if seconds is None else seconds
    rng = np.random.default_rng(seed)
    env.reset()
    count = episodes = invalid = 0
    first = True
    start = time.perf_counter()
    while True:
        if env.need_new_action(agent_id):
            if count >= max_decisions or time.perf_counter() - start >= max_seconds:
                break
            env.record_state(agent_id)
            env.record_goal(agent_id)
            if not first:
                env.calc_reward(agent_id)
            env.set_action(agent_id, np.clip(-offset + std * rng.standard_normal(offset.size), low, high))
            count += 1
            first = False
        env.update(dt)
        if not env.check_valid_episode():
            invalid += 1
            env.reset()
            first = True
        elif env.is_episode_end():
            env.record_state(agent_id)
            env.record_goal(agent_id)
            env.calc_reward(agent_id)
            env.check_terminate(agent_id)
            episodes += 1
            env.reset()
            first = True
    elapsed = time.perf_counter() - start
    return {"decisions_per_s": count / elapsed, "decisions": count, "episodes": episodes, "invalid": invalid,
            "seconds": elapsed}
