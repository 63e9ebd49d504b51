"""Triangle meshes of the character file's shapes, at their real size, centred on the origin.

A mesh is (positions (N,3) float32, normals (N,3) float32, indices (M,) uint32), counter-clockwise
triangles seen from outside. Shapes follow the character file: a sphere of a given diameter, a
capsule of a given diameter whose cylinder part has a given length along y, a box of given full
extents; scene objects may also use a hemisphere. A shape key is a hashable tuple: ('sphere', d),
('hemisphere', d), ('capsule', d, length), ('box', x, y, z).
"""
import numpy as np

SLICES = 24          # around the y axis
STACKS = 8           # per hemisphere


def capsule(diameter, length, slices=SLICES, stacks=STACKS):
    """Two hemispheres of radius diameter/2, their centres at y = +-length/2, joined by a tube.

    The equator ring is duplicated (one copy per hemisphere) so the tube between the two copies
    gets the horizontal normals of a cylinder.
    """
    upper = np.linspace(np.pi / 2, 0.0, stacks + 1)
    lower = np.linspace(0.0, -np.pi / 2, stacks + 1)
    lats = np.concatenate([upper, lower])
    shifts = np.concatenate([np.full(stacks + 1, length / 2), np.full(stacks + 1, -length / 2)])
    return _latitude_grid(diameter / 2, lats, shifts, slices)


def hemisphere(diameter, slices=SLICES, stacks=STACKS):
    """The upper half (y >= 0) of a sphere, open at the equator: two of them, one turned upside
    down, make a two-coloured sphere (the dribble ball, whose spin then shows)."""
    lats = np.linspace(np.pi / 2, 0.0, stacks + 1)
    return _latitude_grid(diameter / 2, lats, np.zeros(stacks + 1), slices)


def _latitude_grid(radius, lats, shifts, slices):
    """Rings of the sphere of `radius` at latitudes `lats` (top to bottom), each moved up by its
    shift along y, joined by quads."""
    lons = np.linspace(0.0, 2 * np.pi, slices + 1)
    lat, lon = np.meshgrid(lats, lons, indexing="ij")
    normals = np.stack([np.cos(lat) * np.sin(lon), np.sin(lat), np.cos(lat) * np.cos(lon)], axis=-1)
    positions = radius * normals
    positions[..., 1] += shifts[:, None]
    rows, cols = lat.shape
    r, c = np.meshgrid(np.arange(rows - 1), np.arange(cols - 1), indexing="ij")
    a = (r * cols + c).ravel()
    b = a + cols
    quads = np.stack([a, b, a + 1, a + 1, b, b + 1], axis=-1)
    return (positions.reshape(-1, 3).astype(np.float32), normals.reshape(-1, 3).astype(np.float32),
            quads.ravel().astype(np.uint32))


def sphere(diameter):
    return capsule(diameter, 0.0)


_BOX_FACES = [  # (normal, the two in-face axes ordered so that u x v = normal)
    ((1, 0, 0), (0, 1, 0), (0, 0, 1)), ((-1, 0, 0), (0, 0, 1), (0, 1, 0)),
    ((0, 1, 0), (0, 0, 1), (1, 0, 0)), ((0, -1, 0), (1, 0, 0), (0, 0, 1)),
    ((0, 0, 1), (1, 0, 0), (0, 1, 0)), ((0, 0, -1), (0, 1, 0), (1, 0, 0)),
]


def box(size_x, size_y, size_z):
    half = np.array([size_x, size_y, size_z]) / 2
    positions, normals, indices = [], [], []
    for normal, u, v in _BOX_FACES:
        n, u, v = (np.array(x, dtype=float) for x in (normal, u, v))
        base = len(positions)
        for su, sv in ((-1, -1), (1, -1), (1, 1), (-1, 1)):
            positions.append((n + su * u + sv * v) * half)
            normals.append(n)
        indices += [base, base + 1, base + 2, base, base + 2, base + 3]
    return (np.array(positions, np.float32), np.array(normals, np.float32),
            np.array(indices, np.uint32))


def shape_key(shape, size):
    """The mesh key of a character-file body: shape name and its Param0-2 (`size`)."""
    if shape in ("sphere", "hemisphere"):
        return (shape, round(float(size[0]), 6))
    if shape == "capsule":
        return ("capsule", round(float(size[0]), 6), round(float(size[1]), 6))
    if shape == "box":
        return ("box",) + tuple(round(float(s), 6) for s in size[:3])
    raise ValueError(f"unknown shape {shape!r} (sphere, hemisphere, capsule, box)")


_BUILDERS = {"sphere": sphere, "hemisphere": hemisphere, "capsule": capsule, "box": box}


def build(key):
    return _BUILDERS[key[0]](*key[1:])
