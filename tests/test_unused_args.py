"""Arguments given but read by nobody (typos) get one warning line with the closest known key;
keys another entry point reads, and keys an entry point sets itself, are not reported."""
import copy

from DeepMimic import ViewerOptions
from DeepMimic_Optimizer import main as optimizer_main
from util.arg_parser import ArgParser, load_args
from util.entry_keys import ENTRY_POINT_KEYS, VIEWER_KEYS
from util.paths import project_root

WALK_ARGS = str(project_root() / "args/train_humanoid3d_walk_args.txt")


def parser_with(text, tmp_path):
    arg_file = tmp_path / "x_args.txt"
    arg_file.write_text(text)
    return load_args(["--arg_file", str(arg_file)]), arg_file


def test_a_typo_is_named_with_its_file_and_the_closest_key(tmp_path):
    args, arg_file = parser_with("--time_lim_min 3\n--tme_lim_max 4\n--zzz 1\n", tmp_path)
    assert args.parse_float("time_lim_min") == 3.0
    args.parse_float("time_lim_max", 5.0)
    assert args.unused_keys() == ["tme_lim_max", "zzz"]
    assert args.unused_warning() == (f"warning: {arg_file}: unused argument --tme_lim_max (did you mean "
                                     f"--time_lim_max?); {arg_file}: unused argument --zzz")


def test_known_program_set_and_queried_keys_are_not_reported(tmp_path):
    args, _ = parser_with("--max_samples 10\n--rand_seed 3\n--flag\n", tmp_path)
    args.set("derived", 1)
    assert args.has_key("flag")
    assert args.unused_keys() == ["max_samples", "rand_seed"]
    assert args.unused_keys(ENTRY_POINT_KEYS) == ["rand_seed"]
    assert args.unused_warning(ENTRY_POINT_KEYS).endswith("unused argument --rand_seed")


def test_a_copy_records_reads_on_the_original(tmp_path):
    args, _ = parser_with("--motion_file a.txt\n", tmp_path)
    dup = copy.copy(args)
    dup.table = dict(args.table)
    dup.parse_string("motion_file")
    assert args.unused_keys() == []


def test_viewer_keys_are_those_the_viewer_options_read():
    parser = ArgParser()
    ViewerOptions.parse(parser)
    assert parser.asked == VIEWER_KEYS


def test_the_optimizer_warns_once_after_building_the_world(tmp_path, capsys):
    status = optimizer_main(["--arg_file", WALK_ARGS, "--max_iters", "0", "--output_path", str(tmp_path),
                             "--int_output_path", "", "--tensorboard", "false", "--model_files", "none",
                             "--tme_lim_min", "3", "--msaa", "8"])
    assert status == 0
    warnings = [line for line in capsys.readouterr().err.splitlines() if line.startswith("warning:")]
    assert warnings == ["warning: command line: unused argument --tme_lim_min (did you mean --time_lim_min?)"]
