"""DeepMimic motion clips: load, validate, interpolate, differentiate.

A clip file is JSON: {"Loop": "wrap" | "none", "Frames": [[duration, pose (43)], ...]} with the
pose in the character's layout (env/anim/character.py). Frame i starts at the sum of the
durations of frames 0..i-1; the last frame's duration is unused, so the clip lasts the sum of all
durations but the last. Other keys (RightJoints, LeftJoints) are ignored.

Interpolation: positions and revolute angles linearly, quaternions by slerp along the short arc.
A 'wrap' clip repeats: at time t in cycle k = floor(t / duration) the pose is the clip's pose at
t - k * duration with k * cycle_root_offset added to the root position (cycle_root_offset = last
frame root position - first frame root position, y zeroed). A 'none' clip clamps t to
[0, duration].

Velocities (DeepMimic's): keyframe f gets the finite difference from frame f to frame f+1 over
frame f's duration (the last keyframe copies the one before); calc_vel interpolates those
linearly. Root: linear velocity and world-frame angular velocity (from q1 q0^-1); spherical
joints: angular velocity in the earlier frame's local frame (from q0^-1 q1); revolute: angle rate.

vel_smoothing s > 0 (keyframes; 0, DeepMimic's, by default) replaces each keyframe's velocity by
the Gaussian-weighted mean (standard deviation s keyframes, cut at 3 s) of the keyframes' finite
differences around it: a 'wrap' clip's differences are taken as a cycle, a 'none' clip's are
extended by their first and last. Mocap sampled at 30 Hz gives finite differences that flip sign
from one frame to the next where the body moves fast (the kick's root yaw rate: -5.8 then +7.3
rad/s two keyframes apart); a character reset with them starts with that spurious spin.
"""
import bisect
import math

import numpy as np

from env.anim.character import JointType
from util import math_util
from util.paths import load_json

LOOP_TYPES = ("wrap", "none")
_MIN_SLERP_ANGLE = 1e-9  # below this sin(a t) / sin(a) is t to double precision


MAX_ABS_VALUE = 1e6  # larger frame numbers (metres, seconds, quaternion parts) overflow velocities


class MotionError(ValueError):
    """A malformed clip file; the message names the file (and the frame)."""


class Motion:
    def __init__(self, frames, frame_durations, loop, char_desc, path="<memory>", vel_smoothing=0.0):
        """frames (N, pose_size) and frame_durations (N,) as in the file; validated here."""
        self.path = path
        self.loop = loop
        self.char_desc = char_desc
        self.frames = np.array(frames, dtype=float)
        self.frame_durations = np.array(frame_durations, dtype=float)
        self._validate()

        quat_starts = [3] + [char_desc.param_offset[j.id] for j in char_desc.joints
                             if j.type is JointType.SPHERICAL]
        self._quat_cols = np.array(quat_starts)[:, None] + np.arange(4)  # (num quats, 4)
        self._normalize_quats()

        self.num_frames = len(self.frames)
        self.frame_times = np.concatenate([[0.0], np.cumsum(self.frame_durations[:-1])])
        self.duration = float(self.frame_times[-1])
        self._frame_times = self.frame_times.tolist()
        self.cycle_root_offset = self.frames[-1, :3] - self.frames[0, :3]
        self.cycle_root_offset[1] = 0.0
        self._frame_deltas = np.diff(self.frames, axis=0)
        self._build_slerp_tables()
        self.vel_frames = self._build_vel_frames()
        if vel_smoothing > 0.0:
            self.vel_frames = smooth_vel_frames(self.vel_frames, float(vel_smoothing), self.loop == "wrap")
        self._vel_deltas = np.diff(self.vel_frames, axis=0)

    @classmethod
    def load(cls, path, char_desc, vel_smoothing=0.0):
        resolved, data = load_json(path, MotionError)
        if not isinstance(data, dict) or "Frames" not in data:
            raise MotionError(f"{resolved}: missing key 'Frames'")
        loop = data.get("Loop", "none")
        rows = data["Frames"]
        if not isinstance(rows, list):
            raise MotionError(f"{resolved}: 'Frames' is not a list of frames")
        width = 1 + char_desc.pose_size
        for i, row in enumerate(rows):
            if not isinstance(row, list) or len(row) != width:
                count = len(row) if isinstance(row, list) else "not a list of"
                raise MotionError(f"{resolved}: frame {i} has {count} numbers, expected {width} "
                                  f"(duration + pose of {char_desc.pose_size})")
            if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in row):
                raise MotionError(f"{resolved}: frame {i} holds a value that is not a number")
        table = np.array(rows, dtype=float).reshape(len(rows), width)
        if np.any(np.abs(table) > MAX_ABS_VALUE):
            frame = int(np.argwhere(np.abs(table) > MAX_ABS_VALUE)[0][0])
            raise MotionError(f"{resolved}: frame {frame} holds a value beyond +-{MAX_ABS_VALUE:g}")
        return cls(table[:, 1:], table[:, 0], loop, char_desc, path=resolved, vel_smoothing=vel_smoothing)

    def _validate(self):
        where = self.path
        if self.loop not in LOOP_TYPES:
            raise MotionError(f"{where}: unknown Loop value {self.loop!r} (expected wrap or none)")
        if len(self.frames) < 2:
            raise MotionError(f"{where}: has {len(self.frames)} frames, expected at least 2")
        if self.frames.shape[1] != self.char_desc.pose_size:
            raise MotionError(f"{where}: frames hold {self.frames.shape[1]} pose numbers, "
                              f"expected {self.char_desc.pose_size}")
        bad = np.flatnonzero(~np.isfinite(self.frames).all(axis=1) | ~np.isfinite(self.frame_durations))
        if len(bad):
            raise MotionError(f"{where}: frame {bad[0]} holds a value that is not finite")
        bad = np.flatnonzero(self.frame_durations[:-1] <= 0.0)
        if len(bad):
            raise MotionError(f"{where}: frame {bad[0]} has duration {self.frame_durations[bad[0]]}, "
                              "expected > 0")

    def _normalize_quats(self):
        quats = self.frames[:, self._quat_cols]
        norms = np.linalg.norm(quats, axis=-1)
        bad = np.argwhere(norms < 1e-6)
        if len(bad):
            frame, k = bad[0]
            raise MotionError(f"{self.path}: frame {frame} has a zero quaternion at columns "
                              f"{1 + self._quat_cols[k, 0]}-{4 + self._quat_cols[k, 0]}")
        self.frames[:, self._quat_cols] = quats / norms[..., None]

    def _build_slerp_tables(self):
        """Per frame interval: both end quaternions on the same hemisphere, their angle, 1/sin."""
        quats = self.frames[:, self._quat_cols]
        q0, q1 = quats[:-1], quats[1:]
        q1 = np.where(np.sum(q0 * q1, axis=-1, keepdims=True) < 0.0, -q1, q1)
        # exact for small angles, unlike arccos of the dot product
        half = np.arctan2(np.linalg.norm(q1 - q0, axis=-1), np.linalg.norm(q1 + q0, axis=-1))
        self._slerp_q0, self._slerp_q1 = q0, q1
        self._slerp_angle = np.maximum(2.0 * half, _MIN_SLERP_ANGLE)
        self._slerp_inv_sin = 1.0 / np.sin(self._slerp_angle)

    def _build_vel_frames(self):
        desc = self.char_desc
        f0, f1 = self.frames[:-1], self.frames[1:]
        dt = self.frame_durations[:-1, None]
        vel = np.zeros((self.num_frames, desc.dof_size))
        vel[:-1, 0:3] = (f1[:, 0:3] - f0[:, 0:3]) / dt
        vel[:-1, 3:6] = math_util.quat_ang_vel(f0[:, 3:7], f1[:, 3:7], dt)
        for joint in desc.joints[1:]:
            p, d = desc.param_offset[joint.id], desc.dof_offset[joint.id]
            if joint.type is JointType.SPHERICAL:
                vel[:-1, d:d + 3] = math_util.quat_ang_vel_local(f0[:, p:p + 4], f1[:, p:p + 4], dt)
            elif joint.type is JointType.REVOLUTE:
                vel[:-1, d] = (f1[:, p] - f0[:, p]) / dt[:, 0]
        vel[-1] = vel[-2]
        return vel

    def _index_phase(self, time):
        """(frame index i, blend in [0, 1] towards frame i+1, cycle count) at `time`."""
        if self.loop == "wrap":
            cycle = math.floor(time / self.duration)
            time -= cycle * self.duration
        else:
            cycle = 0
            time = min(max(time, 0.0), self.duration)
        idx = min(max(bisect.bisect_right(self._frame_times, time) - 1, 0), self.num_frames - 2)
        phase = (time - self._frame_times[idx]) / self.frame_durations[idx]
        return idx, min(max(phase, 0.0), 1.0), cycle

    def calc_frame(self, time):
        """Pose (pose_size,) at `time` (seconds from the clip start)."""
        idx, phase, cycle = self._index_phase(time)
        pose = self.frames[idx] + phase * self._frame_deltas[idx]
        angle = self._slerp_angle[idx]
        inv_sin = self._slerp_inv_sin[idx]
        w0 = np.sin((1.0 - phase) * angle) * inv_sin
        w1 = np.sin(phase * angle) * inv_sin
        pose[self._quat_cols] = w0[:, None] * self._slerp_q0[idx] + w1[:, None] * self._slerp_q1[idx]
        if cycle:
            pose[:3] += cycle * self.cycle_root_offset
        return pose

    def _index_phases(self, times):
        """_index_phase on an array of times: (indices, blends (n, 1), cycle counts)."""
        times = np.asarray(times, dtype=float)
        if self.loop == "wrap":
            cycles = np.floor(times / self.duration)
            times = times - cycles * self.duration
        else:
            cycles = np.zeros_like(times)
            times = np.clip(times, 0.0, self.duration)
        idx = np.clip(np.searchsorted(self.frame_times, times, side="right") - 1, 0, self.num_frames - 2)
        phase = np.clip((times - self.frame_times[idx]) / self.frame_durations[idx], 0.0, 1.0)[:, None]
        return idx, phase, cycles

    def calc_frames(self, times):
        """Poses (len(times), pose_size) at several times at once: calc_frame's maths on arrays."""
        idx, phase, cycles = self._index_phases(times)
        poses = self.frames[idx] + phase * self._frame_deltas[idx]
        angle, inv_sin = self._slerp_angle[idx], self._slerp_inv_sin[idx]
        w0 = np.sin((1.0 - phase) * angle) * inv_sin
        w1 = np.sin(phase * angle) * inv_sin
        poses[:, self._quat_cols] = w0[..., None] * self._slerp_q0[idx] + w1[..., None] * self._slerp_q1[idx]
        poses[:, :3] += cycles[:, None] * self.cycle_root_offset
        return poses

    def calc_vels(self, times):
        """Velocities (len(times), dof_size) at several times at once: calc_vel on arrays."""
        idx, phase, _ = self._index_phases(times)
        return self.vel_frames[idx] + phase * self._vel_deltas[idx]

    def calc_vel(self, time):
        """Velocity (dof_size,) at `time`: keyframe finite differences, interpolated linearly."""
        idx, phase, _ = self._index_phase(time)
        return self.vel_frames[idx] + phase * self._vel_deltas[idx]

    def calc_phase(self, time):
        """(time / duration) mod 1, in [0, 1)."""
        phase = (time / self.duration) % 1.0
        return phase if phase < 1.0 else 0.0

    def calc_cycle_count(self, time):
        """Whole cycles completed at `time` (0 for a 'none' clip)."""
        return math.floor(time / self.duration) if self.loop == "wrap" else 0


def smooth_vel_frames(vel_frames, sigma, wrap):
    """Keyframe velocities (N, dofs), each keyframe f < N - 1 the finite difference of interval f
    (the last a copy of the one before), smoothed over the intervals by a Gaussian of standard
    deviation sigma intervals (cut at 3 sigma); wrap: the N - 1 intervals are a cycle, else the
    first and last are repeated beyond the ends. The last keyframe copies the one before again."""
    diffs = vel_frames[:-1]
    radius = max(1, int(math.ceil(3.0 * sigma)))
    weights = np.exp(-0.5 * (np.arange(-radius, radius + 1) / sigma) ** 2)
    weights /= weights.sum()
    count = len(diffs)
    index = np.arange(count)[:, None] + np.arange(-radius, radius + 1)
    index = np.mod(index, count) if wrap else np.clip(index, 0, count - 1)
    smoothed = np.einsum("k,nkd->nd", weights, diffs[index])
    return np.concatenate([smoothed, smoothed[-1:]])
