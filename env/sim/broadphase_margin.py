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
the library's ELF symbol table (the pinned wheel ships one) relative to PyInit_pybullet, whose
run-time address ctypes gives, and checked (gContactBreakingThreshold beside it must read Bullet's
0.02). The global is shared by every client of the process and each connect zeroes it: set_margin()
chooses the process's margin, reapply() (called by world.connect, which makes every client) writes it
again.
"""
import ctypes
import struct

import numpy as np
import pybullet

BULLET_DEFAULT_MARGIN = 0.05      # btDbvtBroadphase.cpp's gDbvtMargin
CONTACT_BREAKING_THRESHOLD = 0.02
SHT_SYMTAB = 2
SYMBOL = np.dtype([("name", "<u4"), ("info", "u1"), ("other", "u1"), ("shndx", "<u2"), ("value", "<u8"),
                   ("size", "<u8")])

_found = None          # {symbol: ctypes.c_double at its address}, or the reason they were not found


def elf_symbol_values(path, names):
    """{name: st_value} of the named symbols in an ELF64 little-endian file's .symtab (names it does
    not hold are left out); {} when the file has no .symtab (a stripped library)."""
    with open(path, "rb") as f:
        ident = f.read(64)
        if ident[:4] != b"\x7fELF" or ident[4] != 2 or ident[5] != 1:
            raise ValueError(f"{path}: not a 64-bit little-endian ELF file")
        shoff, = struct.unpack_from("<Q", ident, 0x28)
        shentsize, shnum = struct.unpack_from("<HH", ident, 0x3A)
        f.seek(shoff)
        headers = f.read(shentsize * shnum)
        sections = [struct.unpack_from("<IIQQQQIIQQ", headers, i * shentsize) for i in range(shnum)]
        symtab = next((s for s in sections if s[1] == SHT_SYMTAB), None)
        if symtab is None:
            return {}
        strtab = sections[symtab[6]]
        f.seek(symtab[4])
        symbols = np.frombuffer(f.read(symtab[5]), dtype=SYMBOL)
        f.seek(strtab[4])
        strings = f.read(strtab[5])
    values = {}
    for name in names:
        # every place the name ends a string (linkers share a string's tail between names)
        key, starts, at = name.encode() + b"\0", [], strings.find(name.encode() + b"\0")
        while at >= 0:
            starts.append(at)
            at = strings.find(key, at + 1)
        match = np.flatnonzero(np.isin(symbols["name"], starts))
        if match.size:
            values[name] = int(symbols["value"][match[0]])
    return values


def _find_globals():
    """{'gDbvtMargin': c_double, 'gContactBreakingThreshold': c_double} at their run-time addresses
    in the loaded pybullet module, or a string saying why not."""
    names = ("PyInit_pybullet", "gDbvtMargin", "gContactBreakingThreshold")
    try:
        values = elf_symbol_values(pybullet.__file__, names)
    except (OSError, ValueError) as err:
        return f"cannot read {pybullet.__file__}: {err}"
    missing = [n for n in names if n not in values]
    if missing:
        return f"{pybullet.__file__} has no symbol {', '.join(missing)}"
    init = ctypes.cast(ctypes.CDLL(pybullet.__file__).PyInit_pybullet, ctypes.c_void_p).value
    base = init - values["PyInit_pybullet"]
    return {name: ctypes.c_double.from_address(base + values[name]) for name in names[1:]}


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
