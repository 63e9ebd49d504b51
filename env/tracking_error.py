"""Imitation metrics: how far the simulated character is from the reference (MimicKit's
compute_tracking_error), per decision, averaged over an episode.

For one instant, with p the joint world positions (the link frame origins; index 0 the root),
R the body world rotations, v the root's linear and w its angular velocity, qd the joint
velocities (the 28 non-root dofs), unprimed simulated and primed reference, all in metres,
radians and seconds (the character file's units):
  root_pos_err     |p_0 - p'_0|
  root_rot_err     angle(R_0, R'_0)
  body_pos_err     mean over bodies of |(p_b - p_0) - (p'_b - p'_0)|   (each relative to its own root)
  body_rot_err     mean over bodies of angle(R_b, R'_b)
  joint_vel_err    mean over dofs of |qd - qd'|
  root_vel_err     mean over x, y, z of |v - v'|
  root_ang_vel_err mean over x, y, z of |w - w'|
An episode is a success when it ends without a fall and its mean body_pos_err is at most a
threshold (SUCCESS_BODY_POS_ERR unless given).
"""
import numpy as np

from env.scenes.imitate_reward import quat_angles

TRACKING_ERRORS = ("root_pos_err", "root_rot_err", "body_pos_err", "body_rot_err", "joint_vel_err",
                   "root_vel_err", "root_ang_vel_err")
SUCCESS_BODY_POS_ERR = 0.08     # m: the walk criterion's bound (docs/README_time_to_skill.md)


def body_pos_distances(sim_pos, ref_pos):
    """Per body, |(p_b - p_0) - (p'_b - p'_0)|: how far each body is from where the reference has
    it, each relative to its own character's root (row 0)."""
    return np.linalg.norm((sim_pos - sim_pos[0]) - (ref_pos - ref_pos[0]), axis=1)


def tracking_errors(sim_bodies, sim_vel, ref_bodies, ref_vel):
    """{name: error} of TRACKING_ERRORS for two characters' BodyStates (joint_pos, rot, vel,
    ang_vel of body 0 = root) and their dof velocity vectors (root linear 3, root angular 3, joints)."""
    p, q = sim_bodies.joint_pos, ref_bodies.joint_pos
    return {
        "root_pos_err": float(np.linalg.norm(p[0] - q[0])),
        "root_rot_err": float(quat_angles(sim_bodies.rot[:1], ref_bodies.rot[:1])[0]),
        "body_pos_err": float(np.mean(body_pos_distances(p, q))),
        "body_rot_err": float(np.mean(quat_angles(sim_bodies.rot, ref_bodies.rot))),
        "joint_vel_err": float(np.mean(np.abs(np.asarray(sim_vel)[6:] - np.asarray(ref_vel)[6:]))),
        "root_vel_err": float(np.mean(np.abs(sim_bodies.vel[0] - ref_bodies.vel[0]))),
        "root_ang_vel_err": float(np.mean(np.abs(sim_bodies.ang_vel[0] - ref_bodies.ang_vel[0]))),
    }


class EpisodeTracking:
    """Sums of the per-decision errors of one episode."""

    def __init__(self):
        self.sums = dict.fromkeys(TRACKING_ERRORS, 0.0)
        self.count = 0

    def add(self, errors):
        for name in TRACKING_ERRORS:
            self.sums[name] += errors[name]
        self.count += 1

    def means(self):
        return {name: total / max(self.count, 1) for name, total in self.sums.items()}


def is_success(fell, body_pos_err, threshold=SUCCESS_BODY_POS_ERR):
    return (not fell) and body_pos_err <= threshold
