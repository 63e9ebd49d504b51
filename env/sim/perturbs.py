"""External disturbances: DeepMimic's random pushes and thrown boxes (character units throughout).

Random pushes (enable_rand_perturbs): every uniform(perturb_time_min, perturb_time_max) seconds a
force of uniform(min_perturb, max_perturb) N in a uniformly random direction pushes the centre of a
random body (one of perturb_part_ids, else any) for uniform(min_pertrub_duration [sic, DeepMimic's
key], max_perturb_duration) seconds. Forces are scaled by world_scale at the physics boundary.

Projectiles (the viewer's x / z keys, cSceneSimChar::SpawnProjectile): a box of density 100
(side 0.1-0.3, or 1.25-1.75 for the big one) thrown from 1-2 m beside the character at its bounding
box at 10-20 m/s (big: 11-12, aimed 0.5 higher) plus the character's horizontal COM velocity;
friction 0.7; removed after 2 s. Boxes hitting the character never count as a fall.
"""
import math
from dataclasses import dataclass

import numpy as np
import pybullet as p

from util import math_util


@dataclass(frozen=True)
class PerturbParams:
    enable: bool = False
    time_min: float = math.inf
    time_max: float = math.inf
    min_force: float = 50.0
    max_force: float = 100.0
    min_duration: float = 0.1
    max_duration: float = 0.5
    part_ids: tuple = ()

    @classmethod
    def from_args(cls, args):
        d = cls()
        return cls(enable=args.parse_bool("enable_rand_perturbs", d.enable),
                   time_min=args.parse_float("perturb_time_min", d.time_min, at_least=0.0),
                   time_max=args.parse_float("perturb_time_max", d.time_max, at_least=0.0),
                   min_force=args.parse_float("min_perturb", d.min_force, at_least=0.0, finite=True),
                   max_force=args.parse_float("max_perturb", d.max_force, at_least=0.0, finite=True),
                   min_duration=args.parse_float("min_pertrub_duration", d.min_duration, at_least=0.0, finite=True),
                   max_duration=args.parse_float("max_perturb_duration", d.max_duration, at_least=0.0,
                                                 finite=True),
                   part_ids=tuple(args.parse_ints("perturb_part_ids", ())))


def _uniform(rng, low, high):
    return low if low == high else rng.uniform(low, high)


class RandPerturber:
    def __init__(self, params, rng):
        self.params = params
        self.rng = rng
        self.timer = 0.0
        self.next_time = math.inf
        self.active = []  # [body id, force (3,), remaining seconds]

    def reset(self):
        self.reset_timer()
        self.active.clear()

    def update(self, timestep, sim_char):
        """Call before the physics step: starts due pushes and applies the active ones."""
        prm = self.params
        if prm.enable:
            self.timer += timestep
            if self.timer >= self.next_time:
                part_ids = prm.part_ids or range(sim_char.num_bodies)
                direction = self.rng.uniform(-1.0, 1.0, 3)
                force = _uniform(self.rng, prm.min_force, prm.max_force) * direction / np.linalg.norm(direction)
                self.active.append([int(self.rng.choice(part_ids)), force,
                                    _uniform(self.rng, prm.min_duration, prm.max_duration)])
                self.reset_timer()
        for push in self.active:
            body_id, force, _ = push
            sim_char.apply_force(body_id, force, sim_char.get_body_centre(body_id))
            push[2] -= timestep
        self.active = [push for push in self.active if push[2] > 0.0]

    def reset_timer(self):
        self.timer = 0.0
        self.next_time = _uniform(self.rng, self.params.time_min, self.params.time_max)


class Projectiles:
    DENSITY = 100.0
    FRICTION = 0.7
    LIFE_TIME = 2.0

    def __init__(self, world):
        self.world = world
        self.client = world.client
        self.boxes = []  # [pybullet id, size (3,), end time]

    def throw(self, sim_char, big, rng, now):
        if big:
            min_size, max_size, min_speed, max_speed, y_offset = 1.25, 1.75, 11.0, 12.0, 0.5
        else:
            min_size, max_size, min_speed, max_speed, y_offset = 0.1, 0.3, 10.0, 20.0, 0.0
        s = self.world.scale
        aabb_min, aabb_max = sim_char.calc_aabb()
        centre = 0.5 * (aabb_min + aabb_max)
        size = np.full(3, rng.uniform(min_size, max_size))
        theta, dist = rng.uniform(0.0, np.pi), rng.uniform(1.0, 2.0)
        buffer = np.hypot(aabb_max[0] - aabb_min[0], aabb_max[2] - aabb_min[2])
        pos = np.array([(0.5 * buffer + dist * np.cos(theta)) * rng.choice([-1, 1]) + centre[0],
                        rng.uniform(aabb_min[1], aabb_max[1]) + 0.5 * size[1] + y_offset,
                        (0.5 * buffer + dist * np.sin(theta)) * rng.choice([-1, 1]) + centre[2]])
        target = np.array([rng.uniform(aabb_min[0], aabb_max[0]), rng.uniform(aabb_min[1], aabb_max[1]), centre[2]])
        vel = (target - pos) / np.linalg.norm(target - pos) * rng.uniform(min_speed, max_speed)
        com_vel = sim_char.calc_com_vel(sim_char.get_body_states())
        vel[[0, 2]] += com_vel[[0, 2]]
        shape = p.createCollisionShape(p.GEOM_BOX, halfExtents=list(0.5 * size * s), physicsClientId=self.client)
        box = p.createMultiBody(self.DENSITY * np.prod(size), shape, basePosition=list(pos * s),
                                physicsClientId=self.client)
        p.changeDynamics(box, -1, lateralFriction=self.FRICTION, linearDamping=0.0, angularDamping=0.0,
                         physicsClientId=self.client)
        p.resetBaseVelocity(box, list(vel * s), [0, 0, 0], physicsClientId=self.client)
        self.boxes.append([box, size, now + self.LIFE_TIME])

    def update(self, now):
        for box in [b for b in self.boxes if b[2] <= now]:
            p.removeBody(box[0], physicsClientId=self.client)
            self.boxes.remove(box)

    def clear(self):
        for box, _, _ in self.boxes:
            p.removeBody(box, physicsClientId=self.client)
        self.boxes.clear()

    def draw(self):
        result = []
        for box, size, _ in self.boxes:
            pos, rot = p.getBasePositionAndOrientation(box, physicsClientId=self.client)
            result.append((size.copy(), np.asarray(pos) / self.world.scale, math_util.quat_from_pybullet(rot)))
        return result
