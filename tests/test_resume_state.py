"""learning/resume_state.py: a checkpoint and its resume state always resume as a pair. A save
killed before any of its file operations (simulated: the process 'dies' there) resumes the old
pair or the new one, never a mix, also when the kill comes again at the next save; a model saved
over the pair outside it, or from another run, is refused in one line; an older resume state
without the digest loads with a warning."""
import numpy as np
import pytest

from learning import checkpoint, resume_state
from learning.checkpoint import CheckpointError
from learning.resume_state import (DIGEST_KEY, RESUME_SUFFIX, paired_checkpoint, read_resume_state,
                                   write_checkpoint_and_resume_state, write_resume_state)
from learning.rl_world import RLWorld
from learning.tf_util import limit_tf_threads
from tests.toy_env import PointMassEnv, register_small_net, toy_args, write_agent_file

limit_tf_threads()
register_small_net()


class Killed(BaseException):
    """The process died here (raised before a file operation)."""


def save_killed_at(monkeypatch, kill_at, prefix, tensors, state):
    """write_checkpoint_and_resume_state, killed before its kill_at-th file operation (link,
    rename or removal): (whether it was killed, whether the resume state was renamed into place)."""
    ops = []

    def dying(real):
        def op(*args, **kwargs):
            if len(ops) == kill_at:
                raise Killed
            ops.append(args)
            return real(*args, **kwargs)
        return op
    for name in ("replace", "link", "remove"):
        monkeypatch.setattr(checkpoint.os, name, dying(getattr(checkpoint.os, name)))
    try:
        write_checkpoint_and_resume_state(prefix, tensors, state)
        killed = False
    except Killed:
        killed = True
    finally:
        monkeypatch.undo()
    return killed, any(str(op[-1]).endswith(RESUME_SUFFIX) for op in ops)


def model(it):
    return {"w": np.full((8, 8), it, np.float32), "count": np.array([it], np.int32)}


def resumed_iterations(prefix):
    """(the resume state's iteration, the iteration the loaded model was saved at)."""
    model_prefix, state = paired_checkpoint(prefix)
    return int(state["iter"]), int(checkpoint.read_checkpoint(model_prefix)["count"][0])


def test_a_save_killed_at_any_point_resumes_a_pair_that_belongs_together(tmp_path, monkeypatch):
    """Every kill point of a save, and after each, every kill point of the next save."""
    first_kill = 0
    while True:
        prefix = tmp_path / f"k{first_kill}" / "m.ckpt"
        write_checkpoint_and_resume_state(prefix, model(1), {"iter": 1})
        killed, state_written = save_killed_at(monkeypatch, first_kill, prefix, model(2), {"iter": 2})
        state_iter, model_iter = resumed_iterations(prefix)
        assert state_iter == model_iter == (2 if state_written else 1), f"first save killed at op {first_kill}"
        second_kill = 0
        while True:
            again = tmp_path / f"k{first_kill}_{second_kill}"
            again.mkdir()
            for path in prefix.parent.iterdir():
                (again / path.name).write_bytes(path.read_bytes())
            killed_again, state_written = save_killed_at(monkeypatch, second_kill, again / "m.ckpt", model(3),
                                                         {"iter": 3})
            state_iter_2, model_iter_2 = resumed_iterations(again / "m.ckpt")
            assert state_iter_2 == model_iter_2 == (3 if state_written else state_iter), \
                f"saves killed at ops {first_kill} and {second_kill}"
            if not killed_again:
                break
            second_kill += 1
        if not killed:
            break
        first_kill += 1
    assert first_kill == 7         # two links and two renames of the checkpoint, one of the state, two removals
    assert sorted(p.name for p in prefix.parent.iterdir()) == ["m.ckpt.data-00000-of-00001", "m.ckpt.index",
                                                               "m.ckpt" + RESUME_SUFFIX]


def make_world(tmp_path, *extra):
    agent_file = write_agent_file(tmp_path / "agent.txt", OutputIters=100, TestEpisodes=0)
    return RLWorld(PointMassEnv(), toy_args(agent_file, "--output_path", tmp_path / "out", *extra))


def saved_world(tmp_path):
    """A world whose agent saved its pair at iteration 3, then moved on to iteration 5 with other
    weights (not saved); and the actor's weights saved."""
    world = make_world(tmp_path)
    agent = world.agents[0]
    agent.iter, agent.total_sample_count = 3, 300
    world.save_outputs()
    saved_weights = [v.numpy() for v in agent.model.actor_vars]
    agent.iter, agent.total_sample_count = 5, 500
    for var in agent.model.actor_vars:
        var.assign(var + 1.0)
    return world, saved_weights


def test_a_world_killed_between_the_two_writes_resumes_the_pair_saved_before(tmp_path, monkeypatch, capsys):
    world, saved_weights = saved_world(tmp_path)

    def killed(prefix, state):
        raise Killed
    monkeypatch.setattr(resume_state, "write_resume_state", killed)
    with pytest.raises(Killed):
        world.save_outputs()
    monkeypatch.undo()
    agent = make_world(tmp_path, "--resume", "true").agents[0]
    assert (agent.iter, agent.total_sample_count) == (3, 300)
    for a, b in zip(agent.model.actor_vars, saved_weights):
        np.testing.assert_array_equal(a.numpy(), b)
    assert "the run stopped while saving; resuming from iteration 3 with" in capsys.readouterr().out


def test_the_resume_state_names_the_workers_that_trained_it(tmp_path, monkeypatch):
    """The time-to-skill curve reads the worker count of the training that wrote the pair (a point
    evaluated by a later leg with other workers keeps the training's); states without it read None."""
    from app.skill_curve import read_resume

    monkeypatch.setattr("util.mpi_util.size", lambda: 3)
    saved_world(tmp_path)
    assert read_resume(tmp_path / "out")["workers"] == 3
    write_resume_state(tmp_path / "out" / "agent0_model.ckpt", {"iter": 3, "total_sample_count": 300, "wall_time": 0.1})
    assert read_resume(tmp_path / "out")["workers"] is None


def test_a_model_saved_over_the_pair_is_refused_in_one_line(tmp_path):
    """As a run killed between the two writes of a save that wrote the model first, alone: the
    checkpoint is newer than the resume state."""
    world, _ = saved_world(tmp_path)
    out = tmp_path / "out"
    world.agents[0].save_model(str(out / "agent0_model.ckpt"))
    with pytest.raises(CheckpointError) as err:
        make_world(tmp_path, "--resume", "true")
    message = str(err.value)
    assert "\n" not in message
    assert message.startswith(f"{out}/agent0_model.ckpt is not the checkpoint saved with the resume state "
                              f"{out}/agent0_model.ckpt.resume.npz (iteration 3), nor is {out}/agent0_model.ckpt.prev")


def test_a_resume_state_without_the_digest_loads_with_a_warning(tmp_path, capsys):
    saved_world(tmp_path)
    prefix = tmp_path / "out" / "agent0_model.ckpt"
    state = read_resume_state(prefix)
    del state[DIGEST_KEY]
    write_resume_state(prefix, state)
    agent = make_world(tmp_path, "--resume", "true").agents[0]
    assert (agent.iter, agent.total_sample_count) == (3, 300)
    assert (f"warning: {prefix}{RESUME_SUFFIX}: a resume state written before resume states named their "
            f"checkpoint; resuming with {prefix} unchecked") in capsys.readouterr().out
