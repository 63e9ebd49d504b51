"""The compiled stable-PD update through pybullet's C API (env/sim/bullet_c_api.py) against the
Python path it replaces: the same state read, the same torques, bitwise the same trajectories."""
import importlib.metadata
from pathlib import Path

import numpy as np
import pytest

from env.sim import bullet_c_api
from env.sim.pd_controller import TreeStablePD
from env.sim.sim_character import SimCharacter
from env.sim.world import World
from tests.test_sim_pd import desc, gains, random_targets, start_state  # noqa: F401 (fixtures)
from util import warn_once

DT = 1.0 / 600.0
ROOT = Path(__file__).resolve().parent.parent


def test_the_pinned_wheel_has_it():
    assert bullet_c_api.available() is True


def character(desc, gains, seed, scale=4.0, c_api=True):
    """A humanoid thrown from 1.5 m with random joint velocities and PD targets, in a world of its own;
    its controller on the compiled update (c_api True), the Python path (False) or its own choice (None)."""
    world = World(world_scale=scale, num_sim_substeps=2, timestep=DT)
    sim = SimCharacter(world, desc)
    rng = np.random.default_rng(seed)
    sim.set_state(*start_state(desc, rng, 1.5))
    pd = TreeStablePD(sim, *gains)
    if c_api is not None:
        pd.c_api = c_api
    pd.set_targets(*random_targets(sim, rng))
    return world, sim, pd


def rollout(world, sim, pd, steps):
    """Per step: the torques commanded (the lengths before the clamp) and the state after it."""
    out = []
    for _ in range(steps):
        pd.apply(DT)
        norms = pd.last_torque_norms.copy()
        world.step()
        q, qd = pd.generalized_state()
        out.append(np.concatenate([norms, q, qd]))
    return np.array(out)


def test_state_read_equals_pybullets_functions(desc, gains):
    """One actual-state request gives bitwise what getBasePositionAndOrientation, getBaseVelocity and
    getJointStatesMultiDof give, for a client other than the first too."""
    worlds = [character(desc, gains, seed) for seed in (0, 1)]
    try:
        for world, sim, pd in worlds:
            world.step()
            q, qd = np.zeros(pd._num_q), np.zeros(pd._num_v)
            slot = bullet_c_api.client_slot(world.client)
            assert bullet_c_api.read_state(slot, sim.body, q, qd) == bullet_c_api.OK
            expected_q, expected_qd = pd.generalized_state()
            assert np.array_equal(q, expected_q) and np.array_equal(qd, expected_qd)
            assert np.abs(qd).max() > 0.1
        assert not np.array_equal(worlds[0][2].generalized_state()[0], worlds[1][2].generalized_state()[0])
        # a body that is not there, or arrays of the wrong size: an error code, nothing written
        world, sim, pd = worlds[0]
        q, qd = np.full(pd._num_q, 7.0), np.full(pd._num_v, 7.0)
        slot = bullet_c_api.client_slot(world.client)
        assert bullet_c_api.read_state(slot, sim.body + 5, q, qd) == bullet_c_api.NO_STATE
        assert bullet_c_api.read_state(slot, sim.body, q[:-1], qd) == bullet_c_api.NO_STATE
        assert np.all(q == 7.0) and np.all(qd == 7.0)
    finally:
        for world, _, _ in worlds:
            world.shutdown()


@pytest.mark.parametrize("scale", [4.0, 1.0])
def test_compiled_update_is_the_python_path_bitwise(desc, gains, scale):
    """300 updates of a falling, contact-making humanoid with saturating joints: the compiled update
    and TreeStablePD's Python path (state functions, compiled torques, per-joint lists to
    setJointMotorControlMultiDofArray) give the same torques and states to the last bit."""
    runs = []
    for c_api in (True, False):
        world, sim, pd = character(desc, gains, seed=3, scale=scale, c_api=c_api)
        runs.append(rollout(world, sim, pd, 300))
        world.shutdown()
    compiled, python = runs
    assert np.array_equal(compiled, python)
    norms = compiled[:, :12]
    assert np.any(norms > pd.torque_lim)       # some joints saturate: the clamp is exercised
    assert np.abs(compiled[-1] - compiled[0]).max() > 1.0


def test_a_closed_client_is_an_error_not_a_crash(desc, gains):
    world, sim, pd = character(desc, gains, seed=0)
    pd.apply(DT)
    world.shutdown()
    with pytest.raises(RuntimeError, match="not connected"):
        pd.apply(DT)


FALLBACK_WARNING = "warning: stable PD: the Python path, about 2x slower than the compiled update: pybullet's C API " \
                   "cannot be used ({})"


def test_unavailable_api_keeps_the_python_path(desc, gains, monkeypatch, capsys):
    """A wheel without the symbols: the controller says so (c_api False, one warning line per
    process naming the reason) and still runs."""
    monkeypatch.setattr(bullet_c_api, "_found", "a stripped build")
    monkeypatch.setattr(warn_once, "_warned", set())
    world, sim, _ = character(desc, gains, seed=0)
    try:
        assert bullet_c_api.available() == "a stripped build"
        pds = [TreeStablePD(sim, *gains) for _ in range(2)]
        assert not pds[0].c_api and not pds[1].c_api
        pds[0].set_targets(*random_targets(sim, np.random.default_rng(0)))
        pds[0].apply(DT)
        world.step()
        assert capsys.readouterr().err.splitlines() == [FALLBACK_WARNING.format("a stripped build")]
        with pytest.raises(RuntimeError, match="a stripped build"):
            bullet_c_api.client_slot(world.client)
    finally:
        world.shutdown()


def test_without_the_api_the_python_path_drives_the_character(desc, gains, monkeypatch):
    """A wheel without the symbols: the controller chooses the Python path by itself and its torques
    act, 100 updates bitwise those of the compiled update on a wheel with them."""
    world, sim, pd = character(desc, gains, seed=3)
    compiled = rollout(world, sim, pd, 100)
    world.shutdown()
    monkeypatch.setattr(bullet_c_api, "_found", "a stripped build")
    world, sim, pd = character(desc, gains, seed=3, c_api=None)
    try:
        assert pd.c_api is False
        assert np.array_equal(rollout(world, sim, pd, 100), compiled)
    finally:
        world.shutdown()


def test_another_pybullet_version_keeps_the_python_path(desc, gains, monkeypatch, capsys):
    """The installed version is read from the package's metadata (pybullet's getAPIVersion is the
    date of its client API, 202010061 in 3.2.7, not the release): another version than the one
    the C calls are written for keeps the Python path, with the warning naming both versions."""
    real_version = importlib.metadata.version
    monkeypatch.setattr(importlib.metadata, "version",
                        lambda name: "3.2.6" if name == "pybullet" else real_version(name))
    monkeypatch.setattr(bullet_c_api, "_found", None)
    monkeypatch.setattr(warn_once, "_warned", set())
    world, sim, _ = character(desc, gains, seed=0)
    try:
        reason = "pybullet 3.2.6 is installed, the C calls are written for 3.2.7"
        assert bullet_c_api.available() == reason
        assert not TreeStablePD(sim, *gains).c_api
        assert capsys.readouterr().err.splitlines() == [FALLBACK_WARNING.format(reason)]
    finally:
        world.shutdown()


def test_the_version_is_requirements_pin():
    pins = (ROOT / "requirements.txt").read_text().split()
    assert f"pybullet=={bullet_c_api.PYBULLET_VERSION}" in pins
