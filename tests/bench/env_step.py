"""Scene throughput at faithful rates, and the two stable-PD schemes compared.

    .venv/bin/python tests/bench/env_step.py [--seconds 20] [--args args/train_humanoid3d_walk_args.txt]
        [--stepping advance|update]
    .venv/bin/python tests/bench/env_step.py --pd-compare

Default: the imitate scene alone (no policy, no learning) driven like an RL world drives it
(1/60 s frames; env.advance runs of updates between decisions, or one update per call with
--stepping update), with random actions (Gaussian around the action mean, 0.2 of the action
scale); prints control steps (decisions) per second and the cost split: physics (stepSimulation), PD command, state, reward,
reference (posing the reference at decisions and cycle wraps; advancing its time each update is
a float addition, counted in other Python), other Python, resets.

--pd-compare: per PD mode (builtin, exact): the cost of one PD command, then a walk PD-tracking
run from the same reference state (targets = the reference pose at each decision, no policy):
mean joint tracking error, the divergence between the two modes' joint angles, and how often a
joint's unclamped stable-PD torque exceeds its limit (by vector length: DeepMimic's clamp; by any
component: pybullet's clamp), over the upright part and over 2 s including the fall.
"""
import argparse
import json
import os
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from env.deepmimic_env import DeepMimicEnv  # noqa: E402
from env.scenes.imitate_reward import ImitateReward  # noqa: E402
from env.sim.pd_controller import PD_MODES, ExactStablePD, build_pd_controller  # noqa: E402
from util.arg_parser import load_args  # noqa: E402


def _timed(costs, key, fn):
    def wrapper(*args, **kwargs):
        start = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            costs[key] += time.perf_counter() - start
    return wrapper


def _timed_exclusive(costs, key, inner_key, fn):
    """Like _timed, minus the time spent in `inner_key` meanwhile."""
    def wrapper(*args, **kwargs):
        start, inner = time.perf_counter(), costs[inner_key]
        try:
            return fn(*args, **kwargs)
        finally:
            costs[key] += time.perf_counter() - start - (costs[inner_key] - inner)
    return wrapper


def bench_throughput(arg_file, seconds, seed, stepping):
    env = DeepMimicEnv(load_args(["--arg_file", arg_file]), seed=seed)
    scene = env
    costs = defaultdict(float)
    scene.world.step = _timed(costs, "physics", scene.world.step)
    scene.ctrl.pd.apply = _timed(costs, "PD command", scene.ctrl.pd.apply)
    scene.record_state = _timed(costs, "state", scene.record_state)
    scene.ref_snapshot = _timed(costs, "reference", scene.ref_snapshot)
    scene._sync_new_cycle = _timed(costs, "reference", scene._sync_new_cycle)
    scene.calc_reward = _timed_exclusive(costs, "reward", "reference", scene.calc_reward)
    scene.reset = _timed(costs, "resets", scene.reset)

    layout = scene.ctrl.action_layout
    rng = np.random.default_rng(seed)
    num_substeps = env.get_num_update_substeps()
    dt = 1.0 / 60.0 / num_substeps
    max_updates = num_substeps if stepping == "advance" else 1
    decisions = updates = episodes = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        remaining = num_substeps  # one 1/60 s frame, as app.rollout.update_world runs it
        while remaining > 0:
            if env.need_new_action(0):
                env.record_state(0)
                env.calc_reward(0)
                env.set_action(0, -layout.offset + 0.2 * rng.standard_normal(layout.size) / layout.scale)
                decisions += 1
            done = env.advance(dt, min(remaining, max_updates))
            remaining -= done
            updates += done
            if not env.check_valid_episode() or env.is_episode_end():
                env.reset()
                episodes += 1
                break
    total = time.perf_counter() - start
    print(f"scene {scene.name}, {Path(arg_file).name}: dt {dt:.5f} s, num_sim_substeps "
          f"{scene.world.num_sim_substeps}, PD {scene.ctrl.params.pd_mode}, stepping {stepping}")
    print(f"{decisions} decisions, {updates} updates, {episodes} resets in {total:.1f} s: "
          f"{decisions / total:.1f} control steps/s, {updates / total:.0f} updates/s")
    print(f"{'cost':<14}{'ms/decision':>12}{'share':>8}")
    rows = dict(costs)
    rows["other Python"] = total - sum(costs.values())
    for key in ("physics", "PD command", "state", "reward", "reference", "resets", "other Python"):
        print(f"{key:<14}{1e3 * rows.get(key, 0.0) / decisions:>12.3f}{rows.get(key, 0.0) / total:>8.1%}")
    env.shutdown()


def _ctrl_file(mode):
    ctrl = json.loads(Path("data/controllers/humanoid3d_ctrl.txt").read_text())
    ctrl["PDMode"] = mode
    fd, path = tempfile.mkstemp(suffix=".txt")
    with os.fdopen(fd, "w") as f:
        json.dump(ctrl, f)
    return path


def track_run(mode, arg_file, seed, duration):
    """Walk PD tracking from reference state initialisation; per update the joint angles and the
    unclamped stable-PD torque saturation counts (norm, component) of the actuated joints."""
    path = _ctrl_file(mode)
    env = DeepMimicEnv(load_args(["--arg_file", arg_file, "--char_ctrl_files", path,
                                  "--time_lim_min", "100", "--time_lim_max", "100", "--enable_fall_end", "false"]),
                       seed=seed)
    os.unlink(path)
    scene = env
    shadow = ExactStablePD(scene.sim_char, scene.ctrl.params.kp, scene.ctrl.params.kd,
                           [j.torque_lim for j in scene.char_desc.joints])
    dt = 1.0 / 60.0 / env.get_num_update_substeps()
    rows = []
    for _ in range(int(round(duration / dt))):
        if env.need_new_action(0):
            action = scene.calc_ref_action()
            env.set_action(0, action)
            shadow.set_targets(*scene.ctrl.action_layout.to_targets(action))
        torques = shadow.joint_torques(shadow.calc_torques(dt))
        over_norm = [np.linalg.norm(t) > lim for t, lim in zip(torques, shadow.torque_lim)]
        over_comp = [np.abs(t).max() > lim for t, lim in zip(torques, shadow.torque_lim)]
        env.update(dt)
        upright = scene.sim_char.get_root_pos()[1] > 0.6 and not scene.has_fallen()
        rows.append((scene.sim_pose_vel()[0].copy(), scene.calc_joint_errors(), over_norm, over_comp, upright))
    env.shutdown()
    return rows


def bench_pd_compare(arg_file, seed):
    env = DeepMimicEnv(load_args(["--arg_file", arg_file]), seed=seed)
    scene = env
    dt = 1.0 / 60.0 / env.get_num_update_substeps()
    print("PD command cost (ms per env update, median of 500, character standing in the reference pose):")
    for mode in PD_MODES:
        pd = build_pd_controller(mode, scene.sim_char, scene.ctrl.params.kp, scene.ctrl.params.kd,
                                 [j.torque_lim for j in scene.char_desc.joints])
        pd.set_targets(*scene.ctrl.action_layout.to_targets(scene.calc_ref_action()))
        times = []
        for _ in range(500):
            start = time.perf_counter()
            pd.apply(dt)
            times.append(time.perf_counter() - start)
        print(f"  {mode:<8}{1e3 * np.median(times):.3f}")
    env.shutdown()

    runs = {mode: track_run(mode, arg_file, seed, 2.0) for mode in PD_MODES}
    n_up = min(next((i for i, r in enumerate(rows) if not r[4]), len(rows)) for rows in runs.values())
    print(f"walk PD tracking from the same reference state, {dt:.5f} s updates; upright for "
          f"{n_up * dt:.2f} s (root above 0.6, no fall contact)")
    reward = ImitateReward(scene.char_desc)
    names = [scene.char_desc.joints[j].name for j in scene.sim_char.actuated_ids]
    for label, count in (("upright part", n_up), ("2 s incl. fall", len(runs["builtin"]))):
        print(f"  {label}:")
        for mode, rows in runs.items():
            errs = np.array([r[1] for r in rows[:count]])
            norm = np.array([r[2] for r in rows[:count]])
            comp = np.array([r[3] for r in rows[:count]])
            joints = ", ".join(f"{names[j]} {norm[:, j].mean():.1%}" for j in np.flatnonzero(norm.any(axis=0)))
            print(f"    {mode:<8} mean joint tracking error {errs.mean():.4f} rad; saturated joint-updates "
                  f"by norm {norm.mean():.2%} ({norm.any(axis=1).mean():.1%} of updates; {joints or 'none'}), "
                  f"by component {comp.mean():.2%}")
        diffs = np.array([np.concatenate(reward.joint_errors(a[0], b[0]))
                          for a, b in zip(runs["builtin"][:count], runs["exact"][:count])])
        print(f"    builtin vs exact joint angles: mean {diffs.mean():.2e} rad, max {diffs.max():.2e} rad")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--args", default="args/train_humanoid3d_walk_args.txt")
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--stepping", choices=("advance", "update"), default="advance",
                        help="advance: env.advance runs of updates as update_world drives them; "
                             "update: one env update per call, with the checks after each")
    parser.add_argument("--pd-compare", action="store_true")
    opts = parser.parse_args()
    os.chdir(Path(__file__).resolve().parents[2])
    if opts.pd_compare:
        bench_pd_compare(opts.args, opts.seed)
    else:
        bench_throughput(opts.args, opts.seconds, opts.seed, opts.stepping)


if __name__ == "__main__":
    main()
