"""Scene `imitate` (DeepMimic's cSceneImitate): track a motion clip with the simulated character.

Reference: a KinCharacter playing motion_file, placed by an origin. Each update advances its time
by dt; its pose is only evaluated when needed (reward, drawing, a cycle wrap, root rotation fail).
Its body and joint world states come from a kinematic twin (the same URDF in a pybullet client of
its own, posed and never stepped): one C call instead of numpy forward kinematics.

Reset (reference state initialisation): reference time uniform in [0, duration] (with
reset_fail_weight w > 0, off by default, a share w of the training resets start where training
episodes fell: env/scenes/fall_weighted_starts.py), origin at
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
root rotation more than pi/2 away from the reference a fall; pose_termination_dist D > 0 (m, off by
default; MimicKit's pose termination) makes a body more than D from where the reference has it,
positions relative to each character's root, a fall (checked at decisions only). Reward
(imitate_reward.py) is 0 after a fall; the last reward's five terms are kept in `reward_terms`.

ref_vel_smoothing s (keyframes; 0 by default, DeepMimic's raw finite differences): the clip's
velocities, which the reset gives the character and the reward's velocity term compares with (and
imitate_amp's discriminator sees in its expert data), are Gaussian-smoothed over s keyframes
(env/anim/motion.py: smooth_vel_frames).

ref_relative_actions (off by default): the policy's action is an offset from the reference pose
at the next decision (env/sim/ref_relative_action.py) instead of DeepMimic's absolute PD targets.

tar_obs_steps K1 K2 ... (none by default; MimicKit's tar_obs): the state is followed by the
reference's pose K decisions ahead for each K, seen from the simulated character: its root
position minus the simulated root's, and its root rotation with the simulated heading removed
(normal and tangent, 6), both in the simulated heading frame, then its local joint rotations
(normal and tangent per spherical joint, the angle per revolute joint). Running normalisation.

Metrics of test episodes: the tracking errors against the reference now (calc_tracking_error,
env/tracking_error.py) and, with enable_style_error (off here, on in the AMP scenes), the style
metrics against the nearest keyframe of the clip, whatever its time (calc_style_error,
env/style_error.py; the keyframes' forward kinematics once, at the first call).
"""
import math
from pathlib import Path

import numpy as np

from env.anim.character import JointType
from env.anim.kin_character import KinCharacter
from env.anim.motion import Motion
from env.env import Mode, Terminate
from env.scenes.fall_weighted_starts import FallWeightedStarts
from env.scenes.imitate_reward import TERMS, CharSnapshot, ImitateReward
from env.scenes.rl_scene_sim_char import RLSceneSimChar
from env.style_error import StyleReference
from env.tracking_error import body_pos_distances, tracking_errors
from env.sim.ct_state import TaskStateLayout, heading_frame, normal_tangent
from env.sim.ref_relative_action import RefRelativeActions
from env.sim.sim_character import SimCharacter
from env.sim.world import World
from util import math_util

ROOT_ROT_FAIL_ANGLE = 0.5 * np.pi


class ImitateScene(RLSceneSimChar):
    name = "imitate"
    style_error_default = False     # enable_style_error's default

    def __init__(self, arg_parser, rng):
        super().__init__(arg_parser, rng)
        args = arg_parser
        self.sync_root_pos = args.parse_bool("sync_char_root_pos", True)
        self.sync_root_rot = args.parse_bool("sync_char_root_rot", False)
        self.enable_rand_rot_reset = args.parse_bool("enable_rand_rot_reset", False)
        self.enable_root_rot_fail = args.parse_bool("enable_root_rot_fail", False)
        self.rand_char_placement = args.parse_bool("enable_rand_char_placement", True)
        self.pose_termination_dist = args.parse_float("pose_termination_dist", 0.0, at_least=0.0)   # 0: off
        fail_weight = args.parse_float("reset_fail_weight", 0.0, at_least=0.0, at_most=1)
        self.fall_starts = FallWeightedStarts(fail_weight) if fail_weight > 0.0 else None
        self.fixed_start_time = None    # s: when set, every reset starts the reference there (no draw)
        self.enable_style_error = args.parse_bool("enable_style_error", self.style_error_default)
        self._style_ref = None      # the StyleReference, built at the first calc_style_error
        init_xs = args.parse_floats("char_init_pos_xs", (), finite=True)
        self.init_pos = np.array([init_xs[0] if init_xs else 0.0, 0.0, 0.0])

        self.motion_file = args.parse_string("motion_file", required=True)
        smoothing = args.parse_float("ref_vel_smoothing", 0.0, at_least=0.0, finite=True)
        self.kin_char = KinCharacter(self.char_desc, Motion.load(self.motion_file, self.char_desc, smoothing))
        # forward kinematics of the reference in C: the same humanoid in a world of its own, posed
        # by set_state and never stepped (about 4x faster than numpy FK at every decision)
        self.ref_world = World()
        self.ref_twin = SimCharacter(self.ref_world, self.char_desc)
        self.ctrl.cycle_period = self.motion.duration
        self.reward_fn = ImitateReward(self.char_desc)
        self.reward_terms = dict.fromkeys(TERMS, 0.0)
        self.ground_raise = 0.0
        self._kin_cycle = 0
        if args.parse_bool("ref_relative_actions", False):
            self.action_layout = RefRelativeActions(self.ctrl.action_layout)
        self.tar_obs_steps = tuple(args.parse_ints("tar_obs_steps", ()))
        if any(k < 1 for k in self.tar_obs_steps):
            raise ValueError(f"--tar_obs_steps {' '.join(map(str, self.tar_obs_steps))}: steps must be >= 1")
        if self.tar_obs_steps:
            self.state_layout = TaskStateLayout(self.ctrl.state_layout, self._tar_obs_names())

    # ---- reference character ---------------------------------------------------------------

    def _pose_kin(self):
        """Evaluate the reference at its current time (once per update at most)."""
        if "kin_posed" not in self._cache:
            self.kin_char.set_time(self.kin_char.time)
            self._cache["kin_posed"] = True

    @property
    def motion(self):
        """The clip the reference plays (the AMP scenes change it at each reset)."""
        return self.kin_char.motion

    @property
    def _loops(self):
        """Whether the clip playing repeats (DeepMimic's EnableMotionLoop asks the controller's
        current clip, which the AMP scenes change at each reset)."""
        return self.motion.loop == "wrap"

    def _cycle_count(self, time):
        return math.floor(time / self.motion.duration)

    def reset_characters(self):
        kin = self.kin_char
        kin.origin_pos = self.init_pos.copy()
        kin.origin_rot = math_util.quat_identity()
        kin.set_time(self._start_time())
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

    def _start_time(self):
        """The reset's reference time: uniform over the clip, or with reset_fail_weight (training
        resets) more often where training episodes fell (env/scenes/fall_weighted_starts.py).
        The episode that ends here is counted first, while its state is still the scene's.
        fixed_start_time, when set (tests/bench/start_errors.py), replaces the draw."""
        if self.fall_starts is not None:
            self.fall_starts.end_episode(self.has_fallen())
        if self.fixed_start_time is not None:
            return float(self.fixed_start_time)
        if self.fall_starts is not None and self.mode == Mode.TRAIN:
            return self.fall_starts.draw(self.rng, self.motion.duration)
        return self.rng.uniform(0.0, self.motion.duration)

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

    @property
    def ref_relative(self):
        return self.action_layout is not self.ctrl.action_layout

    def _ref_joint_targets(self, pose):
        return pose[self.reward_fn.sph_cols], pose[self.reward_fn.rev_cols]

    def _relative_base(self):
        """The reference's joint rotations at the next decision: what a zero relative action tracks."""
        return self._ref_joint_targets(self.motion.calc_frame(self.kin_char.time + self.ctrl.update_period))

    def set_action(self, agent_id, action):
        if self.ref_relative:
            self.ctrl.set_targets(*self.action_targets(action))
        else:
            self.ctrl.set_action(action)

    def action_targets(self, action):
        if self.ref_relative:
            return self.action_layout.to_targets(action, *self._relative_base())
        return super().action_targets(action)

    def get_layout_desc(self, agent_id=0):
        """The controller's layout plus this scene's own options that change what a state or an
        action means (demonstrations are checked against both): the clip's file name among them,
        since the phase and the reference's poses in a state are the clip's."""
        return {**super().get_layout_desc(agent_id), "action_relative_to_reference": self.ref_relative,
                "tar_obs_steps": list(self.tar_obs_steps), "motion": Path(self.motion_file).name}

    def calc_ref_action(self):
        """The policy action whose PD targets are the reference's current joint rotations."""
        self._pose_kin()
        targets = self._ref_joint_targets(self.kin_char.pose)
        if self.ref_relative:
            return self.action_layout.from_targets(*targets, *self._relative_base())
        return self.ctrl.action_layout.from_targets(*targets)

    def calc_joint_errors(self):
        """Per actuated joint, the angle (rad) between the simulated and the reference local rotation."""
        self._pose_kin()
        sph, rev = self.reward_fn.joint_errors(self.sim_pose_vel()[0], self.kin_char.pose)
        return np.concatenate([sph, rev])

    def calc_state(self):
        if not self.tar_obs_steps:
            return super().calc_state()
        return self._cached("imitate_state", lambda: np.concatenate([super(ImitateScene, self).calc_state(),
                                                                     self._tar_obs()]))

    def _tar_obs_names(self):
        """ref<k>/root_pos_{x,y,z}, ref<k>/root_{normal,tangent}_{x,y,z}, ref<k>/<joint>/{normal,
        tangent}_{x,y,z} per spherical joint, ref<k>/<joint>/angle per revolute joint, per step k."""
        joints = self.char_desc.joints
        nt = [f"{v}_{c}" for v in ("normal", "tangent") for c in "xyz"]
        sph = [j.name for j in joints if j.type is JointType.SPHERICAL]
        rev = [j.name for j in joints if j.type is JointType.REVOLUTE]
        return [f"ref{k}/{name}" for k in self.tar_obs_steps
                for name in [f"root_pos_{c}" for c in "xyz"] + [f"root_{e}" for e in nt]
                + [f"{j}/{e}" for j in sph for e in nt] + [f"{j}/angle" for j in rev]]

    def _tar_obs(self):
        """The reference frames ahead (tar_obs_steps), in the simulated character's heading frame."""
        pose = self.sim_pose_vel()[0]
        heading, to_heading = heading_frame(pose[3:7])
        unheading = np.array([math.cos(-0.5 * heading), 0.0, math.sin(-0.5 * heading), 0.0])
        refs = self.kin_char.calc_poses(self.kin_char.time + self.ctrl.update_period * np.array(self.tar_obs_steps))
        n = len(refs)
        sph = self.reward_fn.sph_cols
        return np.concatenate([(refs[:, 0:3] - pose[0:3]) @ to_heading.T,
                               normal_tangent(math_util.quat_mul(unheading, refs[:, 3:7])),
                               normal_tangent(refs[:, sph].reshape(-1, 4)).reshape(n, -1),
                               refs[:, self.reward_fn.rev_cols]], axis=1).ravel()

    def motion_over(self):
        """Env.motion_over: a non-looping clip's reference has reached its last frame."""
        return not self._loops and self.kin_char.time >= self.motion.duration

    # ---- termination and reward ----------------------------------------------------------

    def has_fallen(self):
        fallen = super().has_fallen()
        if self.enable_root_rot_fail and not fallen:
            self._pose_kin()
            sim_rot = self.sim_pose_vel()[0][3:7]
            fallen = math_util.quat_diff_angle(sim_rot, self.kin_char.root_rot) > ROOT_ROT_FAIL_ANGLE
        if self.pose_termination_dist > 0.0 and not fallen and self.ctrl.need_new_action:
            fallen = self.body_pos_errors().max() > self.pose_termination_dist
        return fallen

    def body_pos_errors(self):
        """Per body (link frame origins), its distance from where the reference has it, each
        relative to its own root (env/tracking_error.body_pos_distances)."""
        return body_pos_distances(self.sim_body_states().joint_pos, self.ref_body_states().joint_pos)

    def calc_tracking_error(self, agent_id=0):
        """MimicKit's tracking errors now (env/tracking_error.py)."""
        self._pose_kin()
        return tracking_errors(self.sim_body_states(), self.sim_pose_vel()[1], self.ref_body_states(),
                               self.kin_char.vel)

    def style_motions(self):
        """The clips the style metrics compare against."""
        return [self.motion]

    def calc_style_error(self, agent_id=0):
        """The style metrics now (env/style_error.py), or None without enable_style_error."""
        if not self.enable_style_error:
            return None
        if self._style_ref is None:
            self._style_ref = StyleReference.from_motions(self.style_motions(), self.char_desc)
        pose, vel = self.sim_pose_vel()
        return self._style_ref.errors(self.sim_body_states().joint_pos, pose, vel)

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
