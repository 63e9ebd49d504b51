"""What one frame draws, in plain numpy: shapes with rigid transforms and colours, and lines.

The scene (env/scenes/scene.py) reports characters as (CharacterDesc, body_pos (n,3), body_rot
(n,4) [w,x,y,z], kind 'sim' | 'kin') in character units (metres, world_scale divided out) and
projectiles as (size (3,), pos (3,), rot (4,)) boxes. A 'kin' character is the reference when the
scene also has a 'sim' one: it is drawn translucent, casts no shadow and can be hidden (key k).
"""
from dataclasses import dataclass, field

import numpy as np

from env.render.meshes import shape_key
from util.math_util import quat_to_matrix

REF_ALPHA = 0.35
PROJECTILE_COLOR = np.array([0.85, 0.45, 0.2, 1.0])


@dataclass
class Solid:
    key: tuple            # mesh key, see meshes.shape_key
    model: np.ndarray     # (4, 4) rigid transform
    color: np.ndarray     # (4,) RGBA
    body_id: int = -1     # body index within its character (for picking), -1 for other objects


@dataclass
class Frame:
    solids: list = field(default_factory=list)        # opaque, cast shadows
    translucent: list = field(default_factory=list)   # drawn last, no shadows
    lines: list = field(default_factory=list)         # (points (n,3), RGBA)


def rigid_matrix(pos, rot):
    model = np.eye(4)
    model[:3, :3] = quat_to_matrix(rot)
    model[:3, 3] = pos
    return model


def character_solids(char_desc, body_pos, body_rot, alpha=None):
    """One Solid per body, in the character file's colours (alpha replaced when given)."""
    solids = []
    for body, pos, rot in zip(char_desc.bodies, body_pos, body_rot):
        color = np.array(body.color, dtype=float)
        if alpha is not None:
            color[3] = alpha
        solids.append(Solid(shape_key(body.shape, body.size), rigid_matrix(pos, rot), color, body.id))
    return solids


def build_frame(characters, projectiles=(), draw_ref=True, traces=(), task_objects=((), ())):
    """Frame from the scene's characters and projectiles, plus trace polylines (points, color) and
    the scene's task objects: (solids as (shape, size, pos, rot, color), lines as (points, color))."""
    object_solids, object_lines = task_objects
    frame = Frame(lines=list(traces) + list(object_lines))
    has_sim = any(kind == "sim" for *_, kind in characters)
    for char_desc, body_pos, body_rot, kind in characters:
        if kind == "kin" and has_sim:
            if draw_ref:
                frame.translucent += character_solids(char_desc, body_pos, body_rot, REF_ALPHA)
        else:
            frame.solids += character_solids(char_desc, body_pos, body_rot)
    for size, pos, rot in projectiles:
        frame.solids.append(Solid(shape_key("box", size), rigid_matrix(pos, rot), PROJECTILE_COLOR))
    for shape, size, pos, rot, color in object_solids:
        frame.solids.append(Solid(shape_key(shape, size), rigid_matrix(pos, rot), np.asarray(color, dtype=float)))
    return frame
