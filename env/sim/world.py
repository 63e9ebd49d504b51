"""The physics world: one pybullet DIRECT client scaled by DeepMimic's world_scale.

DeepMimic simulates a scaled copy of the character: lengths and gravity x s, masses unchanged,
so torques scale by s^2 and forces by s (time is not scaled). Everything outside env/sim/ works
in character-file units; SimCharacter and the scenes divide physics lengths by `scale`.

One env update of `timestep` seconds is one stepSimulation() call made of `num_sim_substeps`
internal steps of timestep / num_sim_substeps (pybullet's numSubSteps), as DeepMimic's
cWorld::Update steps btMultiBodyDynamicsWorld. A command sent before the call (stable PD or
torques) is held over all its sub-steps and dropped afterwards.

Solver: 10 iterations (Bullet's default, which DeepMimic keeps; pybullet's own default is 50).
Broadphase: Bullet's and DeepMimic's margin 0.05 unless --broadphase_margin asks for another
(pybullet's is 0), with Bullet's deterministicOverlappingPairs on so that runs repeat bitwise
(env/sim/broadphase_margin.py).
"""

import numpy as np
import pybullet as p

from env.sim import broadphase_margin as margin
from util.paths import load_json

GROUND_FRICTION = 0.9
SOLVER_ITERATIONS = 10


def connect():
    """A new pybullet DIRECT client, with the process's broadphase margin written again (every
    connect zeroes it) and overlapping pairs in a deterministic order: how every client of the
    project is made."""
    client = p.connect(p.DIRECT)
    margin.reapply()
    p.setPhysicsEngineParameter(deterministicOverlappingPairs=1, physicsClientId=client)
    return client


class World:
    def __init__(self, world_scale=1.0, gravity=(0.0, -9.8, 0.0), num_sim_substeps=1,
                 timestep=1.0 / 600.0, terrain_file="", broadphase_margin=None):
        """broadphase_margin: the process's margin from now on (set_margin); None keeps the one
        chosen before (a connect zeroes it: it is written again)."""
        if world_scale <= 0:
            raise ValueError(f"--world_scale must be > 0, got {world_scale}")
        if num_sim_substeps < 1:
            raise ValueError(f"--num_sim_substeps must be >= 1, got {num_sim_substeps}")
        self.scale = float(world_scale)
        self.num_sim_substeps = int(num_sim_substeps)
        if broadphase_margin is not None:     # before the connect, which writes it
            margin.set_margin(broadphase_margin)
        self.client = connect()
        self.gravity = np.asarray(gravity, dtype=float)
        p.setGravity(*(self.gravity * self.scale), physicsClientId=self.client)
        p.setPhysicsEngineParameter(numSubSteps=int(num_sim_substeps), numSolverIterations=SOLVER_ITERATIONS,
                                    physicsClientId=self.client)
        self.timestep = None
        self.set_timestep(timestep)
        self.ground_height = 0.0
        self.ground = self._build_ground(terrain_file)

    def set_timestep(self, timestep):
        if timestep != self.timestep:
            p.setTimeStep(timestep, physicsClientId=self.client)
            self.timestep = timestep

    def step(self):
        p.stepSimulation(physicsClientId=self.client)

    def _build_ground(self, terrain_file):
        """A static plane through y = 0 with normal +y (DeepMimic's only terrain type here)."""
        if terrain_file:
            path, terrain = load_json(terrain_file)
            kind = terrain.get("Type") if isinstance(terrain, dict) else None
            if kind != "plane":
                raise ValueError(f"{path}: key 'Type' is {kind!r}, only 'plane' is supported")
        shape = p.createCollisionShape(p.GEOM_PLANE, planeNormal=[0, 1, 0], physicsClientId=self.client)
        ground = p.createMultiBody(0, shape, physicsClientId=self.client)
        p.changeDynamics(ground, -1, lateralFriction=GROUND_FRICTION, physicsClientId=self.client)
        return ground

    def shutdown(self):
        if self.client is not None and p.isConnected(self.client):
            p.disconnect(self.client)
        self.client = None
