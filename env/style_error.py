"""Style metrics: how far the simulated character's pose is from the motion data when no clip
time is followed (AMP), per decision, averaged over an episode.

For one decision, with p the simulated joint world positions (link frame origins, index 0 the
root; character units: world scale divided out), h its heading (math_util.quat_heading) and H(a)
the rotation by a about the vertical axis, and for every keyframe f of the scene's motion data
(every clip of a dataset) p'_f and h'_f the same from forward kinematics of the frame's pose:
  style_err            min over f of  mean over bodies of |H(-h)(p_b - p_0) - H(-h'_f)(p'_fb - p'_f0)|
                       the tracking metrics' body_pos_err (env/tracking_error.py) against the
                       nearest frame, each frame turned about the vertical axis to the simulated
                       heading (rotating both sides by -h leaves the norms as they are), so a pose
                       is judged whatever direction it faces and wherever it is
  root_speed           |(v_x, v_z)|: the root's horizontal speed (m/s, character units)
  heading              h (rad); an episode's is the circular mean atan2(sum sin h, sum cos h)
A joint velocity term (|qd - qd'| at the nearest frame) is left out: it does not tell walking from
standing (docs/README_amp.md, the calibration), the speed does.
"""
import numpy as np

from env.amp_obs import heading_inverse_matrix
from env.anim.kin_character import KinCharacter
from util import math_util

STYLE_ERRORS = ("style_err", "root_speed")         # averaged arithmetically
STYLE_METRICS = STYLE_ERRORS + ("heading",)         # heading: circular mean


def heading_frame_offsets(joint_pos, root_rot):
    """(n, 3): each joint relative to the root (row 0), turned by minus the root's heading about the
    vertical axis (env/amp_obs.heading_inverse_matrix). joint_pos (n, 3), root_rot (4,) [w, x, y, z]."""
    return (joint_pos - joint_pos[0]) @ heading_inverse_matrix(root_rot).T


def circular_mean(angles):
    """atan2(sum sin, sum cos) of angles (rad); 0 for none."""
    angles = np.asarray(angles, dtype=float)
    return float(np.arctan2(np.sin(angles).sum(), np.cos(angles).sum()))


def clip_root_speed(motions):
    """The motion data's mean horizontal root speed (m/s, character units, as root_speed): per clip
    the frames' |(v_x, v_z)| weighted by their durations, then the mean over clips."""
    speeds = []
    for m in motions:
        weights = m.frame_durations
        speed = np.hypot(m.vel_frames[:, 0], m.vel_frames[:, 2])
        speeds.append(float(np.average(speed, weights=weights)) if weights.sum() > 0 else 0.0)
    return float(np.mean(speeds))


class StyleReference:
    """The motion data's keyframes as the style metrics compare against them: per frame its
    joints' heading-frame offsets (N, n, 3)."""

    def __init__(self, offsets):
        self.offsets = np.asarray(offsets, dtype=float)

    @classmethod
    def from_motions(cls, motions, char_desc):
        """Every keyframe of every clip, through env/anim's forward kinematics (one call per clip)."""
        kin = KinCharacter(char_desc)
        return cls([heading_frame_offsets(joints, frame[3:7]) for m in motions
                    for joints, frame in zip(kin.calc_joint_world(m.frames)[0], m.frames)])

    @property
    def num_frames(self):
        return len(self.offsets)

    def nearest(self, joint_pos, root_rot):
        """(index of the nearest frame, its mean body distance) for one pose's joint world
        positions (n, 3) and root rotation (4,)."""
        d = self.offsets - heading_frame_offsets(joint_pos, root_rot)
        dists = np.sqrt(np.einsum("fbk,fbk->fb", d, d)).mean(axis=1)
        f = int(np.argmin(dists))
        return f, float(dists[f])

    def errors(self, joint_pos, pose, vel):
        """{name: value} of STYLE_METRICS for one decision: joint world positions (n, 3), the
        character's pose and velocity (character units)."""
        root_rot = pose[3:7]
        return {
            "style_err": self.nearest(joint_pos, root_rot)[1],
            "root_speed": float(np.hypot(vel[0], vel[2])),
            "heading": float(math_util.quat_heading(root_rot)),
        }


class EpisodeStyle:
    """Sums of the per-decision style metrics of one episode."""

    def __init__(self):
        self.sums = dict.fromkeys(STYLE_ERRORS, 0.0)
        self.heading_sin = self.heading_cos = 0.0
        self.count = 0

    def add(self, metrics):
        for name in STYLE_ERRORS:
            self.sums[name] += metrics[name]
        self.heading_sin += np.sin(metrics["heading"])
        self.heading_cos += np.cos(metrics["heading"])
        self.count += 1

    def means(self):
        means = {name: total / max(self.count, 1) for name, total in self.sums.items()}
        means["heading"] = float(np.arctan2(self.heading_sin, self.heading_cos))
        return means
