"""PPO and the world loop on the toy env: learning, modes, logs, checkpoints, resume, evaluation."""
import numpy as np
import pytest

from app.evaluate import evaluate, summarize, write_stats
from app.rollout import WorldEvent, WorldHooks, run_updates, update_world
from env.env import Mode, Terminate
from env.style_error import STYLE_ERRORS
from env.tracking_error import TRACKING_ERRORS
from learning.test_metrics import FALL_COLUMN, STYLE_COLUMNS, SUCCESS_COLUMN, TRACKING_COLUMNS
from learning.checkpoint import read_checkpoint
from learning.rl_world import RLWorld
from learning.tf_util import limit_tf_threads, seed_rank
from tests.toy_env import PointMassEnv, register_small_net, toy_args, write_agent_file
from util.logger import MIN_COLUMN_WIDTH

limit_tf_threads()
register_small_net()

LOG_COLUMNS = ["Iteration", "Wall_Time", "Samples", "Train_Return", "Test_Return", "State_Mean",
               "State_Std", "Goal_Mean", "Goal_Std", "Exp_Rate", "Exp_Noise", "Critic_Loss",
               "Critic_Stepsize", "Actor_Loss", "Actor_Stepsize", "Clip_Frac", "Adv_Mean", "Adv_Std"]


def make_world(tmp_path, *extra, env=None, **overrides):
    agent_file = write_agent_file(tmp_path / "agent.txt", **overrides)
    return RLWorld(env or PointMassEnv(seed=3), toy_args(agent_file, *extra))


def run_until(world, iters):
    agent = world.agents[0]
    while agent.iter < iters:
        update_world(world, 1 / 60)


def read_log(path):
    lines = path.read_text().splitlines()
    return lines[0].split(), [list(map(float, line.split())) for line in lines[1:]]


def test_ppo_improves_return_on_toy_env(tmp_path):
    seed_rank(1)
    world = make_world(tmp_path, TestEpisodes=0)
    world.env.rng = np.random.RandomState(100)
    before = summarize(evaluate(world, 24))["mean_reward"]
    run_until(world, 12)
    world.env.rng = np.random.RandomState(100)       # the same 24 starts and targets
    after = summarize(evaluate(world, 24))["mean_reward"]
    assert after > before + 0.15, (before, after)


def test_decision_logp_is_the_gaussian_density_of_the_action(tmp_path):
    """The numpy decision path (mean + std * noise, logp from the noise) against TF's gaussian_logp
    of the returned action; mean actions have the density at the mean."""
    import tensorflow as tf
    from learning.losses import gaussian_logp

    world = make_world(tmp_path, ExpParamsBeg={"Rate": 1.0, "Noise": 0.3}, ExpParamsEnd={"Rate": 1.0, "Noise": 0.3})
    agent = world.agents[0]
    s, g = world.env.record_state(0), world.env.record_goal(0)
    mean = agent.model.actor_mean_np(agent._norm_inputs(s[None], g[None]))
    logstd = agent.model.logstd_np()
    for exploring in (True, False):
        agent.enable_training = exploring
        action, logp = agent._decide_action(s, g)
        assert agent._exp_action == exploring
        norm_a = agent.a_norm.normalize(action)[None].astype(np.float32)
        expected = float(gaussian_logp(tf.constant(norm_a), tf.constant(mean), tf.constant(logstd))[0])
        assert logp == pytest.approx(expected, rel=1e-5, abs=1e-4)
        assert np.any(norm_a != mean) == exploring


def test_modes_logs_and_checkpoints(tmp_path):
    seed_rank(2)
    out = tmp_path / "out"
    world = make_world(tmp_path, "--output_path", out, "--int_output_path", out / "int",
                       OutputIters=3, IntOutputIters=4, TestEpisodes=4)
    agent = world.agents[0]
    modes = []
    while agent.iter < 6:
        update_world(world, 1 / 60)
        modes.append(agent.mode)
    assert Mode.TEST in modes and agent.avg_test_return > 0
    header, rows = read_log(out / "agent0_log.txt")
    assert header == LOG_COLUMNS
    assert [r[0] for r in rows] == [0, 1, 2, 3, 4, 5]              # a row every iteration
    line = (out / "agent0_log.txt").read_text().splitlines()[1]
    assert len(line) == sum(max(len(c), MIN_COLUMN_WIDTH) + 1 for c in LOG_COLUMNS) - 1  # fixed width
    samples = [r[2] for r in rows]
    assert samples == sorted(samples) and samples[0] >= 512
    # Rate annealed by the samples counted at the previous training round
    assert all(r[9] == pytest.approx(1 - 0.8 * prev[2] / 1e6) for prev, r in zip(rows, rows[1:]))
    assert rows[-1][9] < rows[0][9] < 1
    assert all(r[14] == pytest.approx(0.01) and r[10] == 0.4 for r in rows)   # Actor_Stepsize, Noise
    assert (out / "agent0_model.ckpt.index").is_file() and (out / "agent0_model.ckpt.resume.npz").is_file()
    ints = sorted(p.name for p in (out / "int" / "agent0_models").glob("*.index"))
    assert ints == ["agent0_int_model_0000000000.ckpt.index", "agent0_int_model_0000000004.ckpt.index"]
    saved = read_checkpoint(out / "agent0_model.ckpt")      # saved at iteration 3 (before step 4)
    assert saved["agent/resource/s_norm/count"][0] > 0


def step_world(world, timestep):
    """One update of the rollout loop (with the episode checks)."""
    return run_updates(world.env, timestep, 1, WorldHooks(world))


def test_invalid_episode_is_discarded(tmp_path):
    world = make_world(tmp_path)
    agent = world.agents[0]
    for _ in range(5):
        assert step_world(world, 1 / 120) == WorldEvent.NONE
    assert agent.path.pathlength() > 0
    world.env.force_invalid = True
    assert step_world(world, 1 / 120) == WorldEvent.INVALID_EPISODE
    assert agent.path.pathlength() == 0 and agent.replay_buffer.total_count == 0
    while step_world(world, 1 / 120) != WorldEvent.EPISODE_END:
        pass
    assert agent.replay_buffer.num_paths == 1 and agent.replay_buffer.total_count == 31


def test_resume_continues_counts(tmp_path):
    seed_rank(3)
    out = tmp_path / "out"
    world = make_world(tmp_path, "--output_path", out, OutputIters=100, TestEpisodes=0)
    run_until(world, 3)
    world.save_outputs()
    first = world.agents[0]
    _, rows = read_log(out / "agent0_log.txt")
    resumed = make_world(tmp_path, "--output_path", out, "--resume", "true", OutputIters=100, TestEpisodes=0)
    agent = resumed.agents[0]
    assert (agent.iter, agent.total_sample_count) == (3, first.total_sample_count)
    for name, var in first.model.variables.items():
        np.testing.assert_array_equal(agent.model.variables[name].numpy(), var.numpy())
    np.testing.assert_array_equal(agent.s_norm.mean_sq, first.s_norm.mean_sq)
    assert agent.actor_solver.iter == first.actor_solver.iter
    run_until(resumed, 5)
    _, rows = read_log(out / "agent0_log.txt")
    assert [r[0] for r in rows] == [0, 1, 2, 3, 4]                     # appended, one header
    assert rows[3][2] > first.total_sample_count


def test_resume_needs_output_path(tmp_path):
    with pytest.raises(ValueError, match="--resume needs --output_path"):
        make_world(tmp_path, "--resume", "true")


class TermsEnv(PointMassEnv):
    def get_reward_terms(self, agent_id):
        return {"dist": float(np.linalg.norm(self.target - self.pos)), "one": 1.0}


def test_evaluate_reports_episodes(tmp_path):
    env = TermsEnv(seed=5, episode_time=0.5)
    world = make_world(tmp_path, env=env)
    stats = evaluate(world, 3)
    assert len(stats) == 3 and env.mode == Mode.TRAIN        # training mode restored
    for s in stats:
        assert s.length_s == pytest.approx(0.5) and not s.fell
        assert s.num_decisions == 15 and 0 < s.mean_reward <= 1
        assert s.reward_terms["one"] == 1.0 and s.reward_terms["dist"] > 0
    cut = evaluate(world, 2, max_episode_time=0.25)
    assert [s.length_s for s in cut] == pytest.approx([0.25, 0.25])
    write_stats(tmp_path / "stats.json", stats)
    assert '"falls": 0' in (tmp_path / "stats.json").read_text()


def test_evaluate_marks_falls(tmp_path):
    env = PointMassEnv(seed=5)
    env.check_terminate = lambda agent_id: Terminate.Fail if env.time > 0.2 else Terminate.Null
    stats = evaluate(make_world(tmp_path, env=env), 2)
    assert all(s.fell and s.length_s == pytest.approx(0.2 + 1 / 60, abs=1 / 60) for s in stats)


# each 'imitation metric' of the point mass is its own multiple of the distance to the target, so a
# column holding another metric's value shows
METRIC_FACTORS = {name: k + 1.0 for k, name in enumerate(TRACKING_ERRORS)}


class RecordingPointMassEnv(PointMassEnv):
    """The point mass with a list per test episode (test_episodes) for what its metrics report."""

    def __init__(self, **kwargs):
        self.test_episodes = []
        super().__init__(**kwargs)

    def reset(self):
        super().reset()
        if self.mode == Mode.TEST:
            self.test_episodes.append([])


class TrackingPointMassEnv(RecordingPointMassEnv):
    """The point mass with 'imitation metrics': error `name` is METRIC_FACTORS[name] x the distance
    to the target. It keeps the distances it reported in test mode, per episode."""

    def calc_tracking_error(self, agent_id):
        dist = float(np.linalg.norm(self.target - self.pos))
        if self.mode == Mode.TEST:
            self.test_episodes[-1].append((dist, self.check_terminate(0) == Terminate.Fail))
        return {name: factor * dist for name, factor in METRIC_FACTORS.items()}


def first_test_phase(tmp_path, env):
    """Trains on env until the first log row, which follows the first test phase (3 episodes);
    (agent, log header, that row as a dict, the env's first 3 test episodes)."""
    seed_rank(4)
    out = tmp_path / "out"
    world = make_world(tmp_path, "--output_path", out, env=env, TestEpisodes=3, IntOutputIters=100)
    agent = world.agents[0]
    while agent.iter < 1:
        update_world(world, 1 / 60)
    header, rows = read_log(out / "agent0_log.txt")
    return agent, header, dict(zip(header, rows[0])), [e for e in env.test_episodes if e][:3]


def test_test_phase_logs_imitation_metrics(tmp_path):
    """The first test phase's three episodes: each metric's column is the mean over the episodes of
    the episode's mean per decision of that metric; success needs no fall and a mean body error
    <= 0.08."""
    env = TrackingPointMassEnv(seed=5)
    _, header, row, episodes = first_test_phase(tmp_path, env)
    assert header[:5] == LOG_COLUMNS[:5]
    assert header[5:5 + len(TRACKING_COLUMNS) + 2] == [*TRACKING_COLUMNS, FALL_COLUMN, SUCCESS_COLUMN]
    assert len(episodes) == 3
    means = [np.mean([d for d, _ in e]) for e in episodes]
    fails = [e[-1][1] for e in episodes]        # the last read is at the episode's end
    for name, factor in METRIC_FACTORS.items():
        assert row["Test_" + name.title()] == pytest.approx(factor * np.mean(means), rel=1e-6), name
    assert row["Test_Fall_Rate"] == pytest.approx(np.mean(fails))
    body_pos = [METRIC_FACTORS["body_pos_err"] * m for m in means]
    assert row["Test_Success_Rate"] == pytest.approx(np.mean([not f and b <= 0.08 for f, b in zip(fails, body_pos)]))


STYLE_FACTORS = {name: k + 1.0 for k, name in enumerate(STYLE_ERRORS)}
HEADING = np.pi - 0.1


class StylePointMassEnv(RecordingPointMassEnv):
    """The point mass with 'style metrics': metric `name` is STYLE_FACTORS[name] x the distance to
    the target; the heading alternates between +-HEADING by decision, starting with +HEADING in
    odd-numbered test episodes and -HEADING in even ones (circular means near pi, arithmetic means
    near 0; an odd number of decisions puts the episode's mean on its first heading's side). It
    keeps what it reported in test mode, per episode, and counts the reads in other modes."""

    def __init__(self, **kwargs):
        self.other_reads = 0
        super().__init__(**kwargs)

    def calc_style_error(self, agent_id):
        """(Reads at time 0 are the callers' checks whether the env reports style: not kept.)"""
        dist = float(np.linalg.norm(self.target - self.pos))
        kept = self.mode == Mode.TEST and self.time > 0
        heading = HEADING if not kept or (len(self.test_episodes) + len(self.test_episodes[-1])) % 2 else -HEADING
        if kept:
            self.test_episodes[-1].append((dist, heading, self.check_terminate(0) == Terminate.Fail))
        elif self.time > 0:
            self.other_reads += 1
        return {**{name: factor * dist for name, factor in STYLE_FACTORS.items()}, "heading": heading}


def angle_diff(a, b):
    return abs((a - b + np.pi) % (2 * np.pi) - np.pi)


def circular(angles):
    angles = list(angles)
    return np.arctan2(np.sum(np.sin(angles)), np.sum(np.cos(angles)))


def test_test_phase_logs_style_metrics(tmp_path):
    """An env reporting style metrics and no tracking errors: the test phase's columns are the
    style ones and the fall rate (no success rate); each style error's column is the mean over the
    episodes of the episode's mean, the heading's the circular mean of the episodes' circular
    means (near pi here, where an arithmetic mean would be near 0). Training episodes never read
    the metrics."""
    env = StylePointMassEnv(seed=5)
    agent, header, row, episodes = first_test_phase(tmp_path, env)
    assert header[5:5 + len(STYLE_COLUMNS) + 2] == [*STYLE_COLUMNS, FALL_COLUMN, "State_Mean"]
    assert len(episodes) == 3
    means = [np.mean([d for d, _, _ in e]) for e in episodes]
    for name, factor in STYLE_FACTORS.items():
        assert row["Test_" + name.title()] == pytest.approx(factor * np.mean(means), rel=1e-6), name
    episode_headings = [circular(h for _, h, _ in e) for e in episodes]
    expected = np.arctan2(np.sin(episode_headings).sum(), np.cos(episode_headings).sum())
    assert angle_diff(row["Test_Heading"], expected) < 1e-6 and angle_diff(expected, np.pi) < 0.1
    assert row[FALL_COLUMN] == pytest.approx(np.mean([e[-1][2] for e in episodes]))
    assert env.other_reads == 0 and agent.total_sample_count > 0


class TrackingStylePointMassEnv(StylePointMassEnv):
    """Style metrics as StylePointMassEnv's and tracking errors a hundredth of
    TrackingPointMassEnv's (every episode without a fall a success); the first test episode falls
    after 0.3 s."""

    def calc_tracking_error(self, agent_id):
        dist = float(np.linalg.norm(self.target - self.pos))
        return {name: 0.01 * factor * dist for name, factor in METRIC_FACTORS.items()}

    def check_terminate(self, agent_id):
        if self.mode == Mode.TEST and len(self.test_episodes) == 1 and self.time > 0.3:
            return Terminate.Fail
        return super().check_terminate(agent_id)


def test_test_phase_logs_tracking_and_style_metrics(tmp_path):
    """An env reporting both (imitate with --enable_style_error): tracking columns, style columns,
    then the fall and success rates, each from its own metric."""
    _, header, row, episodes = first_test_phase(tmp_path, TrackingStylePointMassEnv(seed=5))
    columns = [*TRACKING_COLUMNS, *STYLE_COLUMNS, FALL_COLUMN, SUCCESS_COLUMN]
    assert header[5:5 + len(columns)] == columns
    mean = np.mean([np.mean([d for d, _, _ in e]) for e in episodes])
    assert row["Test_Body_Pos_Err"] == pytest.approx(0.01 * METRIC_FACTORS["body_pos_err"] * mean, rel=1e-6)
    assert row["Test_Root_Speed"] == pytest.approx(STYLE_FACTORS["root_speed"] * mean, rel=1e-6)
    assert [e[-1][2] for e in episodes] == [True, False, False]
    assert row[FALL_COLUMN] == pytest.approx(1 / 3) and row[SUCCESS_COLUMN] == pytest.approx(2 / 3)


def test_evaluate_reports_style_metrics(tmp_path):
    """evaluate: per episode the style metrics' means (the heading's circular), the return, and in
    the summary their means over the episodes."""
    env = StylePointMassEnv(seed=5, episode_time=0.5)
    stats = evaluate(make_world(tmp_path, env=env), 2)
    for s, episode in zip(stats, env.test_episodes):
        assert len(episode) == s.num_decisions == 15        # read once per decision
        mean = np.mean([d for d, _, _ in episode])
        assert s.style["style_err"] == pytest.approx(mean) and s.style["root_speed"] == pytest.approx(2 * mean)
        assert angle_diff(s.style["heading"], circular(h for _, h, _ in episode)) < 1e-9
        assert angle_diff(s.style["heading"], np.pi) < 0.1 and not s.tracking and s.success is None
        assert s.episode_return == pytest.approx(s.mean_reward * s.num_decisions)
    assert stats[0].style["heading"] * stats[1].style["heading"] < 0     # on both sides of +-pi
    summary = summarize(stats)
    assert summary["root_speed"] == pytest.approx(np.mean([s.style["root_speed"] for s in stats]))
    assert angle_diff(summary["heading"], circular(s.style["heading"] for s in stats)) < 1e-9
    assert angle_diff(summary["heading"], np.pi) < 0.1
    assert "successes" not in summary


def test_adam_solvers_and_their_resume(tmp_path):
    """ActorOptimizer / CriticOptimizer Adam: the solvers are Adam's, they train, and a resumed run
    has the same first and second moments and step counts (the resume state's solver/<name>/v<i>)."""
    from learning.solvers.mpi_adam import MPIAdamSolver

    seed_rank(5)
    out = tmp_path / "out"
    adam = {"ActorOptimizer": "Adam", "CriticOptimizer": "Adam", "ActorStepsize": 1e-4, "CriticStepsize": 1e-3}
    world = make_world(tmp_path, "--output_path", out, OutputIters=100, TestEpisodes=0, **adam)
    first = world.agents[0]
    assert isinstance(first.actor_solver, MPIAdamSolver) and isinstance(first.critic_solver, MPIAdamSolver)
    run_until(world, 2)
    world.save_outputs()
    resumed = make_world(tmp_path, "--output_path", out, "--resume", "true", OutputIters=100, TestEpisodes=0,
                         **adam).agents[0]
    for name in ("actor_solver", "critic_solver"):
        a, b = getattr(first, name).state(), getattr(resumed, name).state()
        assert a["iter"] == b["iter"] > 0
        assert any(np.any(v != 0) for v in a["v_slots"])
        for key in ("slots", "v_slots"):
            for x, y in zip(a[key], b[key]):
                np.testing.assert_array_equal(x, y)


def test_unknown_optimizer_is_a_config_error(tmp_path):
    from learning.configs.config import ConfigError

    with pytest.raises(ConfigError, match="ActorOptimizer: must be one of SGD, Adam, got 'RMSProp'"):
        make_world(tmp_path, ActorOptimizer="RMSProp")
