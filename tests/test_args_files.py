"""Every shipped argument file parses and names files that exist."""
from pathlib import Path

import pytest

from util.arg_parser import load_args
from util.paths import project_root, resolve_data_path

ARG_FILES = sorted((project_root() / "args").glob("*.txt"))
FILE_KEYS = ["character_file", "character_files", "char_ctrl_files", "motion_file", "terrain_file",
             "agent_files"]
CLIPS = ["backflip", "cartwheel", "crawl", "dance_a", "dance_b", "getup_facedown", "getup_faceup",
         "jump", "kick", "punch", "roll", "run", "spin", "spinkick", "walk"]


def test_train_and_run_files_for_every_clip():
    names = {p.name for p in ARG_FILES}
    for clip in CLIPS:
        assert f"train_humanoid3d_{clip}_args.txt" in names
        assert f"run_humanoid3d_{clip}_args.txt" in names
    assert "kin_char_args.txt" in names


@pytest.mark.parametrize("path", ARG_FILES, ids=lambda p: p.name)
def test_arg_file_parses_and_its_files_exist(path):
    args = load_args(["--arg_file", str(path)])
    assert args.parse_string("scene", required=True)
    for key in FILE_KEYS:
        for name in args.parse_strings(key):
            if name != "none":
                assert resolve_data_path(name).is_file(), f"{path.name}: --{key} {name}"
    for name in args.parse_strings("init_model_files"):
        assert resolve_data_path(name + ".index").is_file(), f"{path.name}: --init_model_files {name}"


@pytest.mark.parametrize("clip", ["walk", "backflip", "jump", "spinkick"])
def test_pretrained_run_files_point_at_the_wheel_checkpoints(clip):
    args = load_args(["--arg_file", str(project_root() / "args" / f"run_humanoid3d_{clip}_args.txt")])
    assert args.parse_bool("train_agents") is False
    model = args.parse_strings("model_files")[0]
    assert resolve_data_path(model + ".index").is_file()


# The file names of DeepMimic's args/ directory (xbpeng/DeepMimic @1f915c5: 98 files).
DEEPMIMIC_ARGS_LIST = Path(__file__).parent / "data" / "deepmimic_args_files.txt"


def test_every_deepmimic_args_file_exists_under_its_name():
    theirs = DEEPMIMIC_ARGS_LIST.read_text().split()
    assert len(theirs) == 98
    assert sorted(set(theirs) - {p.name for p in ARG_FILES}) == []
