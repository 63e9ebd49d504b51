"""Bullet's broadphase margin (--broadphase_margin): DeepMimic's core's 0.05, or pybullet's 0.

Bullet's broadphase (btDbvtBroadphase) keeps every collision object in a tree of bounding boxes
fattened by the global gDbvtMargin (Bullet's default: 0.05 length units, which DeepMimic's C++ core
keeps): an object that moves less than that between two sub-steps keeps its leaf. pybullet sets
gDbvtMargin to 0 whenever a client connects, so every moving link leaves its box at every sub-step
and is removed, re-inserted and collided against both trees again: on the walk, one re-insertion
per bounding-box update (17 per 1/1200 s sub-step) and 4x the core's time in bounding-box updates.
The default is the core's 0.05, written again after every connect (world.connect).

Repeatability: with a margin the broadphase carries boxes and pairs over from earlier steps and
episodes, and Bullet's tree orders its nodes by their memory addresses (btDbvt's incremental
optimisation, `sort`), so the order in which pairs reach the narrowphase, and with it the contact
order in the solver, would depend on where malloc put the nodes: the same seed gave trajectories
2.7e-4 apart within 60 decisions, within one process and between processes. world.connect therefore
turns on Bullet's deterministicOverlappingPairs (off in Bullet and pybullet by default), which sorts
the pairs by their proxies' ids before the narrowphase and the contact manifolds by island: runs
repeat bitwise. The contacts themselves come from the narrowphase, so with the pairs sorted the
margin changes the speed only: over 600 decisions of the walk, margin 0 and 0.05 give the same
states to the last bit (tests/test_broadphase_margin.py; without the sorting, 1.4e-3 apart).

pybullet has no API for it. The global sits in the wheel's writable data; its address is found in
the library's ELF symbol table (env/sim/wheel_symbols.py) and checked once, at the first lookup:
gContactBreakingThreshold beside it must read Bullet's 0.02 (another build, or a contact threshold
set through setPhysicsEngineParameter before the first world, fails the check; one set later does
not matter, the addresses having been checked). The global is shared by every client of the
process and each connect zeroes it: set_margin() chooses the process's margin, reapply() (called by
world.connect, which makes every client) writes it again. Where it cannot be written, a margin
asked for (set_margin) is an error naming --broadphase_margin; the default leaves pybullet's 0
(the same trajectories, slower) with one warning line naming the reason.
"""
import ctypes

import numpy as np

from env.sim.wheel_symbols import wheel_addresses
from util.warn_once import warn_once

BULLET_DEFAULT_MARGIN = 0.05      # btDbvtBroadphase.cpp's gDbvtMargin
CONTACT_BREAKING_THRESHOLD = 0.02

_found = None          # {symbol: ctypes.c_double at its address}, or the reason they were not found


def _find_globals():
    """{'gDbvtMargin': c_double, 'gContactBreakingThreshold': c_double} at their run-time addresses
    in the loaded pybullet module, or a string saying why not."""
    found = wheel_addresses(("gDbvtMargin", "gContactBreakingThreshold"))
    if isinstance(found, str):
        return found
    values = {name: ctypes.c_double.from_address(address) for name, address in found.items()}
    threshold = values["gContactBreakingThreshold"].value
    if threshold != CONTACT_BREAKING_THRESHOLD:
        return f"gContactBreakingThreshold reads {threshold}, not Bullet's {CONTACT_BREAKING_THRESHOLD}"
    return values


def _bullet_globals():
    global _found
    if _found is None:
        _found = _find_globals()
    return _found


_margin = BULLET_DEFAULT_MARGIN   # the margin of this process's clients
_required = False                 # set_margin was called: a margin that cannot be written is an error


def set_margin(value):
    """The broadphase margin (length units of the physics world) for every pybullet client of this
    process from now on; ValueError where it cannot be set (a negative or non-finite value, or a
    pybullet whose gDbvtMargin cannot be written)."""
    global _margin, _required
    value = float(value)
    if not (np.isfinite(value) and value >= 0.0):
        raise ValueError(f"--broadphase_margin {value}: must be a finite number >= 0")
    _write(value)
    _margin, _required = value, True


def reapply():
    """After a connect (which zeroes it): the process's margin again. Where gDbvtMargin cannot be
    written, Bullet's default (nobody asked for it) is left at pybullet's 0 with one warning line."""
    if _margin == 0.0:
        return
    found = _bullet_globals()
    if _required or isinstance(found, dict):
        _write(_margin)
    else:
        warn_once("broadphase margin", f"pybullet's 0 instead of Bullet's {BULLET_DEFAULT_MARGIN} (the same "
                                       f"trajectories, slower): cannot set gDbvtMargin in this pybullet ({found})")


def _write(value):
    """gDbvtMargin = value; ValueError where it cannot be written (0 needs no writing there: each
    connect zeroes it)."""
    found = _bullet_globals()
    if isinstance(found, dict):
        found["gDbvtMargin"].value = value
    elif value != 0.0:
        raise ValueError(f"--broadphase_margin {value}: cannot set Bullet's gDbvtMargin in this pybullet "
                         f"({found})")


def current():
    """gDbvtMargin now, or None where it cannot be read."""
    found = _bullet_globals()
    return found["gDbvtMargin"].value if isinstance(found, dict) else None
