"""The pybullet wheel's pretrained walk policy in our imitate scene, through the learning stack as
DeepMimic.py --episodes runs it (RLWorld, PPOAgent with the checkpoint, test mode, mean actions):
over 5 episodes of 20 s it falls at most once (slow: about 20 s of physics per episode)."""
import pytest

from app.build import build_world
from app.evaluate import evaluate, format_episode, summarize
from env.env import Mode
from util.arg_parser import load_args

RUN_WALK = ["--arg_file", "args/run_humanoid3d_walk_wheel_args.txt", "--rand_seed", "7"]


@pytest.mark.slow
def test_pretrained_walk_does_not_fall():
    world = build_world(load_args(RUN_WALK))
    try:
        scene = world.env
        assert scene.mode == Mode.TEST and scene.timer.max_time == 20.0   # the very first episode too
        stats = evaluate(world, 5)
    finally:
        world.shutdown()
    for index, episode in enumerate(stats):
        print(format_episode(index, episode))
    summary = summarize(stats)
    print("summary:", summary)
    assert summary["falls"] <= 1
    assert all(s.length_s == pytest.approx(20.0, abs=0.01) for s in stats if not s.fell)
    assert summary["mean_reward"] > 0.7     # our faithful reward per decision (about 0.8 measured)
