"""Both sides of the reference-core tests: DeepMimic's core in its own process (CoreProcess, over
core_server.py) and our DeepMimicEnv in this one (OurSide), each configured from its own
argument file plus the same overrides, each with the same random draws pinned.

Configuration (Case): a scene's argument file on each side (ours: this repository's args/, theirs:
the checkout's args/), the controller layout (phase input, world root position/rotation) written
into a temporary copy of each side's own controller file, the overrides both get (time limits
raised, so only falls end an episode early), and the pins.
"""
import json
import math
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from tests.reference_core import common

HERE = Path(__file__).resolve().parent
PROJECT = HERE.parents[1]
TIME_LIMIT = 20.0           # seconds: far beyond the ~1 s the tests run
APT_PACKAGES = "libbullet-dev libeigen3-dev swig libglew-dev freeglut3-dev python3.11-dev g++ make patch"
CLIPS = ("walk", "run", "backflip", "cartwheel", "jump", "spinkick")

# Controller layouts: (EnablePhaseInput, RecordWorldRootPos, RecordWorldRootRot)
LAYOUTS = {
    "phase_rot": (True, False, True),    # our humanoid3d_ctrl.txt, their humanoid3d_phase_rot_ctrl.txt
    "rot": (False, False, True),         # our humanoid3d_amp_ctrl.txt, their humanoid3d_rot_ctrl.txt
    "plain": (False, False, False),      # their humanoid3d_ctrl.txt (their task args use it)
    "phase": (True, False, False),
    "world_pos_rot": (True, True, True),
}


class CoreError(RuntimeError):
    pass


def checkout_path():
    path = os.environ.get("DEEPMIMIC")
    return Path(path).resolve() if path else None


def build_core(checkout):
    """tests/reference_core/build_core.sh (cached): the build folder."""
    proc = subprocess.run(["bash", str(HERE / "build_core.sh"), str(checkout), sys.executable],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if proc.returncode != 0:
        raise CoreError(f"building DeepMimic's core failed:\n{proc.stderr}")
    return Path(proc.stdout.strip().splitlines()[-1])


class CoreProcess:
    """core_server.py in a child process; request() sends one command and returns its reply."""

    def __init__(self, build_dir, checkout):
        self.log = tempfile.NamedTemporaryFile("w+", prefix="deepmimic_core_", suffix=".log", delete=False)
        self.proc = subprocess.Popen([sys.executable, str(HERE / "core_server.py"), str(build_dir), str(checkout)],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.log, text=True,
                                     env={**os.environ, "PYTHONUNBUFFERED": "1"})

    def request(self, cmd, **kwargs):
        self.proc.stdin.write(json.dumps({"cmd": cmd, **kwargs}) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            self.log.flush()
            tail = Path(self.log.name).read_text()[-3000:]
            raise CoreError(f"DeepMimic's core process ended (exit {self.proc.poll()}); its stderr:\n{tail}")
        reply = json.loads(line)
        if "error" in reply:
            raise CoreError(reply["error"])
        return reply["ok"]

    def close(self):
        if self.proc.poll() is None:
            try:
                self.request("quit")
            except (CoreError, OSError):
                pass
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
        self.log.close()
        os.unlink(self.log.name)


class PinnedRng:
    """Our scene's numpy Generator with some uniform draws fixed: a uniform(low, high) call whose
    bounds are pinned returns the pinned value (which must lie within them) and counts the use."""

    def __init__(self, rng):
        self._rng = rng
        self.pins = {}
        self.used = {}

    def uniform(self, low=0.0, high=1.0, size=None):
        key = (float(low), float(high))
        if size is None and key in self.pins:
            name, value = self.pins[key]
            assert low <= value <= high, f"pinned {name} {value} outside [{low}, {high}]"
            self.used[name] = self.used.get(name, 0) + 1
            return value
        return self._rng.uniform(low, high, size)

    def __getattr__(self, name):
        return getattr(self._rng, name)


@dataclass
class Case:
    """One configuration of both sides. ours/theirs: argument files relative to each project root."""
    name: str
    ours: str
    theirs: str
    layout: str = "phase_rot"
    overrides: list = field(default_factory=list)      # args both sides get
    ours_extra: list = field(default_factory=list)      # only ours (e.g. a dataset path)
    theirs_extra: list = field(default_factory=list)
    amp: bool = False
    time_limit: float | None = TIME_LIMIT       # every time_lim / time_end_lim bound (None: the files' own)
    mode: int = 0                                      # Mode.TRAIN; 1: TEST
    clip: str = ""    # imitate scenes: both sides load the checkout's data/motions/humanoid3d_<clip>.txt


def _ctrl_file(base, layout, tmpdir, tag):
    phase, world_pos, world_rot = LAYOUTS[layout]
    data = json.loads(Path(base).read_text())
    data.update(EnablePhaseInput=phase, RecordWorldRootPos=world_pos, RecordWorldRootRot=world_rot)
    path = Path(tmpdir) / f"{tag}_{layout}_ctrl.txt"
    path.write_text(json.dumps(data, indent=1))
    return str(path)


def _limits(case):
    if case.time_limit is None:
        return []
    lim = str(case.time_limit)
    return ["--time_lim_min", lim, "--time_lim_max", lim, "--time_end_lim_min", lim, "--time_end_lim_max", lim]


def our_args(case, checkout, tmpdir):
    """Our argv: our arg file behind the shared overrides. With a checkout, the clip is the
    checkout's (the pybullet wheel's spinkick has another root heading); without one (checkout
    None), the clip our file names."""
    ctrl = _ctrl_file(PROJECT / "data/controllers/humanoid3d_ctrl.txt", case.layout, tmpdir, "ours")
    clip = (["--motion_file", str(Path(checkout) / f"data/motions/humanoid3d_{case.clip}.txt")]
            if case.clip and checkout is not None else [])
    return [*_limits(case), *case.overrides, *case.ours_extra, *clip, "--char_ctrl_files", ctrl,
            "--arg_file", str(PROJECT / case.ours)]


def case_args(case, checkout, tmpdir):
    """(our argv, their argv): each side's own arg file behind the shared overrides."""
    ctrl = _ctrl_file(Path(checkout) / "data/controllers/humanoid3d_ctrl.txt", case.layout, tmpdir, "theirs")
    theirs = [*_limits(case), *case.overrides, *case.theirs_extra, "--char_ctrl_files", ctrl,
              "--arg_file", case.theirs]
    return our_args(case, checkout, tmpdir), theirs


class OurSide:
    """Our DeepMimicEnv for a case, with the PinnedRng in its scene."""

    def __init__(self, argv):
        from env.deepmimic_env import DeepMimicEnv
        from util.arg_parser import load_args
        self.env = DeepMimicEnv(load_args(argv), seed=0)
        self.rng = PinnedRng(self.env.rng)
        self.env.rng = self.rng
        self.env.perturber.rng = self.rng

    def set_pins(self, reset_time=None, reset_heading=None, expert_time=None, target_dist=None, target_theta=None):
        scene = self.env
        pins = {}
        if reset_time is not None:
            pins[(0.0, float(scene.motion.duration))] = ("reset_time", reset_time)
        if expert_time is not None:
            pins[(0.0, float(scene.motion.duration))] = ("expert_time", expert_time)
        if reset_heading is not None:
            pins[(-math.pi, math.pi)] = ("reset_heading", reset_heading)
        if target_dist is not None:
            pins[(0.0, float(scene.max_target_dist))] = ("target_dist", target_dist)
        if target_theta is not None:
            pins[(0.0, 2 * math.pi)] = ("target_theta", target_theta)
        self.rng.pins, self.rng.used = pins, {}

    def layout(self):
        return common.layout(self.env)

    def reset(self):
        self.env.reset()

    def rollout(self, actions, amp=False, amp_at_reset=False):
        return common.rollout(self.env, actions, amp=amp, amp_at_reset=amp_at_reset)

    def call(self, name, *args):
        out = getattr(self.env, name)(*args)
        return np.asarray(out).tolist() if isinstance(out, np.ndarray) else out

    def close(self):
        self.env.shutdown()


class TheirSide:
    """The core for a case, in the shared CoreProcess."""

    def __init__(self, core, argv):
        self.core = core
        core.request("init", args=argv)

    def set_pins(self, **pins):
        self.core.request("pins", pins={k: pins.get(k) for k in common.PIN_ENV_VARS})

    def layout(self):
        return self.core.request("layout")

    def reset(self):
        self.core.request("call", name="reset")

    def rollout(self, actions, amp=False, amp_at_reset=False):
        return self.core.request("rollout", actions=actions, amp=amp, amp_at_reset=amp_at_reset)

    def call(self, name, *args):
        return self.core.request("call", name=name, args=list(args))

    def close(self):
        pass


def max_abs(a, b):
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    assert a.shape == b.shape, f"shapes differ: ours {a.shape}, theirs {b.shape}"
    return float(np.max(np.abs(a - b))) if a.size else 0.0
