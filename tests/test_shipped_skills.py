"""The skills this project trained and ships (data/policies/*_trained/): each has its metadata
(app/skill_package.py) and a run_ args file that plays its checkpoint; (slow) each plays one
test episode of 20 s without a fall and within the body position bound it was shipped under. A clip
that does not loop (punch, kick, the get-ups) ends its episode with the clip, before 20 s: such an
episode counts as run to its end, as the criterion counts it. A skill whose scene resets from
DeepMimic's clips that do not ship (the goal hierarchy's heading skill) plays after `make data-extra`."""
import hashlib
import json
from pathlib import Path

import pytest

from app.skill_config import MODEL_NAME, PACKAGE_METADATA
from app.skill_package import shipped_run_args
from util.paths import ExtraDataNotFound

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = sorted(p for p in (ROOT / "data/policies").glob("*_trained") if p.is_dir())
METADATA_KEYS = {"skill", "clip", "checkpoint", "commit", "args_sha256", "seed", "workers", "samples", "iteration",
                 "training_hours", "evaluation", "criterion", "args", "agent_files"}


def test_there_are_shipped_skills():
    assert [p.name for p in PACKAGES if p.name == "humanoid3d_walk_trained"]


@pytest.mark.parametrize("package", PACKAGES, ids=lambda p: p.name)
def test_each_shipped_skill_has_its_metadata_and_run_file(package):
    meta = json.loads((package / PACKAGE_METADATA).read_text())
    assert METADATA_KEYS <= meta.keys()
    assert package.name in (f"humanoid3d_{meta['skill']}_trained", f"{meta['skill']}_trained")    # dog3d_<clip>
    assert (package / f"{MODEL_NAME}.index").is_file()
    ev, crit = meta["evaluation"], meta["criterion"]
    assert ev["episodes"] == crit["episodes"] == 8 and crit["episode_time"] == 20.0
    assert ev["falls"] == 0
    ended = ev.get("clip_ended", [False] * len(ev["lengths_s"]))
    assert all(length >= 20.0 - 0.05 or clip_ended for length, clip_ended in zip(ev["lengths_s"], ended))
    if crit["kind"] == "tracking":
        assert ev["successes"] == 8 and max(ev["body_pos_errs"]) <= crit["max_body_pos_err"]
    elif crit["kind"] == "task":
        assert min(ev["rewards"]) >= crit["min_task_reward"]
    else:
        assert max(ev["style_errs"]) <= crit["max_style_err"]
        assert all(abs(v - ev["clip_speed"]) <= crit["speed_tol"] * ev["clip_speed"] for v in ev["root_speeds"])
    assert len(meta["commit"]) == 40 and len(meta["args_sha256"]) == 64
    assert {f"--motion_file data/motions/humanoid3d_{meta['clip']}.txt",      # a clip or a dataset of clips
            f"--motion_file data/motions/{meta['clip']}.txt",
            f"--motion_file data/datasets/{meta['clip']}.txt",
            f"--motion_file data/datasets/humanoid3d_{meta['clip']}.txt"} & set(meta["args"])
    run_file = (ROOT / shipped_run_args(meta)).read_text()
    assert f"--model_files data/policies/{package.name}/{MODEL_NAME}" in run_file
    assert "--train_agents false" in run_file
    if "demonstrations" in meta:        # learned from a dataset: the one shipped, unchanged
        demos = meta["demonstrations"]
        assert f"--demo_file {demos['file']}" in meta["args"]
        assert hashlib.sha256((ROOT / demos["file"]).read_bytes()).hexdigest() == demos["sha256"]


@pytest.mark.slow
@pytest.mark.parametrize("package", PACKAGES, ids=lambda p: p.name)
def test_each_shipped_skill_plays_20_s_without_a_fall(package):
    from app.build import load_world
    from app.evaluate import evaluate

    meta = json.loads((package / PACKAGE_METADATA).read_text())
    try:
        world = load_world(["--arg_file", str(ROOT / shipped_run_args(meta)), "--rand_seed", "1000"])
    except ExtraDataNotFound as err:    # a skill on DeepMimic's clips that do not ship (the heading data)
        pytest.skip(f"needs `make data-extra`: {err}")
    try:
        (stats,) = evaluate(world, 1, max_episode_time=20.0)
    finally:
        world.shutdown()
    assert not stats.fell and (stats.length_s >= 20.0 - 0.05 or stats.clip_ended)
    if meta["criterion"]["kind"] == "tracking":
        assert stats.tracking["body_pos_err"] <= meta["criterion"]["max_body_pos_err"]
    elif meta["criterion"]["kind"] == "task":
        assert stats.mean_reward >= meta["criterion"]["min_task_reward"]
    else:
        assert stats.style["style_err"] <= meta["criterion"]["max_style_err"]
