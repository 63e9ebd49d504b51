"""The controller file (data/controllers/*.txt): DeepMimic's ct_pd controller parameters.

JSON keys (all required unless a default is given):
  Layout              "2021" (state 227/226 with normal/tangent rotations, action 28 exp maps) or
                      "2018" (state 197 with quaternions, action 36 angle-axis; the pybullet
                      wheel's pretrained policies)
  QueryRate           policy decisions per second of controller time (default 30)
  EnablePhaseInput    prepend the motion phase to the state (default true)
  RecordWorldRootPos  root body position in world axes instead of the heading frame (default false)
  RecordWorldRootRot  root body rotation and velocities in world axes (default false)
  PDMode              "tree" (DeepMimic's stable PD with its per-joint length clamp on our compiled
                      M and C, which match pybullet's simulation; the default), "exact" (the same
                      formula in numpy on pybullet's calculateMassMatrix, which does not) or
                      "builtin" (pybullet's stable PD, per-component clamp); see
                      env/sim/pd_controller.py
  PDControllers       one entry per joint, in id order: {"ID", "Name", "Kp", "Kd"} (unscaled gains;
                      torque limits come from the character file). Layout 2018 also needs
                      "AxisAngleLim": [low, high] on spherical joints: the angle range DeepMimic
                      derived the 2018 action offset/scale/bounds from (its joint limits).
"""
from dataclasses import dataclass

import numpy as np

from env.anim.character import JointType
from env.sim.pd_controller import PD_MODES
from util.paths import load_json

LAYOUTS = ("2021", "2018")
_DEFAULTS = {"QueryRate": 30.0, "EnablePhaseInput": True, "RecordWorldRootPos": False,
             "RecordWorldRootRot": False, "PDMode": "tree"}
_KEYS = {"Layout", "PDControllers"} | set(_DEFAULTS)
_JOINT_KEYS = {"ID", "Name", "Kp", "Kd", "AxisAngleLim"}


@dataclass(frozen=True)
class CtrlParams:
    layout: str
    query_rate: float
    enable_phase_input: bool
    record_world_root_pos: bool
    record_world_root_rot: bool
    pd_mode: str
    kp: np.ndarray              # (num_joints,)
    kd: np.ndarray              # (num_joints,)
    axis_angle_lim: dict        # joint id -> (low, high), layout 2018 only

    def layout_desc(self):
        """The Env API's layout description (Env.get_layout_desc) of this controller's states and
        actions."""
        return {"layout": self.layout, "enable_phase_input": self.enable_phase_input,
                "record_world_root_pos": self.record_world_root_pos,
                "record_world_root_rot": self.record_world_root_rot}

    @classmethod
    def load(cls, path, char_desc):
        path, data = load_json(path)
        if not isinstance(data, dict):
            raise ValueError(f"{path}: expected a JSON object")

        def fail(key, problem):
            raise ValueError(f"{path}: key '{key}' {problem}")

        for key in data:
            if key not in _KEYS:
                fail(key, f"is unknown (known: {', '.join(sorted(_KEYS))})")
        vals = {**_DEFAULTS, **data}
        for key, kind in (("Layout", str), ("QueryRate", (int, float)), ("EnablePhaseInput", bool),
                          ("RecordWorldRootPos", bool), ("RecordWorldRootRot", bool), ("PDMode", str),
                          ("PDControllers", list)):
            if key not in vals:
                fail(key, "is missing")
            if not isinstance(vals[key], kind) or (kind != bool and isinstance(vals[key], bool)):
                fail(key, f"has value {vals[key]!r} of the wrong type")
        if vals["Layout"] not in LAYOUTS:
            fail("Layout", f"is {vals['Layout']!r}, expected one of {', '.join(LAYOUTS)}")
        if vals["PDMode"] not in PD_MODES:
            fail("PDMode", f"is {vals['PDMode']!r}, expected one of {', '.join(PD_MODES)}")
        if vals["QueryRate"] <= 0:
            fail("QueryRate", f"is {vals['QueryRate']}, expected > 0")

        entries = vals["PDControllers"]
        if len(entries) != char_desc.num_joints:
            fail("PDControllers", f"has {len(entries)} entries for {char_desc.num_joints} joints")
        kp, kd, lims = np.zeros(char_desc.num_joints), np.zeros(char_desc.num_joints), {}
        for i, (entry, joint) in enumerate(zip(entries, char_desc.joints)):
            where = f"PDControllers[{i}]"
            if not isinstance(entry, dict):
                fail(where, "is not a JSON object")
            for key in entry:
                if key not in _JOINT_KEYS:
                    fail(f"{where}.{key}", "is unknown")
            if entry.get("ID") != i:
                fail(f"{where}.ID", f"is {entry.get('ID')!r}, expected {i} (joints in id order)")
            for key in ("Kp", "Kd"):
                value = entry.get(key)
                if not isinstance(value, (int, float)) or isinstance(value, bool) or value < 0:
                    fail(f"{where}.{key}", f"is {value!r}, expected a number >= 0")
            kp[i], kd[i] = entry["Kp"], entry["Kd"]
            if vals["Layout"] == "2018" and joint.type is JointType.SPHERICAL:
                lim = entry.get("AxisAngleLim")
                if (not isinstance(lim, list) or len(lim) != 2
                        or not all(isinstance(v, (int, float)) for v in lim) or lim[0] > lim[1]):
                    fail(f"{where}.AxisAngleLim", f"is {lim!r}, expected [low, high] for layout 2018")
                lims[i] = (float(lim[0]), float(lim[1]))
        return cls(layout=vals["Layout"], query_rate=float(vals["QueryRate"]),
                   enable_phase_input=vals["EnablePhaseInput"],
                   record_world_root_pos=vals["RecordWorldRootPos"],
                   record_world_root_rot=vals["RecordWorldRootRot"], pd_mode=vals["PDMode"],
                   kp=kp, kd=kd, axis_angle_lim=lims)
