"""Training runs measured in interleaved rounds (amp_cost.py, recipe_cost.py, onednn.py): the
command-line options they share, one measurement (throughput.py's training section (c) on an args
file), the rounds, the pair summary and its table, and the report file."""
import argparse
import os
import statistics
import sys
import time
from dataclasses import replace

from tests.bench import throughput
from util.atomic_write import write_json


def parse_arguments(description, recipes, default, argv=None, recipes_help="comma-separated"):
    """The options every interleaved bench shares (--ranks, --rounds, --iters, --json) and
    --recipes (comma-separated names of `recipes`, each known and named once): (args, names)."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--ranks", type=int, choices=[1, 2], default=2)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--iters", type=int, default=2, help="whole iterations timed per run")
    parser.add_argument("--json", help="write every figure to this file")
    parser.add_argument("--recipes", default=default, help=f"{recipes_help}: " + ", ".join(recipes))
    args = parser.parse_args(argv)
    if args.rounds < 1 or args.iters < 1:
        parser.error("--rounds and --iters must be >= 1")
    return args, recipe_names(parser, args.recipes, recipes)


def recipe_names(parser, text, recipes):
    """The names in --recipes' comma-separated `text`, each one of `recipes` and named once (else
    the parser's error)."""
    names = text.split(",")
    unknown = [n for n in names if n not in recipes]
    if unknown:
        parser.error(f"--recipes: unknown recipe {unknown[0]!r} (known: {', '.join(recipes)})")
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


def pair_summary(runs, base, other):
    """Two cases measured in the same rounds (runs[base][k] and runs[other][k]), rounds where one
    failed dropped: each case's median samples/s and update seconds per iteration, and the medians
    over rounds of other / base, raw and per floor."""
    pairs = [(b, o) for b, o in zip(runs[base], runs[other]) if throughput.ok(b) and throughput.ok(o)]
    if not pairs:
        return {"status": "failed: no round with both runs"}
    return {
        "status": "ok",
        **{f"{name}_samples_per_s": statistics.median(p[i]["samples_per_s"] for p in pairs)
           for i, name in enumerate((base, other))},
        f"{other}_over_{base}": statistics.median(o["samples_per_s"] / b["samples_per_s"] for b, o in pairs),
        f"{other}_over_{base}_per_floor": statistics.median(per_floor(o) / per_floor(b) for b, o in pairs),
        **{f"{name}_update_seconds_per_iter": statistics.median(update_per_iter(p[i]) for p in pairs)
           for i, name in enumerate((base, other))},
        "rounds": len(pairs),
    }


def print_pair_table(summary, base, other, ranks, labels, note=""):
    """pair_summary's figures per recipe, one line each; labels: how base and other are printed."""
    b, o = labels
    print(f"{'recipe':<12} {b:>9} {o:>9} {o + '/' + b:>12} {'per floor':>10}  (samples/s, {ranks} ranks; "
          f"update s/iteration {b} / {o})")
    for name, s in summary.items():
        if s["status"] != "ok":
            print(f"{name:<12} {s['status']}")
            continue
        print(f"{name:<12} {s[f'{base}_samples_per_s']:9.1f} {s[f'{other}_samples_per_s']:9.1f} "
              f"{s[f'{other}_over_{base}']:12.2f} {s[f'{other}_over_{base}_per_floor']:10.2f}  update "
              f"{s[f'{base}_update_seconds_per_iter']:.2f} / {s[f'{other}_update_seconds_per_iter']:.2f}{note}")


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
