"""Every args file in args/ (the directory listing, so files added later are swept too) builds its
world (DeepMimicEnv + RLWorld with its agents, the pretrained checkpoint loaded where one ships)
and runs two frames, reading every key it gives (none is reported unused); a file whose clips are not shipped (DeepMimic's motions/sie, amass, long,
fetched by `make data-extra`) must fail with one line naming the missing clip and the make target.
Nothing is skipped: an unknown scene or any other missing file fails the test.

About 0.1-2 s per file, some 40 s for the 95 files here; if the listing grows past about 60 s,
move all but a representative subset under @pytest.mark.slow.
"""
import json

import pytest

from app.build import build_world
from app.rollout import WorldEvent, update_world
from env.anim.character import CharacterDesc
from env.scenes.imitate_amp import MotionSet
from util.arg_parser import load_args
from util.entry_keys import ENTRY_POINT_KEYS
from util.paths import ExtraDataNotFound, is_extra_data, project_root, resolve_data_path

ARG_FILES = sorted((project_root() / "args").glob("*.txt"))
FRAMES = 2


def clip_paths(args):
    """The clips an args file's motion_file names (a dataset's entries with kin_ctrl clips)."""
    motion_file = args.parse_string("motion_file")
    if not motion_file:
        return []
    if args.parse_string("kin_ctrl") != "clips":
        return [motion_file]
    data = json.loads(resolve_data_path(motion_file).read_text())
    return [entry["File"] for entry in data["Motions"]]


def first_missing(paths):
    for path in paths:
        try:
            resolve_data_path(path)
        except FileNotFoundError:
            return path
    return None


def check_args_file(path, out_dir):
    args = load_args(["--arg_file", str(path), "--output_path", str(out_dir), "--int_output_path", "",
                      "--tensorboard", "false", "--rand_seed", "1"])
    models = args.parse_strings("model_files")
    if models and first_missing([models[0] + ".index"]):
        args.set("model_files", "none")     # a run file for a policy trained here (output/...)
    missing = first_missing(clip_paths(args))
    if missing is not None:
        assert is_extra_data(missing), f"{path.name}: {missing} is neither shipped nor fetched by make data-extra"
        with pytest.raises(FileNotFoundError) as err:
            build_world(args)
        message = str(err.value)
        assert "\n" not in message and missing in message and "`make data-extra`" in message
        return
    world = build_world(args)
    try:
        assert args.unused_keys(ENTRY_POINT_KEYS) == [], args.unused_warning(ENTRY_POINT_KEYS)
        events = [update_world(world, 1 / 30) for _ in range(FRAMES)]
        # time went on, or an episode ended (a fall: the world reset the env to time 0)
        assert world.env.get_time() > 0 or any(event != WorldEvent.NONE for event in events)
    finally:
        world.shutdown()


def test_the_listing_holds_every_kind():
    names = {p.name for p in ARG_FILES}
    assert {"kin_char_args.txt", "train_humanoid3d_walk_args.txt", "train_amp_humanoid3d_walk_args.txt",
            "train_amp_heading_getup_humanoid3d_locomotion_getup_args.txt",
            "train_amp_heading_humanoid3d_zombie_args.txt"} <= names


@pytest.mark.parametrize("path", ARG_FILES, ids=lambda p: p.name)
def test_args_file_runs(path, tmp_path):
    check_args_file(path, tmp_path)


def test_unknown_scene_fails_the_sweep(tmp_path):
    walk = (project_root() / "args/train_humanoid3d_walk_args.txt").read_text()
    bad = tmp_path / "train_bad_args.txt"
    bad.write_text(walk.replace("--scene imitate", "--scene no_such_scene"))
    with pytest.raises(ValueError, match="--scene 'no_such_scene' is not one of"):
        check_args_file(bad, tmp_path)


def test_sie_clip_absent_fails_with_one_line(tmp_path):
    clip = "data/motions/sie/sie_humanoid3d_run_forward00.txt"
    if (project_root() / clip).is_file():
        pytest.skip(f"{clip} was fetched (make data-extra)")
    walk = (project_root() / "args/train_amp_target_humanoid3d_locomotion_args.txt").read_text()
    arg_file = tmp_path / "train_amp_target_sie_args.txt"
    arg_file.write_text(walk.replace("data/datasets/dataset_locomotion.txt",
                                     "data/datasets/humanoid3d_clips_locomotion.txt"))
    with pytest.raises(FileNotFoundError) as err:
        build_world(load_args(["--arg_file", str(arg_file), "--output_path", str(tmp_path)]))
    dataset = project_root() / "data/datasets/humanoid3d_clips_locomotion.txt"
    assert str(err.value) == (f"{dataset}: Motions[1]: data file not found: {clip} (not shipped with the project: "
                              "`make data-extra` downloads it, see data/README.md)")


def test_a_dataset_naming_an_unfetched_clip_raises_extra_data_not_found(tmp_path):
    """The type survives the dataset's message (the slow suite skips on it, before `make data-extra`)."""
    dataset = tmp_path / "dataset.txt"
    dataset.write_text(json.dumps({"Motions": [{"File": "data/motions/sie/no_such_clip.txt", "Weight": 1}]}))
    with pytest.raises(ExtraDataNotFound, match=r"dataset.txt: Motions\[0\]: data file not found: "
                                                 r"data/motions/sie/no_such_clip.txt \(not shipped"):
        MotionSet.load(str(dataset), CharacterDesc.load("data/characters/humanoid3d.txt"))
