"""The configurations the reference-core tests and report.py run, both sides' files named.

Each side reads its own argument file (ours under this repository's args/, theirs under the
DeepMimic checkout's args/); both get the same overrides in front (first occurrence wins on both
sides): time limits of 20 s, and the controller file: a temporary copy of each side's own
data/controllers/humanoid3d_ctrl.txt with the layout's three flags set (ours keeps its PD gains and
"PDMode"; theirs its gains). Differences between the files that these cases neutralise:
- imitate: theirs name humanoid3d_phase_rot_ctrl.txt, ours humanoid3d_ctrl.txt (the same flags);
- imitate_amp: theirs humanoid3d_rot_ctrl.txt, ours humanoid3d_amp_ctrl.txt (the same flags);
- heading_amp / target_amp: theirs use humanoid3d_ctrl.txt (no phase, heading-frame root: layout
  "plain"), ours humanoid3d_amp_ctrl.txt (world root rotation: layout "rot"); both are tested.
  Their dataset humanoid3d_clips_locomotion.txt lists clips the pybullet wheel lacks (sie/, long/),
  ours dataset_locomotion.txt is walk + run: both sides get the same one-clip dataset (written by
  the test into a temporary file), so no clip choice is drawn;
- task targets: rand_target_time_min/max 100 s on both sides, so the target never changes within
  a test's second (its redraw is random); heading_amp's speed range collapsed to one value.
Clips: our side loads the checkout's clip file too (--motion_file <checkout>/data/motions/...): the
pybullet wheel's humanoid3d_spinkick.txt (which our args name) is DeepMimic's with the root turned
(root position and rotation columns differ by up to 1.24, every joint column equal; frame 0 faces
heading 0 instead of ~2.8 rad), which world-frame root features see. The other five are identical.
The task datasets name walk and run by relative path: the wheel's and the checkout's are identical.
Their files say --enable_char_soft_contact false (ours has no soft contact) and --kin_ctrl motion
(our default).
"""
import json
from pathlib import Path

from tests.reference_core.harness import CLIPS, Case

NUM_ACTIONS = 30           # decisions per trajectory (1 s)
RESET_TIMES = (0.1, 0.4)   # s into the clip; the trajectory starts from the first
RESET_HEADING = 0.7        # rad (task scenes: enable_rand_rot_reset true)
EXPERT_TIMES = (0.2, 0.55)
TARGET = {"target_dist": 2.0, "target_theta": 1.0}
TASK_OVERRIDES = ["--rand_target_time_min", "100", "--rand_target_time_max", "100",
                  "--tar_speed_min", "1.5", "--tar_speed_max", "1.5"]


def dataset_file(tmpdir, clip):
    path = Path(tmpdir) / f"dataset_{clip}.txt"
    path.write_text(json.dumps({"Motions": [{"Weight": 1, "File": f"data/motions/humanoid3d_{clip}.txt"}]}))
    return str(path)


def imitate_cases():
    """imitate: every clip with our default layout; walk with every other layout."""
    cases = [Case(f"imitate/{clip}/phase_rot", f"args/train_humanoid3d_{clip}_args.txt",
                  f"args/train_humanoid3d_{clip}_args.txt", layout="phase_rot", clip=clip) for clip in CLIPS]
    cases += [Case(f"imitate/walk/{layout}", "args/train_humanoid3d_walk_args.txt",
                   "args/train_humanoid3d_walk_args.txt", layout=layout, clip="walk")
              for layout in ("rot", "plain", "phase", "world_pos_rot")]
    return cases


def amp_cases():
    """imitate_amp: every clip in training mode (reward 0: the AMP observations are compared), and
    walk in test mode with a 0.5 s episode, whose last reward is the time-warping cost."""
    cases = [Case(f"imitate_amp/{clip}/rot", f"args/train_amp_humanoid3d_{clip}_args.txt",
                  f"args/train_amp_humanoid3d_{clip}_args.txt", layout="rot", amp=True, clip=clip)
             for clip in CLIPS]
    cases.append(Case("imitate_amp/walk/rot/test_mode", "args/train_amp_humanoid3d_walk_args.txt",
                      "args/train_amp_humanoid3d_walk_args.txt", layout="rot", amp=True, time_limit=0.5, mode=1,
                      clip="walk"))
    return cases


def task_cases(tmpdir):
    """heading_amp and target_amp on a one-clip dataset (walk for heading, run for target)."""
    cases = []
    for scene, clip in (("heading", "walk"), ("target", "run")):
        dataset = dataset_file(tmpdir, clip)
        for layout in ("rot", "plain"):
            cases.append(Case(f"{scene}_amp/{clip}/{layout}",
                              f"args/train_amp_{scene}_humanoid3d_locomotion_args.txt",
                              f"args/train_amp_{scene}_humanoid3d_locomotion_args.txt", layout=layout,
                              overrides=[*TASK_OVERRIDES, "--motion_file", dataset], amp=True))
    return cases


def task_case_names():
    return [f"{scene}_amp/{clip}/{layout}" for scene, clip in (("heading", "walk"), ("target", "run"))
            for layout in ("rot", "plain")]


def pins_for(case, reset_time):
    pins = {"reset_time": reset_time}
    if case.name.startswith(("heading_amp", "target_amp")):
        pins["reset_heading"] = RESET_HEADING
    if case.name.startswith("target_amp"):
        pins.update(TARGET)
    return pins


def all_cases(tmpdir):
    """{name: Case} of every configuration (task cases write their dataset file into tmpdir)."""
    return {case.name: case for case in imitate_cases() + amp_cases() + task_cases(tmpdir)}


IMITATE_NAMES = [case.name for case in imitate_cases()]
AMP_NAMES = [case.name for case in amp_cases()]
TASK_NAMES = task_case_names()
ALL_NAMES = IMITATE_NAMES + AMP_NAMES + TASK_NAMES
