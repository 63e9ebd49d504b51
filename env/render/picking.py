"""Which drawn body a mouse ray hits: exact ray tests against spheres, capsules and boxes."""
import numpy as np


def _ray_sphere(origin, direction, center, radius):
    """Smallest t >= 0 with |origin + t direction - center| = radius (unit direction), or None."""
    oc = origin - center
    b = oc @ direction
    disc = b * b - (oc @ oc - radius * radius)
    if disc < 0:
        return None
    sqrt_disc = np.sqrt(disc)
    for t in (-b - sqrt_disc, -b + sqrt_disc):
        if t >= 0:
            return t
    return None


def _ray_capsule(origin, direction, radius, half_len):
    """Capsule along y centred at the origin: the tube between y = +-half_len, then the end caps."""
    hits = []
    a = direction[0] ** 2 + direction[2] ** 2
    if a > 1e-12:
        b = origin[0] * direction[0] + origin[2] * direction[2]
        c = origin[0] ** 2 + origin[2] ** 2 - radius * radius
        disc = b * b - a * c
        if disc >= 0:
            for t in ((-b - np.sqrt(disc)) / a, (-b + np.sqrt(disc)) / a):
                if t >= 0 and abs(origin[1] + t * direction[1]) <= half_len:
                    hits.append(t)
                    break
    for end in (half_len, -half_len):
        t = _ray_sphere(origin, direction, np.array([0.0, end, 0.0]), radius)
        if t is not None:
            hits.append(t)
    return min(hits) if hits else None


def _ray_box(origin, direction, half):
    t_near, t_far = -np.inf, np.inf
    for axis in range(3):
        if abs(direction[axis]) < 1e-12:
            if abs(origin[axis]) > half[axis]:
                return None
            continue
        t0 = (-half[axis] - origin[axis]) / direction[axis]
        t1 = (half[axis] - origin[axis]) / direction[axis]
        t_near, t_far = max(t_near, min(t0, t1)), min(t_far, max(t0, t1))
    if t_near > t_far or t_far < 0:
        return None
    return max(t_near, 0.0)


def ray_hit(origin, direction, key, model):
    """Distance along the (unit) ray to the shape `key` placed by rigid `model`, or None."""
    rot, pos = model[:3, :3], model[:3, 3]
    local_origin = rot.T @ (origin - pos)
    local_dir = rot.T @ direction
    shape = key[0]
    if shape == "sphere":
        return _ray_sphere(local_origin, local_dir, np.zeros(3), key[1] / 2)
    if shape == "capsule":
        return _ray_capsule(local_origin, local_dir, key[1] / 2, key[2] / 2)
    return _ray_box(local_origin, local_dir, np.array(key[1:4]) / 2)


def pick(solids, origin, direction):
    """(solid, world hit point) of the nearest solid with a body id hit by the ray, or None."""
    best = None
    for solid in solids:
        if solid.body_id < 0:
            continue
        t = ray_hit(origin, direction, solid.key, solid.model)
        if t is not None and (best is None or t < best[0]):
            best = (t, solid)
    if best is None:
        return None
    t, solid = best
    return solid, origin + t * direction
