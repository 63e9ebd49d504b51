"""Scene `imitate_amp` (DeepMimic's cSceneImitateAMP): the imitate scene as AMP needs it.

Differences from `imitate` (deepmimic.md 4.1, 4.2):
- termination is a fall only (a non-looping clip's end is not a failure);
- the reward is 0 in training; in test mode, when enable_test_time_warp (default true) and the
  episode length is bounded, the last step's reward is the dynamic-time-warping cost of the
  episode (env/dtw.py; lower is better) plus 1 for each sample the episode fell short of its
  longest length (ceil(30 x the longest time limit) + 2). Samples, at reset and at every
  decision of a test episode: (0, root height, 0) and every other joint's world position minus
  the root's, for the simulated and for the reference character;
- AMP observations (env/amp_obs.py) over a window of N states one decision apart (N = 2,
  DeepMimic's pair, unless the AMP agent's DiscObsSteps sets it with set_amp_obs_steps): the
  agent's from the current simulated state and those saved at its N - 1 previous decisions (at a
  reset, the reference at time - 1/30 s, time - 2/30 s, ...); the expert's from a clip picked by
  weight, at t uniform in [0, duration] and t - 1/30 s, ..., with the root height taken above the
  reference origin.

Metrics of test episodes: the style metrics (env/style_error.py) against every keyframe of the
motion data (every clip of a dataset), enable_style_error on by default; no tracking errors
(calc_tracking_error is None): the policy follows no clip time, so the reference's pose now is
no target.

Args on top of imitate's: kin_ctrl (motion: motion_file is one clip, the default; clips:
motion_file is a dataset, see MotionSet), enable_amp_obs_local_root (default false),
enable_test_time_warp (default true). With clips, each reset plays a clip picked by weight.

reset_motion_file (clips only; not DeepMimic's, default the motion_file's dataset): the dataset the
resets draw their clip from, so the reference (the pose a relative action, --ref_relative_actions,
is an offset from) plays one of its clips; the discriminator's expert data and the style error
stay the motion_file's. The reference of a non-looping clip stops at its last frame, so with
relative actions a reset into a short clip leaves the policy acting about a frozen pose within
seconds: a dataset of looping clips here keeps the reference moving for the whole episode.

action_offset_from_motion (not DeepMimic's, default false; absolute actions only): the action's
normalisation offset at the motion data's mean PD targets instead of the joint-limit middle, so
an untrained policy holds the data's mean pose (_set_action_offset_from_motion).
"""
import copy
import math
from collections import deque

import numpy as np

from env.amp_obs import AMPObsBuilder
from env.anim.character import CharacterDesc
from env.anim.motion import Motion
from env.dtw import TimeWarper
from env.env import Mode
from env.scenes.imitate import ImitateScene
from env.scenes.rl_scene_sim_char import RLSceneSimChar
from util.paths import load_json

KIN_CTRLS = ("motion", "clips")


class MotionSet:
    """Clips with sampling weights. A dataset file is JSON:
    {"Motions": [{"Weight": w (default 1), "File": clip path}, ...]}."""

    def __init__(self, motions, weights):
        self.motions = list(motions)
        weights = np.asarray(weights, dtype=float)
        self.probs = weights / weights.sum()

    @classmethod
    def load(cls, path, char_desc, vel_smoothing=0.0):
        resolved, data = load_json(path)
        entries = data.get("Motions") if isinstance(data, dict) else None
        if not isinstance(entries, list) or not entries:
            raise ValueError(f"{resolved}: key 'Motions' must be a non-empty list of clips")
        motions, weights = [], []
        for i, entry in enumerate(entries):
            clip = entry.get("File") if isinstance(entry, dict) else None
            weight = entry.get("Weight", 1.0) if isinstance(entry, dict) else None
            if not isinstance(clip, str):
                raise ValueError(f"{resolved}: Motions[{i}] key 'File' must be a clip path")
            if isinstance(weight, bool) or not isinstance(weight, (int, float)) or not weight > 0:
                raise ValueError(f"{resolved}: Motions[{i}] key 'Weight' is {weight!r}, expected a number > 0")
            try:
                motions.append(Motion.load(clip, char_desc, vel_smoothing))
            except FileNotFoundError as err:
                raise type(err)(f"{resolved}: Motions[{i}]: {err}") from None     # ExtraDataNotFound stays so
            weights.append(weight)
        return cls(motions, weights)

    def sample(self, rng):
        if len(self.motions) == 1:
            return self.motions[0]
        return self.motions[rng.choice(len(self.motions), p=self.probs)]


def _with_arg(arg_parser, key, value):
    """A copy of arg_parser with --key replaced."""
    parser = copy.copy(arg_parser)
    parser.table, parser.sources = dict(arg_parser.table), dict(arg_parser.sources)
    parser.set(key, value)
    return parser


class ImitateAMPScene(ImitateScene):
    name = "imitate_amp"
    # Whether enable_amp_obs_local_root and enable_test_time_warp are read (see TargetAMPScene).
    reads_amp_obs_args = True
    style_error_default = True

    def __init__(self, arg_parser, rng):
        args = arg_parser
        kin_ctrl = args.parse_string("kin_ctrl", "motion")
        if kin_ctrl not in KIN_CTRLS:
            raise ValueError(f"--kin_ctrl {kin_ctrl!r} is not one of {', '.join(KIN_CTRLS)}")
        motion_set = reset_set = None
        reset_file = args.parse_string("reset_motion_file", "")
        if reset_file and kin_ctrl != "clips":
            raise ValueError(f"--reset_motion_file {reset_file}: needs --kin_ctrl clips")
        if kin_ctrl == "clips":
            char_desc = CharacterDesc.load(args.parse_strings("character_files", required=True)[0])
            smoothing = args.parse_float("ref_vel_smoothing", 0.0, at_least=0.0, finite=True)
            motion_set = MotionSet.load(args.parse_string("motion_file", required=True), char_desc, smoothing)
            reset_set = MotionSet.load(reset_file, char_desc, smoothing) if reset_file else motion_set
            args = _with_arg(args, "motion_file", str(reset_set.motions[0].path))
        super().__init__(args, rng)
        self.motion_set = motion_set or MotionSet([self.motion], [1.0])
        self.reset_set = reset_set or self.motion_set     # the clips resets draw from
        self.reward_terms = {}      # the style reward is the agent's (its discriminator's): no terms here
        self._activate_motion(self.reset_set.motions[0])
        if args.parse_bool("action_offset_from_motion", False):
            self._set_action_offset_from_motion()

        # Read in every AMP scene (so they are not reported unused), applied where DeepMimic does.
        local_root = args.parse_bool("enable_amp_obs_local_root", False) and self.reads_amp_obs_args
        self.amp_obs = AMPObsBuilder(self.char_desc, local_root)
        self.amp_hist = deque()     # (pose, vel, body centres) at the previous decisions, newest first
        self._init_hist()
        self.time_warper = None
        if args.parse_bool("enable_test_time_warp", True) and self.reads_amp_obs_args:
            max_time = max(self.timer_params.time_max, self.timer_params_end.time_max)
            if math.isfinite(max_time):
                self.time_warper = TimeWarper(int(math.ceil(self.ctrl.params.query_rate * max_time)) + 2)

    def _set_action_offset_from_motion(self):
        """--action_offset_from_motion: the absolute action's normalisation offset moves from the
        joint-limit middle and the zero rotation to the motion data's mean: minus the mean, over
        every frame of the motion_file's clips, of the action whose PD targets are the frame's
        joint rotations. A policy's zero normalised action (an untrained policy's output) then holds
        that mean pose instead of a crouch with the knees at mid-range; the policy's input and
        action keep the paper's form (its own state, absolute PD targets)."""
        if self.ref_relative:
            raise ValueError("--action_offset_from_motion: needs absolute actions (not with --ref_relative_actions)")
        actions = [self.action_layout.from_targets(*self._ref_joint_targets(frame))
                   for motion in self.motion_set.motions for frame in motion.frames]
        self.action_layout.offset = -np.mean(actions, axis=0)

    def _activate_motion(self, motion):
        self.kin_char.motion = motion
        self.ctrl.cycle_period = motion.duration

    # ---- episode flow ------------------------------------------------------------------

    def reset_characters(self):
        self._activate_motion(self.reset_set.sample(self.rng))
        super().reset_characters()

    def reset(self):
        super().reset()
        self._init_hist()
        if self.time_warper is not None:
            self.time_warper.reset()
        if self._time_warp_active():
            self._update_time_warper()

    def _pre_physics(self, timestep):
        if self.ctrl.need_new_action:
            self.new_action_update()
        super()._pre_physics(timestep)

    def new_action_update(self):
        """First thing in the update after a decision (DeepMimic's NewActionUpdate)."""
        self._update_hist()
        if self._time_warp_active():
            self._update_time_warper()

    def set_amp_obs_steps(self, num_steps):
        """The AMP observation window: num_steps states one decision apart (>= 2)."""
        self.amp_obs = AMPObsBuilder(self.char_desc, self.amp_obs.local_root, num_steps)
        self._init_hist()

    def _init_hist(self):
        dt = self.ctrl.update_period
        times = self.ctrl.time - dt * np.arange(1, self.amp_obs.num_steps)
        poses = self.kin_char.calc_poses(times)
        bodies = self.kin_char.calc_body_world(poses)[0]
        self.amp_hist = deque(zip(poses, (self.kin_char.calc_vel(t) for t in times), bodies),
                              maxlen=self.amp_obs.num_steps - 1)

    def _update_hist(self):
        pose, vel = self.sim_pose_vel()
        self.amp_hist.appendleft((pose.copy(), vel.copy(), self.sim_body_states().pos.copy()))

    # ---- AMP observations ------------------------------------------------------------------

    def enable_amp_task_reward(self):
        return False

    def get_amp_obs_size(self):
        return self.amp_obs.size

    def get_amp_obs_offset(self):
        return self.amp_obs.offset

    def get_amp_obs_scale(self):
        return self.amp_obs.scale

    def get_amp_obs_norm_group(self):
        return self.amp_obs.norm_groups

    def record_amp_obs_agent(self, agent_id=0):
        """The simulated character's window; its body centres are the physics' own (the state's
        reading of them, kept in the history), so no forward kinematics runs per decision."""
        frames = [self.sim_pose_vel(), *((pose, vel) for pose, vel, _ in self.amp_hist)]
        body_pos = [self.sim_body_states().pos, *(bodies for _, _, bodies in self.amp_hist)]
        return self.amp_obs.build(frames, self.world.ground_height, body_pos)

    def record_amp_obs_expert(self, agent_id=0):
        motion = self.motion_set.sample(self.rng)
        return self.calc_expert_obs(motion, self.rng.uniform(0.0, motion.duration))

    def record_amp_obs_expert_batch(self, agent_id, count):
        """count expert observations at once (the agent's for a whole path): each of a clip drawn
        by weight, at a time uniform in [0, its duration], as record_amp_obs_expert draws them."""
        motions = self.motion_set.motions
        picks = (self.rng.choice(len(motions), size=count, p=self.motion_set.probs) if len(motions) > 1
                 else np.zeros(count, dtype=int))
        obs = np.empty((count, self.amp_obs.size))
        for m in np.unique(picks):
            rows = np.flatnonzero(picks == m)
            obs[rows] = self.calc_expert_obs_batch(motions[m], self.rng.uniform(0.0, motions[m].duration, len(rows)))
        return obs

    def calc_expert_obs(self, motion, time):
        """The expert observation of `motion` at `time` and the window's earlier decisions, in the
        clip's own coordinates, the root height taken above the reference origin."""
        return self.calc_expert_obs_batch(motion, np.array([time]))[0]

    def calc_expert_obs_batch(self, motion, times):
        """calc_expert_obs at each of `times` (B,): (B, size)."""
        steps = np.arange(self.amp_obs.num_steps) * self.ctrl.update_period
        window = (np.asarray(times, dtype=float)[:, None] - steps).ravel()
        shape = (len(times), self.amp_obs.num_steps, -1)
        return self.amp_obs.build_batch(motion.calc_frames(window).reshape(shape),
                                        motion.calc_vels(window).reshape(shape),
                                        np.full(len(times), self.kin_char.origin_pos[1]))

    # ---- metrics -------------------------------------------------------------------------------

    def style_motions(self):
        return self.motion_set.motions

    def calc_tracking_error(self, agent_id=0):
        return None

    # ---- termination and reward ----------------------------------------------------------

    def check_terminate(self, agent_id=0):
        return RLSceneSimChar.check_terminate(self, agent_id)

    def _time_warp_active(self):
        """Samples are only taken in test mode (only test returns are reported)."""
        return self.time_warper is not None and self.mode == Mode.TEST

    def calc_reward(self, agent_id=0):
        if self._time_warp_active() and self.is_episode_end():
            return self.calc_time_warp_cost()
        return 0.0

    def calc_time_warp_cost(self):
        missing_steps = max(self.time_warper.capacity - self.time_warper.sample_count, 0)
        return self.time_warper.calc_alignment() + missing_steps

    def _update_time_warper(self):
        sim_points = _time_warp_points(self.sim_body_states().joint_pos, self.sim_pose_vel()[0][0:3])
        self._pose_kin()
        kin_joints, _ = self.kin_char.calc_joint_world(self.kin_char.pose)
        self.time_warper.add(sim_points, _time_warp_points(kin_joints, self.kin_char.root_pos))


def _time_warp_points(joint_pos, root_pos):
    """(0, root height, 0), then each other joint's world position minus the root position."""
    points = joint_pos - root_pos
    points[0] = (0.0, root_pos[1], 0.0)
    return points
