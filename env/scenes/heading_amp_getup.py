"""Scene `heading_amp_getup` (DeepMimic's cSceneHeadingAMPGetup): heading_amp, plus getting up.

Getup timer tau: it runs for T_g = the longest of the getup clips (getup_motion_ids, indices into
the motion set) and the character is "getting up" while tau < T_g; getup phase
p = clamp(1 - tau / T_g, 0, 1) (1 when a getup starts, 0 when it is over). The timer advances with
the episode timer, at the start of every update.
- Goal (4): heading_amp's [cos dh, -sin dh, v*] (running-normalised, per dimension), then p, fed
  to the policy as 2 (p - 0.5) and never normalised.
- Task reward while getting up, h_g the ground height under the root and head = the centre of
  body head_id:
      0.2 clamp((y_root - h_g) / getup_height_root, 0, 1) + 0.8 clamp((y_head - h_g) / getup_height_head, 0, 1)
  otherwise heading_amp's (0 after a fall).
- No contact fall while getting up (has_fallen_contact is False), so a getup never ends in a fall.
- Normal reset: heading_amp's, then tau = T_g (not getting up), unless the clip drawn is a getup
  clip: then tau = the reference time in that clip (the episode starts mid-getup).
- Recovery episode (training only): if the episode being reset ended in a failure (a fall), with
  probability recover_episode_prob the scene resets only its timers (episode timer, getup timer at
  tau = 0) and the controller; the fallen pose, the reference clip and time, the target heading
  and speed carry over, and the character gets up from where it fell. DeepMimic means to forbid
  two recovery episodes in a row (a member flag), but its Reset assigns a local variable that
  shadows the member, so the flag stays false and recovery episodes chain; kept here.
- Test mode: no recovery episodes; after an update in which a fall-contact body touches the
  ground while not getting up, tau = 0 (a getup starts), so falls never end a test episode.
Keys (defaults): getup_motion_ids (none), getup_height_root (0.5), getup_height_head (0.5),
head_id (0), recover_episode_prob (0), on top of heading_amp's.
"""
import numpy as np

from env.env import Mode, NormGroup, Terminate
from env.scenes.heading_amp import HeadingAMPScene
from env.scenes.scene import Timer, TimerParams

ROOT_REWARD_W = 0.2
HEAD_REWARD_W = 0.8


class HeadingAMPGetupScene(HeadingAMPScene):
    name = "heading_amp_getup"

    def __init__(self, arg_parser, rng):
        super().__init__(arg_parser, rng)
        args = arg_parser
        if self.reset_set is not self.motion_set:
            raise ValueError("--reset_motion_file: not in heading_amp_getup, whose --getup_motion_ids index "
                             "the motion_file's clips and whose resets play them")
        num_motions = len(self.motion_set.motions)
        self.getup_motion_ids = args.parse_ints("getup_motion_ids", ())
        for motion_id in self.getup_motion_ids:
            if not 0 <= motion_id < num_motions:
                raise ValueError(f"--getup_motion_ids {motion_id} is not a motion index "
                                 f"(the motion set has {num_motions} clips)")
        self.getup_height_root = args.parse_float("getup_height_root", 0.5)
        self.getup_height_head = args.parse_float("getup_height_head", 0.5)
        for key in ("getup_height_root", "getup_height_head"):
            if not getattr(self, key) > 0:
                raise ValueError(f"--{key} must be > 0, got {getattr(self, key)}")
        self.head_id = args.parse_int("head_id", 0)
        if not 0 <= self.head_id < self.sim_char.num_bodies:
            raise ValueError(f"--head_id {self.head_id} is not a body index (0 to {self.sim_char.num_bodies - 1})")
        self.recover_episode_prob = args.parse_float("recover_episode_prob", 0.0)
        if not 0.0 <= self.recover_episode_prob <= 1.0:
            raise ValueError(f"--recover_episode_prob must be in [0, 1], got {self.recover_episode_prob}")

        self.getup_time = max((self.motion_set.motions[i].duration for i in self.getup_motion_ids), default=0.0)
        self.getup_timer = Timer(TimerParams(time_min=self.getup_time, time_max=self.getup_time))
        self.getup_timer.reset(self.rng)    # max_time = T_g (min = max: no random draw)
        self.end_getup()

    # ---- getup timer -----------------------------------------------------------------------

    def begin_getup(self):
        self.getup_timer.time = 0.0

    def end_getup(self):
        self.getup_timer.time = self.getup_time

    def check_getting_up(self):
        return not self.getup_timer.is_end()

    def calc_getup_phase(self):
        if self.getup_time <= 0.0:
            return 0.0
        return float(np.clip(1.0 - self.getup_timer.time / self.getup_time, 0.0, 1.0))

    def curr_motion_id(self):
        return next(i for i, motion in enumerate(self.motion_set.motions) if motion is self.motion)

    def sync_getup_timer(self):
        """After a normal reset: mid-getup if the reference plays a getup clip."""
        if self.curr_motion_id() in self.getup_motion_ids:
            self.getup_timer.time = self.kin_char.time

    # ---- episode flow ------------------------------------------------------------------

    def reset(self):
        if self.activate_recovery_episode():
            self.reset_recovery_episode()
        else:
            super().reset()
            self.sync_getup_timer()

    def reset_timers(self):
        super().reset_timers()
        self.end_getup()

    def activate_recovery_episode(self):
        """Training only, after a failed episode, with probability recover_episode_prob (no check
        against a previous recovery episode: see the module docstring)."""
        if self.mode != Mode.TRAIN or self.recover_episode_prob <= 0.0:
            return False
        if self.check_terminate(0) != Terminate.Fail:
            return False
        return bool(self.rng.random() < self.recover_episode_prob)

    def reset_recovery_episode(self):
        self.reset_timers()
        self.begin_getup()
        self.ctrl.reset(0.0)
        self._record_action_start()
        self._touch()

    def _pre_physics(self, timestep):
        super()._pre_physics(timestep)
        self.getup_timer.update(timestep)

    def _post_physics(self, timestep):
        super()._post_physics(timestep)
        if self.mode == Mode.TEST and self.has_fallen_contact():
            self.begin_getup()

    # ---- goal --------------------------------------------------------------------------------

    def goal_names(self, agent_id=0):
        return super().goal_names(agent_id) + ["getup_phase"]

    def record_goal(self, agent_id=0):
        return np.append(super().record_goal(agent_id), self.calc_getup_phase())

    def build_goal_offset(self, agent_id=0):
        offset = super().build_goal_offset(agent_id)
        offset[-1] = -0.5
        return offset

    def build_goal_scale(self, agent_id=0):
        scale = super().build_goal_scale(agent_id)
        scale[-1] = 2.0
        return scale

    def build_goal_norm_groups(self, agent_id=0):
        groups = super().build_goal_norm_groups(agent_id)
        groups[-1] = int(NormGroup.None_)
        return groups

    # ---- termination and reward ----------------------------------------------------------

    def has_fallen_contact(self):
        return not self.check_getting_up() and super().has_fallen_contact()

    def calc_reward(self, agent_id=0):
        if self.check_getting_up():
            return self.calc_reward_getup()
        return super().calc_reward(agent_id)

    def calc_reward_getup(self):
        ground = self.world.ground_height
        root_h = self.sim_char.get_root_pos()[1] - ground
        head_h = self.sim_body_states().pos[self.head_id][1] - ground
        return float(ROOT_REWARD_W * np.clip(root_h / self.getup_height_root, 0.0, 1.0)
                     + HEAD_REWARD_W * np.clip(head_h / self.getup_height_head, 0.0, 1.0))
