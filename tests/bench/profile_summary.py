"""Summary of py-spy profiles of a training rank (docs/bench/profile_*.json): per profile, the
fraction of samples in which each function is on the stack (inclusive, the 40 largest) or on top
(self, the 15 largest). Native code (pybullet, TensorFlow) counts for the Python function calling it.

    py-spy record -p PID -d 40 -r 50 -f raw -o prof.txt --nonblocking
    .venv/bin/python -m tests.bench.profile_summary OUT.json "how it was recorded" prof.txt [prof2.txt ...]
"""
import collections
import re
import sys

from util.atomic_write import write_json

FRAME = re.compile(r"(.*?) \((.*?)(?::\d+)?\)$")


def frame_name(frame):
    """'function (file.py)' from py-spy's 'function (path/file.py:line)'."""
    m = FRAME.match(frame)
    return f"{m.group(1)} ({m.group(2).split('/')[-1]})" if m else frame


def summarise(path):
    total, inclusive, own = 0, collections.Counter(), collections.Counter()
    with open(path) as f:
        for line in f:
            stack, _, count = line.rstrip().rpartition(" ")
            count = int(count)
            total += count
            names = [frame_name(fr) for fr in stack.split(";")]
            for name in set(names):
                inclusive[name] += count
            own[names[-1]] += count
    return {"samples": total,
            "inclusive_fraction": {k: round(v / total, 4) for k, v in inclusive.most_common(40)},
            "self_fraction": {k: round(v / total, 4) for k, v in own.most_common(15)}}


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) < 3:
        raise SystemExit("usage: profile_summary OUT.json METHOD PROFILE [PROFILE ...]")
    out, method, *profiles = argv
    write_json(out, {"method": method, "profiles": [summarise(p) for p in profiles]})


if __name__ == "__main__":
    main()
