"""--broadphase_margin (env/sim/broadphase_margin.py): the symbol lookup finds the loaded library,
pybullet's connect zeroes the margin and our worlds write the chosen one again (Bullet's 0.05 by
default), the broadphase really fattens its boxes by it, seeded runs repeat bitwise with it, a bad
value is one clear error, a margin that cannot be written is an error where asked for and one
warning otherwise, and the walk's trajectory is margin 0's to the last bit."""
import ctypes

import gymnasium
import numpy as np
import pybullet as p
import pytest

import app.gym_env  # noqa: F401 (registers the ids)
from env.deepmimic_env import DeepMimicEnv
from env.sim import broadphase_margin, wheel_symbols
from env.sim.world import World
from tests.test_gym_env import rollout
from util import warn_once
from util.arg_parser import load_args

WALK_20S = ["--arg_file", "args/train_humanoid3d_walk_args.txt", "--enable_fall_end", "false", "--time_lim_min", "20",
            "--time_lim_max", "20", "--time_end_lim_min", "20", "--time_end_lim_max", "20"]


@pytest.fixture(autouse=True)
def default_margin_afterwards():
    """Every test leaves the process at the default margin (what the rest of the suite expects)."""
    yield
    broadphase_margin.set_margin(broadphase_margin.BULLET_DEFAULT_MARGIN)


def test_symbols_locate_the_loaded_library():
    """The ELF symbol table's PyInit_pybullet, subtracted from its run-time address, gives a
    page-aligned load address, and gContactBreakingThreshold there reads Bullet's 0.02; a name that
    only ends another symbol's name is not found."""
    values = wheel_symbols.elf_symbol_values(p.__file__, ["PyInit_pybullet", "gContactBreakingThreshold",
                                                          "BreakingThreshold"])
    assert set(values) == {"PyInit_pybullet", "gContactBreakingThreshold"}
    base = ctypes.cast(ctypes.CDLL(p.__file__).PyInit_pybullet, ctypes.c_void_p).value - values["PyInit_pybullet"]
    assert base % 4096 == 0
    assert ctypes.c_double.from_address(base + values["gContactBreakingThreshold"]).value == 0.02


def test_connect_zeroes_it_and_worlds_write_it_again():
    world = World(world_scale=4.0)     # the default: Bullet's margin
    assert broadphase_margin.current() == broadphase_margin.BULLET_DEFAULT_MARGIN == 0.05
    client = p.connect(p.DIRECT)       # pybullet's own connect: 0, for every client of the process
    try:
        assert broadphase_margin.current() == 0.0
        other = World()                # keeps the process's choice
        assert broadphase_margin.current() == 0.05
        other.shutdown()
    finally:
        p.disconnect(client)
        world.shutdown()
    World(broadphase_margin=0.0).shutdown()
    assert broadphase_margin.current() == 0.0
    World().shutdown()                 # the process's choice holds
    assert broadphase_margin.current() == 0.0
    World(broadphase_margin=0.02).shutdown()
    assert broadphase_margin.current() == 0.02


def test_seeded_runs_repeat_bitwise_with_the_margin():
    """Six rollouts of 60 decisions from the same seed in one env, each after the episodes of the
    ones before (the broadphase carries its tree and pairs over): bitwise the same observations and
    rewards. Without deterministicOverlappingPairs (world.connect) about half of such repeats were
    2.7e-4 apart, in every process tried."""
    env = gymnasium.make("DeepMimic/Walk-v0")
    try:
        assert broadphase_margin.current() == 0.05
        first = rollout(env, seed=5, steps=60)
        for _ in range(5):
            again = rollout(env, seed=5, steps=60)
            np.testing.assert_array_equal(again[0], first[0])
            np.testing.assert_array_equal(again[1], first[1])
        assert (True, False) in first[2]       # episodes ended and were reset within the rollouts
    finally:
        env.close()


def test_scene_argument_survives_the_reference_world():
    """imitate builds its reference character's world after the simulated one (a second connect):
    --broadphase_margin (here not the default) still holds for the process."""
    env = DeepMimicEnv(load_args(WALK_20S + ["--broadphase_margin", "0.03"]), seed=0)
    assert broadphase_margin.current() == 0.03
    env.shutdown()


@pytest.mark.parametrize("value", ["-0.1", "inf"])
def test_bad_value_is_one_error_naming_the_key(value):
    with pytest.raises(ValueError, match=f"--broadphase_margin {value}"):
        DeepMimicEnv(load_args(WALK_20S + ["--broadphase_margin", value]), seed=0)


def _falling_sphere_found(margin_value):
    """A sphere falls for 30 steps; then a broadphase query (getOverlappingObjects) with a thin box
    0.03-0.035 below the sphere's bounding box: only a tree leaf fattened by the margin reaches it."""
    world = World(broadphase_margin=margin_value)
    cid = world.client
    sphere = p.createMultiBody(1.0, p.createCollisionShape(p.GEOM_SPHERE, radius=0.5, physicsClientId=cid),
                               basePosition=[0, 5, 0], physicsClientId=cid)
    for _ in range(30):
        world.step()
    lo, hi = p.getAABB(sphere, physicsClientId=cid)
    found = p.getOverlappingObjects([lo[0], lo[1] - 0.035, lo[2]], [hi[0], lo[1] - 0.03, hi[2]],
                                    physicsClientId=cid) or []
    world.shutdown()
    return sphere in [body for body, _ in found]


def test_broadphase_boxes_are_fattened_by_the_margin():
    assert _falling_sphere_found(broadphase_margin.BULLET_DEFAULT_MARGIN)
    assert not _falling_sphere_found(0.0)


def test_walk_trajectory_is_margin_zeros():
    """600 decisions of noise actions in the walk scene (fall end off: the character ends up lying
    on the ground, many contacts), from the same reset, with margin 0 and with 0.05: the same
    states to the last bit. The margin only changes which pairs the broadphase reports; the
    narrowphase makes the contacts, and with the pairs sorted (deterministicOverlappingPairs) their
    order no longer depends on the broadphase tree (without it: 1.4e-3 apart). Each run checks the
    margin in force (Bullet's global) at its start and end: the scene passed it on."""
    def states(margin_value):
        env = DeepMimicEnv(load_args(WALK_20S + ["--broadphase_margin", str(margin_value)]), seed=0)
        assert broadphase_margin.current() == margin_value
        env.set_mode(0)
        rng = np.random.default_rng(3)
        offset = np.asarray(env.build_action_offset(0))
        env.reset()
        out = []
        while len(out) < 600:
            if env.need_new_action(0):
                out.append(np.array(env.record_state(0)))
                env.set_action(0, -offset + 0.05 * rng.standard_normal(offset.size))
            env.update(1.0 / 600.0)
        assert broadphase_margin.current() == margin_value
        env.shutdown()
        return np.array(out)

    np.testing.assert_array_equal(states(0.0), states(broadphase_margin.BULLET_DEFAULT_MARGIN))


def test_a_pybullet_without_the_symbols(monkeypatch):
    """The default margin is left at pybullet's 0 there; a margin asked for is one error naming it."""
    monkeypatch.setattr(broadphase_margin, "_found", "a stripped build")
    monkeypatch.setattr(broadphase_margin, "_required", False)
    DeepMimicEnv(load_args(WALK_20S), seed=0).shutdown()
    with pytest.raises(ValueError, match="--broadphase_margin 0.05: .*a stripped build"):
        DeepMimicEnv(load_args(WALK_20S + ["--broadphase_margin", "0.05"]), seed=0)
    monkeypatch.undo()      # before the autouse fixture writes the default margin again


def _set_contact_threshold(value):
    """Bullet's gContactBreakingThreshold (one global for the process) through pybullet's API."""
    client = p.connect(p.DIRECT)
    p.setPhysicsEngineParameter(contactBreakingThreshold=value, physicsClientId=client)
    p.disconnect(client)


def test_a_contact_threshold_set_before_the_first_lookup(monkeypatch, capsys):
    """gContactBreakingThreshold is not Bullet's 0.02 when the symbols are first looked up (another
    build, or a threshold set before the first world): their addresses are not trusted. Worlds not
    asked for a margin work at pybullet's 0, with one warning line naming the reason; a margin asked
    for is an error naming the key and the reason."""
    margin_global = broadphase_margin._bullet_globals()["gDbvtMargin"]
    monkeypatch.setattr(broadphase_margin, "_found", None)
    monkeypatch.setattr(broadphase_margin, "_margin", broadphase_margin.BULLET_DEFAULT_MARGIN)
    monkeypatch.setattr(broadphase_margin, "_required", False)
    monkeypatch.setattr(warn_once, "_warned", set())
    _set_contact_threshold(0.03)
    try:
        for _ in range(2):
            world = World()
            assert margin_global.value == 0.0 and broadphase_margin.current() is None
            world.step()
            world.shutdown()
        err = capsys.readouterr().err.splitlines()
        assert err == ["warning: broadphase margin: pybullet's 0 instead of Bullet's 0.05 (the same trajectories, "
                       "slower): cannot set gDbvtMargin in this pybullet (gContactBreakingThreshold reads 0.03, "
                       "not Bullet's 0.02)"]
        warn_once._warned.clear()       # the error alone, no warning before it
        with pytest.raises(ValueError, match=r"--broadphase_margin 0.05: .*gContactBreakingThreshold reads 0.03"):
            World(broadphase_margin=0.05)
        assert capsys.readouterr().err == ""
    finally:
        _set_contact_threshold(broadphase_margin.CONTACT_BREAKING_THRESHOLD)
    monkeypatch.undo()      # before the autouse fixture writes the default margin again


def test_a_contact_threshold_set_later_keeps_the_margin(capsys):
    """Once the symbols' addresses were checked, a contact threshold set by anyone changes nothing:
    worlds still get Bullet's margin, without a word."""
    World().shutdown()
    _set_contact_threshold(0.03)
    try:
        World().shutdown()
        assert broadphase_margin.current() == broadphase_margin.BULLET_DEFAULT_MARGIN
        World(broadphase_margin=0.02).shutdown()
        assert broadphase_margin.current() == 0.02
    finally:
        _set_contact_threshold(broadphase_margin.CONTACT_BREAKING_THRESHOLD)
    assert capsys.readouterr().err == ""
