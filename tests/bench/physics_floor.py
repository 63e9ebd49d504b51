"""Physics floor: what pybullet alone costs per 1/30 s policy decision for the humanoid.

The scene: the wheel's humanoid/humanoid.urdf (DeepMimic's humanoid3d at 4x) loaded at
globalScaling 1, i.e. world_scale 4, y up, gravity (0, -9.8 * 4, 0), a static plane y = 0,
friction 0.9 on the ground and every link, no damping, self-collision on except with the parent
(pybullet's URDF_USE_SELF_COLLISION), 10 solver iterations, default joint motors off: the
physics settings of env/sim (world.py, sim_character.py), so that the floor is the same physics.
The character is reset to the first frame of the walk clip (read from the clip JSON: per frame
duration, root position (3, DeepMimic metres, times world_scale here), root quaternion w, x, y,
z, then the 12 non-fixed joints' local rotations in the order chest, neck, right hip, knee,
ankle, shoulder, elbow, left ...), raised so that its lowest point is 1 mm above the ground, zero
velocity. The PD targets are that same pose.

Gains (deepmimic.md section 7) and torque limits are multiplied by world_scale^2 = 16: DeepMimic
computes its stable-PD torques in unscaled units with an unscaled model and multiplies them by
world_scale^2 when it hands them to Bullet (cSimBodyJoint::ApplyTau). With masses unchanged and
lengths x s, the pybullet mass matrix and bias forces of the scaled character are s^2 times the
unscaled ones, so kp, kd and limits x s^2 give exactly DeepMimic's accelerations.

Per decision only the PD command and stepSimulation run, in three schemes:
  A  built-in stable PD re-sent before every 1/1200 s step (setTimeStep 1/1200): 40 per decision
  B  DeepMimic's timing: setTimeStep 1/600 with numSubSteps 2, PD solved once per 1/600 s and
     held over two 1/1200 s sub-steps: 20 command+step per decision
  C  the older port's rate: 1/240 s, one sub-step: 8 per decision
The character is reset every 30 decisions (1 s: standing on one foot in the held walk pose it
stays up ~1.3 s, root height ~0.8 m after 1 s in all three schemes) and only the decision loops
are timed. Numbers are decisions per second of wall time on one core.

Run alone: .venv/bin/python -m tests.bench.physics_floor [--seconds S] [--json FILE]
"""
import argparse
import json
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pybullet
import pybullet_data

from env.sim.world import connect
from util.atomic_write import write_json

WORLD_SCALE = 4.0
GRAVITY = -9.8
GROUND_FRICTION = 0.9
SOLVER_ITERATIONS = 10  # Bullet's btMultiBody default, as DeepMimic built it (pybullet's own default: 50)
WALK_CLIP = Path(pybullet_data.getDataPath()) / "data/motions/humanoid3d_walk.txt"

# (urdf joint index, dofs in the clip (4 = quaternion, 1 = angle), kp, kd, torque limit) in clip
# order; values of deepmimic.md section 7, unscaled.
JOINTS = [
    (1, 4, 1000, 100, 200),   # chest
    (2, 4, 100, 10, 50),      # neck
    (3, 4, 500, 50, 200),     # right hip
    (4, 1, 500, 50, 150),     # right knee
    (5, 4, 400, 40, 90),      # right ankle
    (6, 4, 400, 40, 100),     # right shoulder
    (7, 1, 300, 30, 60),      # right elbow
    (9, 4, 500, 50, 200),     # left hip
    (10, 1, 500, 50, 150),    # left knee
    (11, 4, 400, 40, 90),     # left ankle
    (12, 4, 400, 40, 100),    # left shoulder
    (13, 1, 300, 30, 60),     # left elbow
]


@dataclass(frozen=True)
class Scheme:
    name: str
    label: str
    time_step: float
    sub_steps: int
    calls_per_decision: int


SCHEMES = [
    Scheme("A", "stable PD before every 1/1200 s step", 1 / 1200, 1, 40),
    Scheme("B", "DeepMimic: PD per 1/600 s, 2 sub-steps", 1 / 600, 2, 20),
    Scheme("C", "older port's rate: 1/240 s", 1 / 240, 1, 8),
]


def read_first_frame(path=WALK_CLIP):
    """Root position (3, DeepMimic units), root quaternion (w, x, y, z), joint values (clip order)."""
    frame = np.asarray(json.loads(Path(path).read_text())["Frames"][0], dtype=float)
    if frame.size != 44:
        raise ValueError(f"{path}: a humanoid3d frame has 44 numbers, got {frame.size}")
    joints, offset = [], 8
    for _, dofs, *_ in JOINTS:
        joints.append(frame[offset:offset + dofs])
        offset += dofs
    return frame[1:4], frame[4:8], joints


def _xyzw(wxyz):
    w, x, y, z = wxyz / np.linalg.norm(wxyz)
    return [x, y, z, w]


class FloorScene:
    """One pybullet client with the ground and the humanoid, PD command prepared once."""

    def __init__(self, solver_iterations=SOLVER_ITERATIONS):
        self.client = connect()     # with the margin the env in this process runs with
        cid = self.client
        pybullet.setGravity(0, GRAVITY * WORLD_SCALE, 0, physicsClientId=cid)
        pybullet.setPhysicsEngineParameter(numSolverIterations=solver_iterations, physicsClientId=cid)
        plane = pybullet.createCollisionShape(pybullet.GEOM_PLANE, planeNormal=[0, 1, 0], physicsClientId=cid)
        ground = pybullet.createMultiBody(0, plane, physicsClientId=cid)
        pybullet.changeDynamics(ground, -1, lateralFriction=GROUND_FRICTION, physicsClientId=cid)
        self.body = pybullet.loadURDF(f"{pybullet_data.getDataPath()}/humanoid/humanoid.urdf", [0, 0, 0],
                                      globalScaling=1.0, physicsClientId=cid,
                                      flags=pybullet.URDF_MAINTAIN_LINK_ORDER | pybullet.URDF_USE_SELF_COLLISION)
        for link in range(-1, pybullet.getNumJoints(self.body, physicsClientId=cid)):
            pybullet.changeDynamics(self.body, link, lateralFriction=GROUND_FRICTION,
                                    linearDamping=0, angularDamping=0, physicsClientId=cid)

        root_pos, root_rot, joint_vals = read_first_frame()
        self.root_pos = root_pos * WORLD_SCALE
        self.root_rot = _xyzw(root_rot)
        self.joint_targets = [_xyzw(v) if v.size == 4 else [float(v[0])] for v in joint_vals]
        torque_scale = WORLD_SCALE ** 2
        self.indices = [j[0] for j in JOINTS]
        self.kps = [j[2] * torque_scale for j in JOINTS]
        self.kds = [j[3] * torque_scale for j in JOINTS]
        self.forces = [[j[4] * torque_scale] * (3 if j[1] == 4 else 1) for j in JOINTS]
        self.target_vels = [[0.0] * len(f) for f in self.forces]
        self._disable_default_motors()

    def _disable_default_motors(self):
        """Without this a freshly loaded body's default joint motors fight the first stable-PD
        commands (the base leaves at ~6 m/s within one 1/1200 s step)."""
        cid = self.client
        for index, target in zip(self.indices, self.joint_targets):
            if len(target) == 1:
                pybullet.setJointMotorControl2(self.body, index, pybullet.VELOCITY_CONTROL, force=0,
                                               physicsClientId=cid)
            else:
                pybullet.setJointMotorControlMultiDof(self.body, index, pybullet.POSITION_CONTROL,
                                                      targetPosition=[0, 0, 0, 1], positionGain=0,
                                                      velocityGain=1, force=[0, 0, 0], physicsClientId=cid)

    def reset(self):
        cid = self.client
        pybullet.resetBasePositionAndOrientation(self.body, self.root_pos, self.root_rot, physicsClientId=cid)
        pybullet.resetBaseVelocity(self.body, [0, 0, 0], [0, 0, 0], physicsClientId=cid)
        for index, target, vel in zip(self.indices, self.joint_targets, self.target_vels):
            pybullet.resetJointStateMultiDof(self.body, index, target, vel, physicsClientId=cid)
        lowest = min(pybullet.getAABB(self.body, link, physicsClientId=cid)[0][1]
                     for link in range(-1, pybullet.getNumJoints(self.body, physicsClientId=cid)))
        lifted = [self.root_pos[0], self.root_pos[1] - lowest + 1e-3, self.root_pos[2]]
        pybullet.resetBasePositionAndOrientation(self.body, lifted, self.root_rot, physicsClientId=cid)

    def set_scheme(self, scheme):
        pybullet.setTimeStep(scheme.time_step, physicsClientId=self.client)
        pybullet.setPhysicsEngineParameter(numSubSteps=scheme.sub_steps, physicsClientId=self.client)

    def root_height(self):
        return pybullet.getBasePositionAndOrientation(self.body, physicsClientId=self.client)[0][1] / WORLD_SCALE

    def run_decisions(self, scheme, decisions):
        """The timed loop: PD command + stepSimulation, nothing else."""
        cid, body, indices = self.client, self.body, self.indices
        targets, vels, forces, kps, kds = self.joint_targets, self.target_vels, self.forces, self.kps, self.kds
        control, step, mode = pybullet.setJointMotorControlMultiDofArray, pybullet.stepSimulation, pybullet.STABLE_PD_CONTROL
        for _ in range(decisions * scheme.calls_per_decision):
            control(body, indices, mode, targetPositions=targets, targetVelocities=vels, forces=forces,
                    positionGains=kps, velocityGains=kds, physicsClientId=cid)
            step(physicsClientId=cid)

    def close(self):
        pybullet.disconnect(self.client)


def time_episodes(scene, scheme, seconds, episode_decisions=30):
    """(decisions, timed seconds, root heights at episode ends): whole episodes of
    `episode_decisions` decisions from the reset pose until `seconds` have been timed."""
    scene.set_scheme(scheme)
    timed, decisions, end_heights = 0.0, 0, []
    while timed < seconds:
        scene.reset()
        start = time.perf_counter()
        scene.run_decisions(scheme, episode_decisions)
        timed += time.perf_counter() - start
        decisions += episode_decisions
        end_heights.append(scene.root_height())
    return decisions, timed, end_heights


class FloorProbe:
    """The floor measured in short chunks between chunks of other work in the same process (the
    throughput benchmark's speed probe): this machine's speed swings up to 2x within seconds, so a
    rate is only comparable with a floor measured interleaved with it. Each run() times at least one
    whole episode per scheme."""

    def __init__(self, schemes=SCHEMES):
        self.schemes = list(schemes)
        self.scene = FloorScene()
        self.totals = {s.name: [0, 0.0] for s in self.schemes}

    def run(self, seconds_per_scheme):
        for scheme in self.schemes:
            decisions, timed, _ = time_episodes(self.scene, scheme, seconds_per_scheme)
            self.totals[scheme.name][0] += decisions
            self.totals[scheme.name][1] += timed

    def rates(self):
        """Decisions per second of each scheme over all its chunks."""
        return {name: decisions / timed for name, (decisions, timed) in self.totals.items() if timed > 0}

    def close(self):
        self.scene.close()


def measure_all(seconds=4.0, schemes=SCHEMES, rounds=2):
    """Per scheme: decisions/s over `seconds` of timed loops, the schemes interleaved over
    `rounds` so that a drift in the machine's speed hits each alike."""
    totals = {s.name: [0, 0.0, []] for s in schemes}
    scene = FloorScene()
    try:
        for _ in range(rounds):
            for scheme in schemes:
                decisions, timed, heights = time_episodes(scene, scheme, seconds / rounds)
                total = totals[scheme.name]
                total[0] += decisions
                total[1] += timed
                total[2] += heights
    finally:
        scene.close()
    results = {}
    for scheme in schemes:
        decisions, timed, heights = totals[scheme.name]
        results[scheme.name] = {
            "label": scheme.label,
            "decisions_per_s": decisions / timed,
            "ms_per_command_and_step": 1000 * timed / (decisions * scheme.calls_per_decision),
            "decisions": decisions,
            "mean_root_height_after_1s": float(np.mean(heights)),
        }
    return results


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=6.0, help="timed seconds per scheme")
    parser.add_argument("--json", help="write the results to this file")
    args = parser.parse_args(argv)
    results = measure_all(args.seconds)
    for name, r in results.items():
        print(f"{name}  {r['label']:<42} {r['decisions_per_s']:8.1f} decisions/s "
              f"({r['ms_per_command_and_step']:.3f} ms per command+step; "
              f"root height after 1 s {r['mean_root_height_after_1s']:.2f} m)")
    if args.json:
        write_json(args.json, results, indent=2)


if __name__ == "__main__":
    main()
