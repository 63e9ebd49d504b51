"""env.advance (runs of updates between decisions, as app.rollout.update_world drives the
env) gives bit-identical episodes to one update per call with the agent and episode checks after
each, as app.rollout runs them for hooks that see every update (each_update)."""
import numpy as np
import pytest

from env.deepmimic_env import DeepMimicEnv
from util.arg_parser import load_args

FRAMES = 120


def run(arg_file, use_advance, extra=()):
    env = DeepMimicEnv(load_args(["--arg_file", arg_file, *extra]), seed=3)
    layout = env.ctrl.action_layout
    rng = np.random.default_rng(5)
    substeps = env.get_num_update_substeps()
    dt = 1.0 / 60.0 / substeps
    log = []
    for _ in range(FRAMES):
        remaining = substeps
        while remaining > 0:
            if env.need_new_action(0):
                log.append(("state", env.get_time(), env.record_state(0)))
                log.append(("reward", env.calc_reward(0)))
                env.set_action(0, -layout.offset + 0.3 * rng.standard_normal(layout.size) / layout.scale)
            remaining -= env.advance(dt, remaining) if use_advance else (env.update(dt) or 1)
            if not env.check_valid_episode() or env.is_episode_end():
                log.append(("end", env.get_time(), int(env.check_terminate(0))))
                env.reset()
                break
    env.shutdown()
    return log


@pytest.mark.parametrize("arg_file, extra", [
    ("args/run_humanoid3d_walk_wheel_args.txt", ()),
    ("args/train_humanoid3d_walk_args.txt", ("--time_lim_min", "1.5", "--time_lim_max", "1.5")),
])
def test_advance_matches_single_updates(arg_file, extra):
    stepped, advanced = run(arg_file, False, extra), run(arg_file, True, extra)
    assert len(stepped) == len(advanced)
    assert sum(entry[0] == "end" for entry in stepped) >= 2
    for a, b in zip(stepped, advanced):
        assert a[0] == b[0] and a[1] == b[1]
        if a[0] != "reward":
            assert np.array_equal(a[2], b[2])
