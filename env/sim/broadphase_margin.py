"""Bullet's broadphase margin (--broadphase_margin): pybullet's 0, or DeepMimic's core's 0.05.

Bullet's broadphase (btDbvtBroadphase) keeps every collision object in a tree of bounding boxes
fattened by the global gDbvtMargin (Bullet's default: 0.05 length units, which DeepMimic's C++ core
keeps): an object that moves less than that between two sub-steps keeps its leaf. pybullet sets
gDbvtMargin to 0 whenever a client connects, so every moving link leaves its box at every sub-step
and is removed, re-inserted and collided against both trees again: on the walk, one re-insertion
per bounding-box update (17 per 1/1200 s sub-step) and 4x the core's time in bounding-box updates.

The default stays pybullet's 0, for one reason: with a margin, the broadphase carries boxes and
pairs over from earlier steps and episodes, and Bullet's tree orders its nodes by their memory
addresses (btDbvt's incremental optimisation, `sort`), so after a world's first episode the
contact order, and with it the trajectory, can differ from run to run with the same seed (seen:
2.7e-4 in the state within 40 decisions, in one of four runs). A world's first episode repeats
bitwise either way, and with margin 0 every episode does. The contacts themselves come from the
narrowphase either way: over 600 decisions of the walk the two margins differ by at most ~1e-3 in
the state (tests/test_broadphase_margin.py).

pybullet has no API for it. The global sits in the wheel's writable data; its address is found in
the library's ELF symbol table (env/sim/wheel_symbols.py) and checked (gContactBreakingThreshold
beside it must read Bullet's 0.02). The global is shared by every client of the process and each connect zeroes it: set_margin()
chooses the process's margin, reapply() (called by world.connect, which makes every client) writes it
again.
"""
import ctypes

import numpy as np

from env.sim.wheel_symbols import wheel_addresses

BULLET_DEFAULT_MARGIN = 0.05      # btDbvtBroadphase.cpp's gDbvtMargin
CONTACT_BREAKING_THRESHOLD = 0.02

_found = None          # {symbol: ctypes.c_double at its address}, or the reason they were not found


def _find_globals():
    """{'gDbvtMargin': c_double, 'gContactBreakingThreshold': c_double} at their run-time addresses
    in the loaded pybullet module, or a string saying why not."""
    found = wheel_addresses(("gDbvtMargin", "gContactBreakingThreshold"))
    if isinstance(found, str):
        return found
    return {name: ctypes.c_double.from_address(address) for name, address in found.items()}


def _bullet_globals():
    global _found
    if _found is None:
        _found = _find_globals()
    return _found


_margin = 0.0          # the margin this process asked for (pybullet's 0 until set_margin)


def set_margin(value):
    """The broadphase margin (length units of the physics world) for every pybullet client of this
    process from now on; ValueError where it cannot be set (a negative or non-finite value, or a
    pybullet build without the symbols)."""
    global _margin
    value = float(value)
    if not (np.isfinite(value) and value >= 0.0):
        raise ValueError(f"--broadphase_margin {value}: must be a finite number >= 0")
    if value != 0.0 or _margin != 0.0:
        _write(value)
    _margin = value


def reapply():
    """After a connect (which zeroes it): the process's margin again."""
    if _margin != 0.0:
        _write(_margin)


def _write(value):
    found = _bullet_globals()
    if isinstance(found, dict) and found["gContactBreakingThreshold"].value != CONTACT_BREAKING_THRESHOLD:
        found = (f"gContactBreakingThreshold reads {found['gContactBreakingThreshold'].value}, not Bullet's "
                 f"{CONTACT_BREAKING_THRESHOLD}")
    if not isinstance(found, dict):
        raise ValueError(f"--broadphase_margin {value}: cannot set Bullet's gDbvtMargin in this pybullet "
                         f"({found})")
    found["gDbvtMargin"].value = value


def current():
    """gDbvtMargin now, or None where it cannot be read."""
    found = _bullet_globals()
    return found["gDbvtMargin"].value if isinstance(found, dict) else None
