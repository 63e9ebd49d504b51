"""Scene `imitate` (DeepMimic's cSceneImitate): track a motion clip with the simulated character.

Reference: a KinCharacter playing motion_file, placed by an origin. Each update advances its time
by dt; its pose is only evaluated when needed (reward, drawing, a cycle wrap, root rotation fail).
Its body and joint world states come from a kinematic twin (the same URDF in a pybullet client of
its own, posed and never stepped): one C call instead of numpy forward kinematics.

Reset (reference state initialisation): reference time uniform in [0, duration], origin at
char_init_pos_xs (0), optionally turned by a random heading (enable_rand_rot_reset); the simulated
character takes the reference pose and velocity, the controller time the reference time; the
character is placed at x = z = 0 (DeepMimic's random placement, which on a plane is the origin;
enable_rand_char_placement false keeps the reference's position), raised if a body is below
the ground, and the reference root is moved onto the simulated root (and turned to its heading
with sync_char_root_rot).

Each cycle wrap of a looping clip: with sync_char_root_rot the reference turns to the simulated
heading; with sync_char_root_pos its root x, z snap to the simulated root and its height is taken
relative to the ground again.

Termination on top of falls: the end of a non-looping clip is Fail; enable_root_rot_fail makes a
root rotation more than pi/2 away from the reference a fall. Reward (imitate_reward.py) is 0 after
a fall; the last reward's five terms are kept in `reward_terms`.
"""
import math

import numpy as np

from env.anim.kin_character import KinCharacter
from env.anim.motion import Motion
from env.env import Terminate
from env.scenes.imitate_reward import TERMS, CharSnapshot, ImitateReward
from env.scenes.rl_scene import RLSceneSimChar
from env.sim.sim_character import SimCharacter
from env.sim.world import World
from util import math_util

ROOT_ROT_FAIL_ANGLE = 0.5 * np.pi


class ImitateScene(RLSceneSimChar):
    name = "imitate"

    def __init__(self, arg_parser, rng, update_timestep):
        super().__init__(arg_parser, rng, update_timestep)
        args = arg_parser
        self.sync_root_pos = args.parse_bool("sync_char_root_pos", True)
        self.sync_root_rot = args.parse_bool("sync_char_root_rot", False)
        self.enable_rand_rot_reset = args.parse_bool("enable_rand_rot_reset", False)
        self.enable_root_rot_fail = args.parse_bool("enable_root_rot_fail", False)
        self.rand_char_placement = args.parse_bool("enable_rand_char_placement", True)
        init_xs = args.parse_floats("char_init_pos_xs", ())
        self.init_pos = np.array([init_xs[0] if init_xs else 0.0, 0.0, 0.0])

        self.motion = Motion.load(args.parse_string("motion_file", required=True), self.char_desc)
        self.kin_char = KinCharacter(self.char_desc, self.motion)
        # forward kinematics of the reference in C: the same humanoid in a world of its own, posed
        # by set_state and never stepped (about 4x faster than numpy FK at every decision)
        self.ref_world = World()
        self.ref_twin = SimCharacter(self.ref_world, self.char_desc)
        self.ctrl.cycle_period = self.motion.duration
        self.reward_fn = ImitateReward(self.char_desc)
        self.reward_terms = dict.fromkeys(TERMS, 0.0)
        self.ground_raise = 0.0
        self._kin_cycle = 0
        self._loops = self.motion.loop == "wrap"

    # ---- reference character ---------------------------------------------------------------

    def _pose_kin(self):
        """Evaluate the reference at its current time (once per update at most)."""
        if "kin_posed" not in self._cache:
            self.kin_char.set_time(self.kin_char.time)
            self._cache["kin_posed"] = True

    def _cycle_count(self, time):
        return math.floor(time / self.motion.duration)

    def reset_characters(self):
        kin = self.kin_char
        kin.origin_pos = self.init_pos.copy()
        kin.origin_rot = math_util.quat_identity()
        kin.set_time(self.rng.uniform(0.0, self.motion.duration))
        if self.enable_rand_rot_reset:
            kin.set_heading(kin.calc_heading() + self.rng.uniform(-np.pi, np.pi))
        self._kin_cycle = self._cycle_count(kin.time)

        pose, vel = kin.pose.copy(), kin.vel.copy()
        if self.rand_char_placement:
            pose[[0, 2]] = 0.0
        self.sim_char.set_state(pose, vel)
        self.ctrl.reset(kin.time)
        self.ground_raise = self.resolve_ground_intersect()
        if self.sync_root_rot:
            kin.set_heading(float(math_util.quat_heading(self.sim_char.get_state()[0][3:7])))
        kin.set_root_pos(self.sim_char.get_root_pos())

    def _pre_physics(self, timestep):
        kin = self.kin_char
        kin.time += timestep
        if self._loops:
            cycle = self._cycle_count(kin.time)
            if cycle != self._kin_cycle:
                self._kin_cycle = cycle
                self._sync_new_cycle()

    def _sync_new_cycle(self):
        """DeepMimic's SyncKinCharNewCycle (the simulated character is before this update's step)."""
        kin = self.kin_char
        kin.set_time(kin.time)
        sim_pose, _ = self.sim_char.get_state()
        if self.sync_root_rot:
            kin.set_heading(float(math_util.quat_heading(sim_pose[3:7])))
        if self.sync_root_pos:
            root = kin.root_pos.copy()
            root[[0, 2]] = sim_pose[[0, 2]]
            root[1] = self.world.ground_height + (root[1] - kin.origin_pos[1])
            kin.set_root_pos(root)

    def calc_ref_action(self):
        """The action whose PD targets are the reference's current joint rotations (no policy)."""
        self._pose_kin()
        pose = self.kin_char.pose
        return self.ctrl.action_layout.from_targets(pose[self.reward_fn.sph_cols], pose[self.reward_fn.rev_cols])

    def calc_joint_errors(self):
        """Per actuated joint, the angle (rad) between the simulated and the reference local rotation."""
        self._pose_kin()
        sph, rev = self.reward_fn.joint_errors(self.sim_pose_vel()[0], self.kin_char.pose)
        return np.concatenate([sph, rev])

    def motion_over(self):
        return not self._loops and self.kin_char.time >= self.motion.duration

    # ---- termination and reward ----------------------------------------------------------

    def has_fallen(self):
        fallen = super().has_fallen()
        if self.enable_root_rot_fail and not fallen:
            self._pose_kin()
            sim_rot = self.sim_pose_vel()[0][3:7]
            fallen = math_util.quat_diff_angle(sim_rot, self.kin_char.root_rot) > ROOT_ROT_FAIL_ANGLE
        return fallen

    def check_terminate(self, agent_id=0):
        terminate = super().check_terminate(agent_id)
        if terminate == Terminate.Null and self.motion_over():
            terminate = Terminate.Fail
        return terminate

    def calc_reward(self, agent_id=0):
        if self.has_fallen():
            self.reward_terms = dict.fromkeys(self.reward_terms, 0.0)
            return 0.0
        reward, self.reward_terms = self.reward_fn.calc(self.sim_snapshot(), self.ref_snapshot())
        return reward

    def sim_snapshot(self):
        pose, vel = self.sim_pose_vel()
        bodies = self.sim_body_states()
        return CharSnapshot(pose=pose, vel=vel, joint_pos=bodies.joint_pos,
                            com_vel=self.sim_char.calc_com_vel(bodies), ground_height=self.world.ground_height)

    def _pose_ref_twin(self):
        """The kinematic twin at the reference's current pose and velocity (once per update)."""
        if "twin_posed" not in self._cache:
            self._pose_kin()
            self.ref_twin.set_state(self.kin_char.pose, self.kin_char.vel)
            self._cache["twin_posed"] = True

    def ref_body_states(self):
        """The reference's body and joint states, forward kinematics by the kinematic twin."""
        self._pose_ref_twin()
        return self._cached("ref_bodies", self.ref_twin.get_body_states)

    def ref_snapshot(self):
        self._pose_ref_twin()
        kin = self.kin_char
        joint_pos, com_vel = self.ref_twin.get_joint_pos_com_vel()
        return CharSnapshot(pose=kin.pose, vel=kin.vel, joint_pos=joint_pos, com_vel=com_vel,
                            ground_height=kin.origin_pos[1])

    # ---- viewer hooks ------------------------------------------------------------------------

    def draw_characters(self):
        bodies = self.ref_body_states()
        return super().draw_characters() + [(self.char_desc, bodies.pos, bodies.rot, "kin")]

    def shutdown(self):
        super().shutdown()
        self.ref_world.shutdown()
