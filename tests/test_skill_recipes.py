"""app/skill_recipes.py and the recipe's side of app/skill_training.py: every clip of the library
resolves to DeepMimic's per-clip args with the recipe on top; a user's motion file is checked
before anything trains; the discount rule replays the shipped backflip's and cartwheel's hand
schedules from their own curves and leaves the clips that never needed it alone; the fall-weighted
starts rule fires where the spin kept falling and on no clip that stopped; the ship
decision; non-looping clips judged to their end; DeepMimic's run_ files play what ships."""
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

import app.skill_training as skill_training
from app.skill_recipes import (FALL_WEIGHT_ARGS, FAR_AGENT_FILE, FEW_FALLS, PLATEAU_SAMPLES, POSE_TERMINATION_ARGS,
                               RECIPE_AGENT_FILE, RECIPES, ROBUST_EPISODES, STALL_SAMPLES, discount_switch,
                               fall_weight_switch, motion_recipe, recipe_for, ship_point)
from app.skill_config import Criterion, episode_successes, load_or_start, parse_args
from app.skill_training import run
from tests.test_time_to_skill import FakeTrainer, bench_args
from util.arg_parser import ArgParser
from util.paths import resolve_data_path

ROOT = Path(__file__).resolve().parents[1]
HUMANOID = ("walk", "run", "jog", "jump", "backflip", "spinkick", "cartwheel", "crawl", "dance_a", "dance_b",
            "dance_spin", "getup_facedown", "getup_faceup", "kick", "punch", "roll", "spin", "zombie_walk")
DOG = ("canter", "pace", "trot", "spin")


def resolved_args(recipe):
    """The run's arguments as training reads them: the recipe's options first, then the args file."""
    parser = ArgParser()
    parser.load_args(recipe.train_args)
    parser.load_file(ROOT / recipe.arg_file)
    return parser.table


def test_every_clip_deepmimic_ships_a_policy_for_is_a_row():
    assert sorted(RECIPES) == sorted(HUMANOID + tuple(f"dog3d_{c}" for c in DOG))


@pytest.mark.parametrize("name", sorted(RECIPES))
def test_each_row_is_deepmimics_per_clip_file_with_the_recipe_on_top(name):
    recipe = recipe_for(name)
    table = resolved_args(recipe)
    character = "dog3d" if name.startswith("dog3d_") else "humanoid3d"
    assert recipe.character == character and recipe.arg_file == f"args/train_{character}_{recipe.clip}_args.txt"
    assert table["motion_file"] == [f"data/motions/{character}_{recipe.clip}.txt"]
    resolve_data_path(table["motion_file"][0])                          # the clip is at hand
    assert table["character_files"] == [f"data/characters/{character}.txt"]
    # the recipe wins over DeepMimic's curriculum and agent file
    assert table["time_lim_min"] == table["time_lim_max"] == ["20"]
    assert table["agent_files"] == [RECIPE_AGENT_FILE]
    assert table["ref_relative_actions"] == ["true"] and table["tar_obs_steps"] == ["1", "2", "3"]
    assert recipe.package == f"{character}_{recipe.clip}_trained"
    assert recipe.run_args_file == f"args/run_{character}_{recipe.clip}_args.txt"
    assert (ROOT / recipe.run_args_file).is_file()                      # DeepMimic's own run_ file


def test_deepmimics_per_clip_differences_come_through():
    assert resolved_args(recipe_for("crawl"))["fall_contact_bodies"] == ["0", "1", "2"]
    for clip in ("roll", "getup_facedown", "getup_faceup"):
        assert resolved_args(recipe_for(clip))["enable_char_contact_fall"] == ["false"]
    assert "8" not in resolved_args(recipe_for("cartwheel"))["fall_contact_bodies"]
    assert resolved_args(recipe_for("dog3d_trot"))["char_ctrl_files"] == ["data/controllers/dog3d_phase_rot_ctrl.txt"]


def test_clips_without_contact_falls_train_with_pose_termination_and_play_without():
    """The roll and the get-ups (DeepMimic's args: contact falls off) end training and test episodes
    where a body strays 0.8 m from the reference; every other row keeps DeepMimic's falls alone; the
    run_ file written at shipping drops it."""
    from app.skill_package import run_args_text
    contact_free = {name for name in RECIPES if resolved_args(recipe_for(name)).get("enable_char_contact_fall") == ["false"]}
    assert contact_free == {"roll", "getup_facedown", "getup_faceup"}
    for name in RECIPES:
        dist = resolved_args(recipe_for(name)).get("pose_termination_dist")
        assert dist == ([POSE_TERMINATION_ARGS[1]] if name in contact_free else None), name
    assert POSE_TERMINATION_ARGS == ("--pose_termination_dist", "0.8")
    table = resolved_args(recipe_for("roll"))
    text = run_args_text("roll", list(table.items()), "data/policies/x/agent0_model.ckpt", "metadata.json")
    assert "--pose_termination_dist" not in text and "--enable_char_contact_fall false" in text


def test_the_run_file_drops_training_only_starts_and_pushes():
    """A run trained with fall-weighted starts and pushes ships a run_ file without either (test
    resets are DeepMimic's uniform draw whatever the option; the run_ file plays unpushed)."""
    from app.skill_package import run_args_text
    table = {**resolved_args(recipe_for("spin")), "reset_fail_weight": ["0.5"], "enable_rand_perturbs": ["true"]}
    text = run_args_text("spin", list(table.items()), "data/policies/x/agent0_model.ckpt", "metadata.json")
    assert "--reset_fail_weight" not in text and "--enable_rand_perturbs" not in text
    assert "--motion_file data/motions/humanoid3d_spin.txt" in text and "--ref_vel_smoothing 2" in text


def test_a_clip_name_resolves_in_the_skill_command():
    args = parse_args(["--clip", "crawl", "--output", "x"])
    assert args.arg_file == "args/train_humanoid3d_crawl_args.txt"
    assert args.train_args == list(recipe_for("crawl").train_args) and args.ship and args.max_body_pos_err == 0.08
    given = parse_args(["--clip", "crawl", "--output", "x", "--train_args", "--agent_files", "mine.txt"])
    assert given.train_args[:2] == ["--agent_files", "mine.txt"]     # first: it wins over the recipe's


def test_a_run_begun_with_an_earlier_recipe_goes_on_with_its_own_arguments(tmp_path, capsys):
    """The recipe's arguments are the recipe's, not the user's: a clip's run whose curve holds an
    earlier recipe's (here without --ref_vel_smoothing) resumes with those and says so; arguments
    the user gives are still held to the run's, in one line."""
    out = tmp_path / "crawl"
    out.mkdir()
    earlier = recipe_for("crawl").train_args[:-2]
    assert earlier + ["--ref_vel_smoothing", "2"] == recipe_for("crawl").train_args
    cfg, curve = load_or_start(parse_args(["--clip", "crawl", "--output", str(out)]))
    curve["config"]["train_args"] = earlier
    (out / "time_to_skill.json").write_text(json.dumps(curve))
    cfg, _ = load_or_start(parse_args(["--clip", "crawl", "--output", str(out)]))
    assert cfg.train_args == earlier
    assert "goes on with the training arguments it began with" in capsys.readouterr().out
    with pytest.raises(SystemExit, match="a run keeps its training arguments"):
        load_or_start(parse_args(["--clip", "crawl", "--output", str(out), "--train_args", "--ref_vel_smoothing", "0"]))


def skill(*argv, cwd=ROOT):
    return subprocess.run([sys.executable, "scripts/train_skill.py", *argv], cwd=cwd, capture_output=True, text=True,
                          timeout=120)


@pytest.mark.parametrize("argv, message", [
    (["--clip", "moonwalk"], "train_skill: CLIP=moonwalk: not a clip of the library; one of walk, run,"),
    (["--motion", "data/motions/nope.txt"], "train_skill: MOTION=data/motions/nope.txt: no such file"),
    (["--motion", "data/motions/dog3d_trot.txt"],
     "train_skill: MOTION=data/motions/dog3d_trot.txt: not a humanoid3d clip"),
    (["--motion", "BAD"], "train_skill: MOTION={bad}: not a humanoid3d clip"),
])
def test_a_clip_or_motion_file_it_cannot_train_is_one_line_and_trains_nothing(tmp_path, argv, message):
    bad = tmp_path / "bad.txt"
    bad.write_text('{"Loop": "wrap", "Frames": [[0.1, 1, 2]]}')
    argv = [str(bad) if a == "BAD" else a for a in argv]
    out = tmp_path / "out"
    result = skill(*argv, "--output", str(out))
    assert result.returncode != 0
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(message.format(bad=bad))
    assert not out.exists()


def test_a_users_clip_gets_the_walks_row_under_its_own_name(tmp_path):
    clip = tmp_path / "my_hop.txt"
    clip.write_text(resolve_data_path("data/motions/humanoid3d_jump.txt").read_text())
    recipe = motion_recipe(str(clip))
    assert (recipe.name, recipe.clip, recipe.arg_file) == ("my_hop", "my_hop", RECIPES["walk"].arg_file)
    assert recipe.package == "humanoid3d_my_hop_trained" and recipe.run_args_file == "args/run_humanoid3d_my_hop_args.txt"
    table = resolved_args(recipe)
    assert table["motion_file"] == [str(clip)]                       # the user's clip wins over the walk's
    args = parse_args(["--motion", str(clip)])
    assert args.output == str(ROOT / "output/skills/my_hop") and args.clip == "my_hop"


def test_a_bvh_clip_is_converted_into_its_recipe(tmp_path):
    from env.anim.motion import Motion
    from env.anim.character import CharacterDesc

    bvh_file = tmp_path / "hop.bvh"
    subprocess.run([sys.executable, "scripts/motion_to_bvh.py", "data/motions/humanoid3d_walk.txt", str(bvh_file)],
                   cwd=ROOT, check=True, capture_output=True)
    recipe = motion_recipe(str(bvh_file), converted_dir=str(tmp_path / "converted"))
    assert recipe.name == "hop" and Path(recipe.motion_file) == tmp_path / "converted/hop.txt"
    motion = Motion.load(recipe.motion_file, CharacterDesc.load(resolve_data_path("data/characters/humanoid3d.txt")))
    assert motion.duration == pytest.approx(1.27, abs=0.05)


# ---- the discount rule ---------------------------------------------------------------------------

def curve_points(name):
    return json.loads((ROOT / "docs/bench" / name).read_text())["points"]


def first_switch(points, far=False):
    """The first point after which the rule switches, replayed over the curve."""
    for i in range(1, len(points) + 1):
        switch = discount_switch(points[:i], far)
        if switch:
            return points[i - 1]["samples"], switch[0]
    return None


def test_the_rule_switches_the_stalled_backflip_to_0_99_where_it_was_switched_by_hand():
    """At 0.95 the backflip's test episodes stayed near 1.2 s from 0.58M on; by hand it went to 0.99
    at 1.32M, and the rule, replayed over its curve, switches there too."""
    at, agent_file = first_switch(curve_points("time_to_skill_backflip_fast.json"))
    assert agent_file == FAR_AGENT_FILE and at == pytest.approx(1.32e6, rel=0.01)


@pytest.mark.parametrize("curve", ["time_to_skill_run_fast.json", "time_to_skill_jump_fast.json",
                                   "time_to_skill_spinkick_fast.json", "time_to_skill_cartwheel_fast.json"])
def test_the_rule_leaves_runs_that_still_improve_at_0_95_alone(curve):
    """The run, jump and spinkick learned at 0.95; the cartwheel, switched by hand at 2.30M, was
    still getting longer episodes at 0.95 (3.2 s at 1.0M, 6.0 s at 2.0M, 7.2 s at 2.5M): the rule
    would have kept it there."""
    assert first_switch(curve_points(curve)) is None


def test_back_at_0_95_from_the_first_evaluation_without_a_fall():
    """The backflip at 0.99 from 1.32M (its shipped branch) stops falling at 4.0M; by hand it went
    back at 4.61M, the cartwheel at 3.36M (first without a fall: 3.25M)."""
    for name, switched, first_clean in (("time_to_skill_backflip_fast_gamma99.json", 1.32e6, 4.0e6),
                                        ("time_to_skill_cartwheel_fast_gamma99.json", 2.30e6, 3.25e6)):
        after = [p for p in curve_points(name) if p["samples"] > switched]
        at, agent_file = first_switch(after, far=True)
        assert agent_file == RECIPE_AGENT_FILE and at == pytest.approx(first_clean, rel=0.02)


def test_back_at_0_95_once_few_episodes_fall_and_the_length_stalls():
    """The spin at 0.99 from 1.25M (its library run, at 0.99 to 10M) fell in 2 of 8 test episodes from 7.75M on,
    mean length 15.18 s, to the 10M budget: the rule, replayed over its curve, takes it back to 0.95
    at 8.25M (the best length, 15.17 s at 7.42M, not beaten by 10% in 0.84M samples)."""
    curve = json.loads((ROOT / "docs/bench/time_to_skill_spin_library.json").read_text())
    switched = curve["rules"][0]["samples"]
    after = [p for p in curve["points"] if p["samples"] > switched]
    at, agent_file = first_switch(after, far=True)
    assert agent_file == RECIPE_AGENT_FILE and at == pytest.approx(8.25e6, rel=0.01)


def test_the_roll_falling_once_in_8_stays_at_0_95():
    """The roll (with pose termination, from its 0.95 leg at 0.76M) fell in 1 of 8 test episodes from
    1.50M to 2.33M, 17.6 s: the rule of its run took it to 0.99 at 2.25M, for one leg of 0.25M (none
    fell at 2.50M); replayed now, the rule keeps it at 0.95."""
    points = [p for p in curve_points("time_to_skill_roll_pose_termination.json") if p["samples"] > 762_734]
    assert any(p["evaluation"]["falls"] == 1 for p in points) and first_switch(points) is None


def test_few_falls_keep_a_run_at_0_95_and_many_keep_it_at_0_99():
    many = [point(s, falls=3) for s in range(250_000, 1_000_001, 250_000)]
    few = [point(s, falls=2) for s in range(250_000, 1_000_001, 250_000)]
    assert discount_switch(many, far=False)[0] == FAR_AGENT_FILE       # 3 of 8 fall: a stall at 0.95 goes to 0.99
    assert discount_switch(few, far=False) is None                     # 2 of 8: 0.95 goes on
    assert discount_switch(many, far=True) is None                     # 3 of 8 at 0.99: goes on
    assert discount_switch(few, far=True)[0] == RECIPE_AGENT_FILE      # 2 of 8 and stalled: back at 0.95
    assert discount_switch(few[:3], far=True) is None                  # not stalled for the whole window yet
    assert FEW_FALLS == 0.25


def point(samples, falls=8, length=1.0, err=0.2, met=False, robust=None, iteration=None):
    p = {"samples": samples, "iteration": iteration or samples, "wall_hours": samples / 1e6, "criterion_met": met,
         "evaluation": {"episodes": 8, "falls": falls, "mean_length_s": length, "body_pos_err": err}}
    if robust is not None:
        p["robustness"] = {"episodes": ROBUST_EPISODES, "successes": robust}
    return p


def test_a_stall_needs_falls_and_its_whole_window():
    flat = [point(s) for s in range(250_000, 1_000_001, 250_000)]
    assert discount_switch(flat[:3], far=False) is None                  # 0.5M after the best: not yet
    assert discount_switch(flat, far=False)[0] == FAR_AGENT_FILE          # 0.75M
    growing = [point(s, length=1.0 + s / 1e6) for s in range(250_000, 1_000_001, 250_000)]
    assert discount_switch(growing, far=False) is None                    # 10% longer within the window
    creeping = [point(s, length=1.0 + 0.03 * i) for i, s in enumerate(range(250_000, 1_000_001, 250_000))]
    assert discount_switch(creeping, far=False)[0] == FAR_AGENT_FILE      # 3% longer each time: a stall
    assert discount_switch(flat[:-1] + [point(1_000_000, falls=0, length=20)], far=False) is None
    assert STALL_SAMPLES == 700_000


def run_with_rules(out, monkeypatch, falls, episodes, length, leg):
    """A run with the recipe's rules whose every evaluation is the same (`falls` of `episodes`
    falling, mean length `length` s; the criterion never met) and whose stalls last 800 samples:
    its saved curve, and leg(train_args) for each training leg, in order."""
    monkeypatch.setattr(skill_training, "criterion_met", lambda cfg, ev: False)
    monkeypatch.setattr(skill_training, "evaluate_checkpoint", lambda cfg, model, **kw: {
        "falls": falls, "episodes": episodes, "mean_length_s": length, "lengths_s": [length], "mean_reward": 0.5,
        "body_pos_err": 0.2})
    monkeypatch.setattr("app.skill_recipes.STALL_SAMPLES", 800)
    legs, trainer = [], FakeTrainer()

    def recording(cfg, target):
        legs.append(leg(cfg.train_args))
        return trainer(cfg, target)
    cfg, curve = load_or_start(bench_args(out))
    cfg.recipe_rules = True
    run(cfg, curve, train_fn=recording)
    return json.loads((out / "time_to_skill.json").read_text()), legs


def test_the_rule_in_the_loop_starts_a_leg_and_records_why(tmp_path, monkeypatch):
    """A run whose evaluations stall: after the stall the next round trains with the 0.99 file,
    the curve's schedule and rules say where and why, and a resume neither repeats nor drops it."""
    out = tmp_path / "run"
    saved, files = run_with_rules(out, monkeypatch, 1, 1, 0.3, lambda args: (
        args[args.index("--agent_files") + 1] if "--agent_files" in args else None))
    [rule] = saved["rules"]
    assert rule["agent_file"] == FAR_AGENT_FILE and "not beaten by 10%" in rule["reason"]
    assert saved["config"]["agent_schedule"] == [[rule["samples"], FAR_AGENT_FILE]]
    switch_round = [p["samples"] for p in saved["points"]].index(rule["samples"]) + 1
    assert files[:switch_round] == [None] * switch_round and set(files[switch_round:]) == {FAR_AGENT_FILE}
    cfg, curve = load_or_start(bench_args(out, "--resume"))
    cfg.recipe_rules = True
    skill_training.apply_rules(cfg, curve)
    assert len(curve["rules"]) == 1 and cfg.agent_schedule == [[rule["samples"], FAR_AGENT_FILE]]


# ---- the fall-weighted starts rule ----------------------------------------------------------------

def first_fall_weighting(points):
    """The samples of the first point after which the fall-weighted starts rule fires, replayed."""
    return next((points[i - 1]["samples"] for i in range(1, len(points) + 1) if fall_weight_switch(points[:i])), None)


def test_the_fall_rule_fires_where_the_spin_kept_falling_in_2_of_8():
    """The spin fell in 2 of its 8 test episodes at every evaluation from 7.75M to 14.75M (3 of 8 at
    7.50M); half its training resets where training episodes fell, from 14.21M by hand, took that to
    none. Replayed over its curve, the rule fires 0.7M samples into that stretch: at 8.50M."""
    points = curve_points("time_to_skill_spin_library.json")
    assert first_fall_weighting(points) == pytest.approx(8.50e6, rel=0.001)
    reason = fall_weight_switch([p for p in points if p["samples"] <= 8.51e6])
    assert "2 of 8 test episodes fell at 8,501,909 samples" in reason and "since 7,751,143 samples" in reason


LIBRARY_CURVES = sorted(path.name for path in (ROOT / "docs/bench").glob("time_to_skill_*_library.json"))


@pytest.mark.parametrize("curve", [*LIBRARY_CURVES, "time_to_skill_roll_pose_termination.json",
                                   "time_to_skill_run_fast.json", "time_to_skill_jump_fast.json",
                                   "time_to_skill_spinkick_fast.json", "time_to_skill_cartwheel_fast.json",
                                   "time_to_skill_cartwheel_fast_gamma99.json", "time_to_skill_backflip_fast.json",
                                   "time_to_skill_backflip_fast_gamma99.json", "time_to_skill_kick_library.json"])
def test_the_fall_rule_fires_on_the_spin_and_the_roll_alone(curve):
    """Over the library's curves the rule fires on the spin's and on the roll's (1 of 8 falling from
    1.50M to 2.33M: at 2.25M) and leaves every clip that stopped falling, or kept falling in many
    episodes, alone."""
    fired = {"time_to_skill_spin_library.json": 8.50e6, "time_to_skill_roll_pose_termination.json": 2.25e6}
    at = first_fall_weighting(curve_points(curve))
    assert at == (pytest.approx(fired[curve], rel=0.01) if curve in fired else None)


def test_the_fall_rule_needs_a_few_falls_that_do_not_come_down():
    def run(*falls):
        return [point(250_000 * (i + 1), falls=f, length=15) for i, f in enumerate(falls)]
    assert fall_weight_switch(run(2, 2, 2, 2)) is not None            # 2 of 8 for 0.75M samples
    assert fall_weight_switch(run(2, 2, 2)) is None                   # 0.5M: not yet
    assert fall_weight_switch(run(3, 3, 3, 3)) is None                # more than FEW_FALLS: the discount rule's
    assert fall_weight_switch(run(0, 0, 0, 0)) is None                # none falls
    assert fall_weight_switch(run(2, 2, 2, 0)) is None                # none falls at the last point
    assert fall_weight_switch(run(2, 2, 1, 1)) is None                # fewer falls: the window starts again
    assert fall_weight_switch(run(2, 2, 1, 1, 2, 1)) is not None      # 1 first seen 0.75M before
    assert fall_weight_switch(run(1, 0, 1, 1, 1)) is None             # a point without a fall ends the stretch
    assert fall_weight_switch(run(3, 1, 1, 1, 1)) is not None
    assert FALL_WEIGHT_ARGS == ("--reset_fail_weight", "0.5")


def test_the_fall_rule_in_the_loop_weights_every_leg_after_it_once(tmp_path, monkeypatch):
    """A run whose evaluations keep 1 of 8 falling: after the rule fires every training leg carries
    FALL_WEIGHT_ARGS (and no leg before it), the curve's rules and config say where and why, and a
    resume keeps it on without recording it again."""
    out = tmp_path / "run"
    saved, legs = run_with_rules(out, monkeypatch, 1, 8, 18.0, lambda args: args[-2:] == list(FALL_WEIGHT_ARGS))
    [rule] = saved["rules"]
    assert rule["train_args"] == list(FALL_WEIGHT_ARGS) and "1 of 8 test episodes fell" in rule["reason"]
    assert saved["config"]["fall_weighted_from"] == rule["samples"]
    fired_round = [p["samples"] for p in saved["points"]].index(rule["samples"]) + 1
    assert not any(legs[:fired_round]) and all(legs[fired_round:]) and len(legs) > fired_round
    cfg, curve = load_or_start(bench_args(out, "--resume"))
    cfg.recipe_rules = True
    skill_training.apply_rules(cfg, curve)
    assert len(curve["rules"]) == 1 and cfg.fall_weighted_from == rule["samples"]
    assert cfg.scheduled(rule["samples"]).train_args[-2:] == list(FALL_WEIGHT_ARGS)
    assert FALL_WEIGHT_ARGS[0] not in cfg.scheduled(rule["samples"] - 1).train_args


# ---- the ship decision ---------------------------------------------------------------------------

def test_it_ships_the_first_point_within_the_margin_and_robust():
    points = [point(1e6, 0, 20, 0.075, True, 16), point(1.25e6, 0, 20, 0.069, True, 14),
              point(1.5e6, 0, 20, 0.068, True, 15), point(1.75e6, 0, 20, 0.05, True, 16)]
    assert ship_point(points[:2], 1e6, 0.08) is None           # 7.5 cm over 7; then 14 of 16 only
    picked, reason = ship_point(points, 1e6, 0.08)
    assert picked["samples"] == 1.5e6 and "6.8 cm <= 7.0 cm" in reason and "15 of 16" in reason


def test_when_none_does_the_most_robust_ships_after_the_plateau_or_at_the_end():
    points = [point(1e6, 0, 20, 0.075, True, 13), point(1.5e6, 0, 20, 0.078, True, 15),
              point(1.75e6, 8, 3, 0.2), point(1e6 + PLATEAU_SAMPLES, 0, 20, 0.074, True, 15)]
    assert ship_point(points[:3], 1e6, 0.08) is None
    assert ship_point(points[:3], 1e6, 0.08, final=True)[0]["samples"] == 1.5e6
    picked, reason = ship_point(points, 1e6, 0.08)
    assert picked["samples"] == 1e6 + PLATEAU_SAMPLES and "most robustness successes" in reason   # 15, 7.4 cm


# ---- non-looping clips ---------------------------------------------------------------------------

def test_an_episode_that_plays_a_non_looping_clip_to_its_end_is_no_fall(tmp_path):
    """The kick ends (DeepMimic's Fail) when its clip does; a near-zero relative action tracks the
    reference, so the evaluation's episodes end with the clip, not a fall, and succeed."""
    from app.skill_training import eval_worker
    kick = recipe_for("kick")
    spec = {"arg_file": kick.arg_file, "seed": 1000, "model": "none", "scratch": str(tmp_path), "agent_args": [],
            "extra_args": kick.train_args, "episodes": 2, "episode_time": 20.0, "max_body_pos_err": 0.08}
    ev = eval_worker(spec)
    assert ev["clip_ended"] == [True, True] and ev["falls"] == 0
    assert all(0 < length <= 1.54 for length in ev["lengths_s"])
    cfg = Criterion()
    assert episode_successes(cfg, ev) == [err <= 0.08 for err in ev["body_pos_errs"]]
    close = {**ev, "body_pos_errs": [0.01, 0.01]}
    assert episode_successes(cfg, close) == [True, True]                      # short, but to the clip's end
    assert episode_successes(cfg, {**close, "clip_ended": [False, False]}) == [False, False]


# ---- DeepMimic's run_ files ------------------------------------------------------------------------

# the clips whose policy is still to be trained here: DeepMimic's run_ file plays what its train_
# file writes (output/agent0_model.ckpt) until the skill ships and the row leaves this list
NOT_YET_SHIPPED = set()
EXAMPLE_CLIP = "spin"       # the run_ file tests below: a library clip, its run_ file as before it ships


def run_file_before_shipping(clip):
    """DeepMimic's run_ file of a library clip as it reads until the clip ships: it plays what the
    train_ file writes, output/agent0_model.ckpt (the file itself once shipped, that line apart)."""
    text = (ROOT / f"args/run_humanoid3d_{clip}_args.txt").read_text()
    return re.sub(r"^--model_files .*$", "--model_files output/agent0_model.ckpt", text, flags=re.M)


def model_files(run_args_file):
    parser = ArgParser()
    parser.load_file(ROOT / run_args_file)
    return parser.table["model_files"]


@pytest.mark.parametrize("name", sorted(RECIPES))
def test_deepmimics_run_file_plays_the_policy_trained_here(name):
    recipe = recipe_for(name)
    [model] = model_files(recipe.run_args_file)
    if name in NOT_YET_SHIPPED:
        assert model == "output/agent0_model.ckpt"
        assert not (ROOT / "data/policies" / recipe.package).exists()    # shipped: off the list
        return
    assert model == f"data/policies/{recipe.package}/agent0_model.ckpt"
    assert (ROOT / f"{model}.index").is_file()


def test_deepmimics_run_file_of_a_clip_not_shipped_yet_says_how_to_train_it(tmp_path):
    """DeepMimic's run_ file of a clip with no policy yet looks for what its train_ file writes;
    without it the command stops in one line that names the skill command to run (and a run_ file
    of another name gets the plain checkpoint error)."""
    text = run_file_before_shipping(EXAMPLE_CLIP)
    missing = tmp_path / "output/agent0_model.ckpt"
    results = []
    for name in (f"run_humanoid3d_{EXAMPLE_CLIP}_args.txt", f"run_my_{EXAMPLE_CLIP}_args.txt"):
        (tmp_path / name).write_text(text.replace("output/agent0_model.ckpt", str(missing)))
        results.append(subprocess.run([sys.executable, "DeepMimic.py", "--arg_file", str(tmp_path / name), "--headless",
                                       "--episodes", "1"], cwd=ROOT, capture_output=True, text=True, timeout=300))
    library, other = results
    assert library.returncode == other.returncode == 2
    line = library.stderr.strip().splitlines()[-1]         # after pybullet's build-time banner
    assert line.startswith(f"DeepMimic.py: error: checkpoint not found: {missing}")
    assert line.endswith(f"no policy for {EXAMPLE_CLIP} is shipped yet: `make skill CLIP={EXAMPLE_CLIP}` trains one and "
                         f"rewrites args/run_humanoid3d_{EXAMPLE_CLIP}_args.txt to play it")
    assert other.stderr.strip().splitlines()[-1].endswith("the project or the pybullet data)")


def test_shipping_replaces_deepmimics_run_file_but_not_a_shipped_one(tmp_path):
    """DeepMimic's run_ file of a clip not shipped yet plays output/ and is replaced when the clip
    ships; one that already plays a package is refused, as the package folder is."""
    from app.skill_package import check_free
    args_dir = tmp_path / "args"
    args_dir.mkdir()
    run_file = f"run_humanoid3d_{EXAMPLE_CLIP}_args.txt"
    (args_dir / run_file).write_text(run_file_before_shipping(EXAMPLE_CLIP))
    check_free(EXAMPLE_CLIP, tmp_path / "policies", args_dir, f"humanoid3d_{EXAMPLE_CLIP}_trained", run_file)
    (args_dir / "run_humanoid3d_walk_args.txt").write_text((ROOT / "args/run_humanoid3d_walk_args.txt").read_text())
    with pytest.raises(ValueError, match="run_humanoid3d_walk_args.txt exists"):
        check_free("walk", tmp_path / "policies", args_dir, "humanoid3d_walk_trained", "run_humanoid3d_walk_args.txt")


def test_an_earlier_point_picked_to_ship_ships_its_own_weights(tmp_path, monkeypatch):
    """Every point meets the criterion without the margin; at the end of the budget the ship
    decision picks the one with the lowest error, an early one. Training has overwritten the
    run's checkpoint since, so the package must hold the copy kept at that point (the stand-in
    trainer's model is its iteration)."""
    from learning import checkpoint
    out = tmp_path / "run"
    errs = iter([0.078, 0.072, 0.079, 0.077, 0.076])

    def evaluation(cfg, model, seed=None, episodes=None):
        n = episodes or 1
        return {"falls": 0, "episodes": n, "mean_length_s": 20.0, "lengths_s": [20.0] * n, "mean_reward": 0.8,
                "body_pos_err": 0.075 if seed is not None else next(errs), "body_pos_errs": [0.075] * n}
    monkeypatch.setattr(skill_training, "evaluate_checkpoint", evaluation)
    cfg, curve = load_or_start(bench_args(out, "--episode_time", "20"))
    cfg.recipe_rules, cfg.skill = True, "walk"
    run(cfg, curve, train_fn=FakeTrainer())
    picked = curve["ship"]
    assert picked["iteration"] == curve["points"][1]["iteration"] and "end of the budget" in picked["reason"]
    assert (out / curve["points"][1]["kept_checkpoint"]).with_suffix(".ckpt.index").is_file()
    (out / "args.txt").write_text("--scene imitate\n--motion_file data/motions/humanoid3d_walk.txt\n")
    skill_training.ship(cfg, curve, tmp_path / "policies", tmp_path / "args")
    shipped = checkpoint.read_checkpoint(tmp_path / "policies/humanoid3d_walk_trained/agent0_model.ckpt")
    last = checkpoint.read_checkpoint(out / "agent0_model.ckpt")
    assert int(shipped["iter"][0]) == picked["iteration"] != int(last["iter"][0])


def test_a_point_whose_weights_are_gone_is_not_shipped(tmp_path):
    """A point without a kept copy whose checkpoint training has since overwritten cannot ship;
    the run's latest point and kept points can."""
    from app.skill_config import RunConfig
    out = tmp_path / "run"
    FakeTrainer()(RunConfig(arg_file="x", output=str(out)), 6 * 128)      # the run's checkpoint: iteration 6
    cfg = RunConfig(arg_file="x", output=str(out))
    points = [{"iteration": 2}, {"iteration": 4, "kept_checkpoint": "kept/iter_4/agent0_model.ckpt"}, {"iteration": 6}]
    assert [p["iteration"] for p in skill_training.shippable(cfg, points)] == [4, 6]
