"""Download DeepMimic's clips that this repository does not ship: python scripts/fetch_data_extra.py [SET ...]

Sets (default: all three): sie (Sony Interactive Entertainment captures, CC BY-NC 4.0), amass
(clips derived from AMASS, AMASS licence), long (long walk/zombie/stealthy captures, MIT, 20 MB).
Each file comes from github.com/xbpeng/DeepMimic at a pinned commit, is checked against
data/motions_extra.txt (sha256, or the commit's git blob id) and written atomically into
data/motions/<set>/; files already present and correct are kept. Each set's licence is printed
before its download.
"""
import argparse
import hashlib
import sys
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from util.atomic_write import write_bytes  # noqa: E402

MANIFEST = ROOT / "data/motions_extra.txt"
COMMIT = "1f915c52fcd4b95b5f5f15b759ae91bd81e9a801"
URL = f"https://raw.githubusercontent.com/xbpeng/DeepMimic/{COMMIT}/data/motions/{{}}"
LICENCES = {
    "sie": "Creative Commons Attribution-NonCommercial 4.0 International (CC BY-NC 4.0), "
           "Copyright (c) 2021 Sony Interactive Entertainment: non-commercial use only "
           "(full text: data/motions/sie/LICENSE, downloaded with the set)",
    "amass": "AMASS licence (https://amass.is.tue.mpg.de/license.html): non-commercial scientific "
             "research only; cite AMASS and the original capture datasets",
    "long": "MIT (DeepMimic's licence, data/LICENSE_DeepMimic.txt)",
}


def read_manifest(path=MANIFEST):
    """{set/file: (check, hex digest)} from the manifest's non-comment lines."""
    entries = {}
    for line in Path(path).read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            check, name = line.split(maxsplit=1)
            algo, digest = check.split(":")
            entries[name.strip()] = (algo, digest)
    return entries


def digest_of(data, algo):
    if algo == "sha256":
        return hashlib.sha256(data).hexdigest()
    if algo == "git-blob-sha1":
        return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()
    raise ValueError(f"{MANIFEST}: unknown check {algo!r}")




def download(url):
    with urllib.request.urlopen(url, timeout=60) as response:
        return response.read()


def fetch(sets, dest=ROOT / "data/motions", get=download, log=print):
    """Fetches every manifest file of `sets` into dest; returns how many were downloaded. A file
    whose content does not match its check is not written (ValueError naming it)."""
    entries = read_manifest()
    fetched = 0
    for set_name in sets:
        log(f"{set_name}: {LICENCES[set_name]}")
        for name, (algo, digest) in sorted(entries.items()):
            if not name.startswith(f"{set_name}/"):
                continue
            target = dest / name
            if target.is_file() and digest_of(target.read_bytes(), algo) == digest:
                continue
            data = get(URL.format(name))
            if digest_of(data, algo) != digest:
                raise ValueError(f"{URL.format(name)}: {algo} does not match {MANIFEST.name}, not written")
            write_bytes(target, data)
            fetched += 1
            log(f"  {target.relative_to(ROOT) if target.is_relative_to(ROOT) else target}")
    return fetched


def main(argv=None):
    parser = argparse.ArgumentParser(description="download DeepMimic's sie, amass and long clips")
    parser.add_argument("sets", nargs="*", help=f"which sets among {', '.join(LICENCES)} (default: all)")
    args = parser.parse_args(argv)
    unknown = [name for name in args.sets if name not in LICENCES]
    if unknown:
        parser.error(f"unknown set {unknown[0]!r} (sets: {', '.join(LICENCES)})")
    try:
        count = fetch(args.sets or list(LICENCES))
    except (OSError, ValueError) as err:
        print(f"fetch_data_extra.py: {err}", file=sys.stderr)
        return 1
    print(f"{count} file(s) downloaded")
    return 0


if __name__ == "__main__":
    sys.exit(main())
