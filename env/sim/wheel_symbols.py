"""Run-time addresses of symbols inside the loaded pybullet wheel, found in its ELF symbol table.

pybullet exposes neither Bullet's globals (env/sim/broadphase_margin.py) nor its table of
connected clients (env/sim/bullet_c_api.py) to Python. The pinned wheel ships its .symtab: a
symbol's address at run time is its st_value plus the library's load base, which follows from
PyInit_pybullet (exported, so ctypes gives its run-time address).
"""
import ctypes
import struct

import numpy as np

SHT_SYMTAB = 2
SYMBOL = np.dtype([("name", "<u4"), ("info", "u1"), ("other", "u1"), ("shndx", "<u2"), ("value", "<u8"),
                   ("size", "<u8")])


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


def wheel_addresses(names):
    """{name: run-time address} of the named symbols in the loaded pybullet module, or a string
    saying why they cannot be had (unreadable or stripped library, a symbol missing)."""
    import pybullet  # here, not at import: the bench scripts read this package's constants before loading pybullet
    lookup = ("PyInit_pybullet", *names)
    try:
        values = elf_symbol_values(pybullet.__file__, lookup)
    except (OSError, ValueError) as err:
        return f"cannot read {pybullet.__file__}: {err}"
    missing = [n for n in lookup if n not in values]
    if missing:
        return f"{pybullet.__file__} has no symbol {', '.join(missing)}"
    init = ctypes.cast(ctypes.CDLL(pybullet.__file__).PyInit_pybullet, ctypes.c_void_p).value
    base = init - values["PyInit_pybullet"]
    return {name: base + values[name] for name in names}
