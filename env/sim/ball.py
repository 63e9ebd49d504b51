"""The dribble ball: a dynamic sphere in the world (DeepMimic's cSimSphere as cSceneDribbleAMP builds it).

Mass 0.43 (not scaled: masses are unchanged by world_scale), lateral friction 0.4, linear and
angular damping 0.4 (Bullet's btRigidBody::setDamping: velocities shrink by (1 - 0.4)^dt each
sub-step), other Bullet defaults; the radius is scaled by world_scale like every length. Built as a
rigid body (maximal coordinates) as in DeepMimic, it never sleeps. It collides with the ground and
the character; the fall check reads only character-ground contacts, so touching it is never a fall.
Positions and velocities are in character units (world_scale divided out), rotations (w, x, y, z).
"""
import numpy as np
import pybullet as p

from util import math_util

MASS = 0.43
FRICTION = 0.4
LINEAR_DAMPING = 0.4
ANGULAR_DAMPING = 0.4


class Ball:
    def __init__(self, world, radius):
        if radius <= 0:
            raise ValueError(f"--ball_radius must be > 0, got {radius}")
        self.world = world
        self.client = world.client
        self.radius = float(radius)
        s = world.scale
        shape = p.createCollisionShape(p.GEOM_SPHERE, radius=self.radius * s, physicsClientId=self.client)
        self.body = p.createMultiBody(MASS, shape, basePosition=[s, s, s], useMaximalCoordinates=True,
                                      physicsClientId=self.client)
        p.changeDynamics(self.body, -1, lateralFriction=FRICTION, linearDamping=LINEAR_DAMPING,
                         angularDamping=ANGULAR_DAMPING, activationState=p.ACTIVATION_STATE_DISABLE_SLEEPING,
                         physicsClientId=self.client)

    def place(self, pos, rot):
        """Teleport to `pos` with rotation `rot`, at rest."""
        s = self.world.scale
        p.resetBasePositionAndOrientation(self.body, list(np.asarray(pos, dtype=float) * s),
                                          list(math_util.quat_to_pybullet(rot)), physicsClientId=self.client)
        p.resetBaseVelocity(self.body, [0.0, 0.0, 0.0], [0.0, 0.0, 0.0], physicsClientId=self.client)

    def get_pos(self):
        pos, _ = p.getBasePositionAndOrientation(self.body, physicsClientId=self.client)
        return np.asarray(pos) / self.world.scale

    def get_rot(self):
        _, rot = p.getBasePositionAndOrientation(self.body, physicsClientId=self.client)
        return math_util.quat_from_pybullet(rot)

    def get_vel(self):
        """(linear velocity, angular velocity); the angular one is not scaled."""
        vel, ang_vel = p.getBaseVelocity(self.body, physicsClientId=self.client)
        return np.asarray(vel) / self.world.scale, np.asarray(ang_vel)
