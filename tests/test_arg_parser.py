import re

import pytest

from util.arg_parser import ArgError, ArgParser, load_args


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def test_command_line_overrides_arg_file(tmp_path):
    f = write(tmp_path, "a.txt", "--scene imitate\n--world_scale 4\n--fall_contact_bodies 0 1 2\n")
    args = load_args(["--world_scale", "2", "--arg_file", f])
    assert args.parse_float("world_scale") == 2.0
    assert args.parse_string("scene") == "imitate"
    assert args.parse_ints("fall_contact_bodies") == [0, 1, 2]


def test_first_occurrence_wins_within_a_file(tmp_path):
    f = write(tmp_path, "a.txt", "--num_update_substeps 10\n--num_update_substeps 20\n")
    assert load_args(["--arg_file", f]).parse_int("num_update_substeps") == 10


def test_comments_and_blank_lines_are_ignored(tmp_path):
    f = write(tmp_path, "a.txt", "# a comment\n\n   #--train_agents false\n--model_files a.ckpt # trailing\n")
    args = load_args(["--arg_file", f])
    assert not args.has_key("train_agents")
    assert args.parse_strings("model_files") == ["a.ckpt"]


def test_negative_numbers_are_values_not_keys():
    args = load_args(["--gravity", "0", "-9.8", "0", "--x", "-1e-3"])
    assert args.parse_floats("gravity") == [0.0, -9.8, 0.0]
    assert args.parse_float("x") == -1e-3


def test_bools_and_defaults():
    args = load_args(["--a", "true", "--b", "False", "--c", "0", "1"])
    assert args.parse_bool("a") is True
    assert args.parse_bool("b") is False
    assert args.parse_bools("c") == [False, True]
    assert args.parse_bool("missing", default=True) is True
    assert args.parse_floats("missing", default=[1.0]) == [1.0]


def test_missing_arg_file_names_the_file(tmp_path):
    with pytest.raises(ArgError, match="nope.txt: argument file not found"):
        load_args(["--arg_file", str(tmp_path / "nope.txt")])


def test_missing_required_key_names_it():
    with pytest.raises(ArgError, match="missing required argument --scene"):
        ArgParser().parse_string("scene", required=True)


def test_wrong_type_names_file_and_key(tmp_path):
    f = write(tmp_path, "bad.txt", "--num_sim_substeps two\n")
    with pytest.raises(ArgError) as err:
        load_args(["--arg_file", f]).parse_int("num_sim_substeps")
    assert "bad.txt" in str(err.value) and "--num_sim_substeps" in str(err.value) and "'two'" in str(err.value)
    with pytest.raises(ArgError, match="--flag expects true or false"):
        load_args(["--flag", "maybe"]).parse_bool("flag")


def test_value_before_key_is_an_error():
    with pytest.raises(ArgError, match="before any --key"):
        load_args(["oops", "--a", "1"])


def test_to_lines_round_trip(tmp_path):
    args = load_args(["--scene", "imitate", "--gravity", "0", "-9.8", "0"])
    f = write(tmp_path, "copy.txt", "\n".join(args.to_lines()))
    again = load_args(["--arg_file", f])
    assert again.parse_floats("gravity") == [0.0, -9.8, 0.0]
    assert again.parse_string("scene") == "imitate"


@pytest.mark.parametrize("key,vals,message", [
    ("world_scale", ["nan"], "--world_scale expects a number, got 'nan'"),
    ("world_scale", ["inf"], "--world_scale inf: must be finite"),
    ("world_scale", ["0"], "--world_scale 0.0: must be > 0.0"),
    ("gravity", ["0", "-9.8"], "--gravity expects 3 numbers, got 2"),
    ("gravity", ["inf", "0", "0"], "--gravity inf: must be finite"),
    ("time_lim_min", ["-1"], "--time_lim_min -1.0: must be >= 0.0"),
    ("time_end_lim_exp", ["-2"], "--time_end_lim_exp -2.0: must be >= 0.0"),
    ("char_init_pos_xs", ["inf"], "--char_init_pos_xs inf: must be finite"),
    ("perturb_part_ids", ["15"], "--perturb_part_ids: body id 15 is not in [0, 14]"),
    ("min_perturb", ["-5"], "--min_perturb -5.0: must be >= 0.0"),
    ("max_perturb_duration", ["inf"], "--max_perturb_duration inf: must be finite"),
    ("rand_seed", ["-1"], "--rand_seed -1: must be >= 0"),
    ("pose_termination_dist", ["-0.5"], "--pose_termination_dist -0.5: must be >= 0.0"),
])
def test_world_numbers_are_validated(key, vals, message):
    """The world's numeric arguments (rates, scales, sizes, limits): one line naming key and value."""
    from env.deepmimic_env import DeepMimicEnv

    with pytest.raises(ValueError, match=re.escape(message)):     # ArgError is a ValueError
        DeepMimicEnv(load_args(["--arg_file", "args/train_humanoid3d_walk_args.txt", f"--{key}", *vals]))
