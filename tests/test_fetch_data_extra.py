"""scripts/fetch_data_extra.py (`make data-extra`) without the network: the "download" serves
DeepMimic's local files; checked: hashes, atomic writes, skipping, licences, the manifest."""
import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
import fetch_data_extra as fde  # noqa: E402
from tests.deepmimic_checkout import DEEPMIMIC, needs_deepmimic  # noqa: E402

DEEPMIMIC_MOTIONS = DEEPMIMIC / "data/motions" if DEEPMIMIC else None


def local_get(url):
    """Serves a raw.githubusercontent URL from the DeepMimic checkout."""
    assert url.startswith(f"https://raw.githubusercontent.com/xbpeng/DeepMimic/{fde.COMMIT}/data/motions/")
    return (DEEPMIMIC_MOTIONS / url.split("/data/motions/")[1]).read_bytes()


def test_git_blob_check_is_gits():
    # `printf 'hello\n' | git hash-object --stdin`
    assert fde.digest_of(b"hello\n", "git-blob-sha1") == "ce013625030ba8dba906f756967f9e9ca394464a"


@needs_deepmimic
def test_manifest_covers_the_extra_clips():
    entries = fde.read_manifest()
    local = {f"{p.parent.name}/{p.name}" for d in fde.LICENCES for p in (DEEPMIMIC_MOTIONS / d).iterdir()}
    assert local <= set(entries)
    # every sie/amass/long clip named by a dataset is fetched
    for dataset in (ROOT / "data/datasets").glob("*.txt"):
        for entry in json.loads(dataset.read_text())["Motions"]:
            clip = entry["File"].removeprefix("data/motions/")
            if clip.split("/")[0] in fde.LICENCES:
                assert clip in entries, (dataset.name, clip)
    assert {n.split("/")[0] for n in entries} == set(fde.LICENCES)


@needs_deepmimic
def test_fetch_writes_checked_files_and_skips_present_ones(tmp_path):
    lines = []
    count = fde.fetch(["amass", "sie"], dest=tmp_path, get=local_get, log=lines.append)
    assert count == 2 + 51
    assert lines[0].startswith("amass: AMASS licence") and any(line.startswith("sie: Creative Commons") for line in lines)
    got = tmp_path / "amass/humanoid3d_ready_to_walk_mirror.txt"
    assert got.read_bytes() == (DEEPMIMIC_MOTIONS / "amass/humanoid3d_ready_to_walk_mirror.txt").read_bytes()
    assert not list(tmp_path.rglob(".*"))          # no temporary files left
    assert fde.fetch(["amass"], dest=tmp_path, get=local_get, log=lines.append) == 0


@needs_deepmimic
def test_corrupt_download_is_not_written(tmp_path):
    with pytest.raises(ValueError, match=r"humanoid3d_ready_to_walk_mirror.txt: sha256 does not match"):
        fde.fetch(["amass"], dest=tmp_path, get=lambda url: local_get(url) + b" ", log=lambda line: None)
    assert not (tmp_path / "amass").exists() or not list((tmp_path / "amass").iterdir())


def test_unknown_set_is_rejected(capsys):
    with pytest.raises(SystemExit):
        fde.main(["nope"])
    assert "unknown set 'nope'" in capsys.readouterr().err
