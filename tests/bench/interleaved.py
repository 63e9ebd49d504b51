"""Training runs measured in interleaved rounds (amp_cost.py, recipe_cost.py): the command-line
options they share, one measurement (throughput.py's training section (c) on an args file), the
rounds, and the report file."""
import os
import sys
import time
from dataclasses import replace

from tests.bench import throughput
from util.atomic_write import write_json


def add_arguments(parser):
    parser.add_argument("--ranks", type=int, choices=[1, 2], default=2)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--iters", type=int, default=2, help="whole iterations timed per run")
    parser.add_argument("--json", help="write every figure to this file")


def check_arguments(parser, args):
    if args.rounds < 1 or args.iters < 1:
        parser.error("--rounds and --iters must be >= 1")


def recipe_names(parser, text, known):
    """The comma-separated recipe names of --recipes, each known and named once."""
    names = text.split(",")
    unknown = [n for n in names if n not in known]
    if unknown:
        parser.error(f"--recipes: unknown recipe {unknown[0]!r} (known: {', '.join(known)})")
    if len(set(names)) != len(names):
        parser.error(f"--recipes: a recipe named twice in {text!r}")
    return names


def measure(arg_file, ranks, iters, extra_args=()):
    """throughput.py's training section (c) on `arg_file` (and extra_args after it): a fresh run
    (seed 7) trained to its first update and its test phase, then `iters` whole iterations timed."""
    throughput.TRAIN_ARGS = arg_file
    budget = replace(throughput.FULL, train_iters=iters)
    return throughput.measure_training(budget, ranks, "B", extra_args)


def per_floor(result):
    return result["samples_per_s"] / result["floor"]["B"]


def update_per_iter(result):
    return result["update_seconds"] / result["timed_iterations"]


class Rounds:
    """Measurements kept per case, with progress on stderr; the clock and load from the start."""

    def __init__(self):
        self.started, self.load_at_start = time.time(), os.getloadavg()

    def measure(self, label, runs, arg_file, args, extra_args=()):
        """One measurement of `arg_file` appended to the list `runs`."""
        print(f"[{time.time() - self.started:6.0f} s] {label} ...", file=sys.stderr, flush=True)
        result = measure(arg_file, args.ranks, args.iters, extra_args)
        runs.append(result)
        if not throughput.ok(result):
            print(f"  {result['status']}", file=sys.stderr, flush=True)

    def write(self, args, recipes, **payload):
        """With --json, the run's meta data (with the recipes measured) and `payload`, written
        atomically."""
        if args.json:
            write_json(args.json, {
                "meta": {"ranks": args.ranks, "rounds": args.rounds, "iters": args.iters,
                         "seconds": time.time() - self.started, "cpus": os.cpu_count(),
                         "load_average_at_start": self.load_at_start, "load_average_at_end": os.getloadavg(),
                         "recipes": recipes},
                **payload})
