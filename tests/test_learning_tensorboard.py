"""TensorBoard event files beside the log: every log column, each row's values, and the mean
reward terms, read back with TensorBoard's own event reader; off with --tensorboard false. The
plot command (scripts/plot_log.py) on the same real log, and on files that are not logs."""
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
from tensorboard.util.tensor_util import make_ndarray

from app.rollout import update_world

from learning.rl_world import RLWorld
from learning.tf_util import seed_rank
from tests.toy_env import PointMassEnv, register_small_net, toy_args, write_agent_file


class TermsEnv(PointMassEnv):
    """The point mass whose reward has two named terms: pos = the reward, half = half of it."""

    def calc_reward(self, agent_id):
        self.last_reward = super().calc_reward(agent_id)
        return self.last_reward

    def get_reward_terms(self, agent_id):
        return {"pos": self.last_reward, "half": 0.5 * self.last_reward}


def read_log(path):
    lines = path.read_text().splitlines()
    return lines[0].split(), np.array([list(map(float, line.split())) for line in lines[1:]])


ROOT = Path(__file__).resolve().parent.parent


def train(tmp_path, *extra, iters=2):
    register_small_net()
    seed_rank(4)
    out = tmp_path / "out"
    world = RLWorld(TermsEnv(seed=2), toy_args(write_agent_file(tmp_path / "agent.txt", TestEpisodes=0),
                                               "--output_path", out, *extra))
    agent = world.agents[0]
    rewards = []
    calc = agent.env.calc_reward
    agent.env.calc_reward = lambda agent_id: rewards.append(calc(agent_id)) or rewards[-1]
    while agent.iter < iters:
        update_world(world, 1 / 60)
    world.shutdown()
    return out, rewards


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    return train(tmp_path_factory.mktemp("run"))


def test_event_files_hold_every_log_column(trained):
    out, rewards = trained
    header, rows = read_log(out / "agent0_log.txt")
    events = EventAccumulator(str(out / "tensorboard" / "agent0"), size_guidance={"tensors": 0})
    events.Reload()
    tags = set(events.Tags()["tensors"])
    assert set(header) <= tags
    for i, name in enumerate(header):
        logged = [(e.step, float(make_ndarray(e.tensor_proto))) for e in events.Tensors(name)]
        assert [step for step, _ in logged] == list(rows[:, 0].astype(int))
        np.testing.assert_allclose([v for _, v in logged], rows[:, i], rtol=1e-6, atol=1e-6)
    pos = [float(make_ndarray(e.tensor_proto)) for e in events.Tensors("Reward_Terms/pos")]
    half = [float(make_ndarray(e.tensor_proto)) for e in events.Tensors("Reward_Terms/half")]
    assert len(pos) == len(rows) and np.allclose(half, 0.5 * np.array(pos), rtol=1e-6)
    assert min(rewards) - 1e-6 <= min(pos) and max(pos) <= max(rewards) + 1e-6


def test_tensorboard_can_be_switched_off(tmp_path):
    out, _ = train(tmp_path, "--tensorboard", "false", iters=1)
    assert (out / "agent0_log.txt").is_file()
    assert not (out / "tensorboard").exists()


def run_plot(*args):
    return subprocess.run([sys.executable, "scripts/plot_log.py", *map(str, args)], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)


def test_plot_log_draws_real_logs_and_refuses_others(trained, tmp_path):
    out, _ = trained
    log = out / "agent0_log.txt"
    png = tmp_path / "curves.png"
    result = run_plot(log, log, "-o", png, "--labels", "a", "b")
    assert result.returncode == 0, result.stderr
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 10000
    assert "panels from 2 log(s)" in result.stdout
    (tmp_path / "notes.txt").write_text("hello\n")
    refused = run_plot(tmp_path / "notes.txt", "-o", tmp_path / "x.png")
    assert refused.returncode == 2 and not (tmp_path / "x.png").exists()
    assert refused.stderr.strip().splitlines() == [
        f"plot_log.py: {tmp_path / 'notes.txt'}: not a training log (no header row with Iteration and Samples)"]
