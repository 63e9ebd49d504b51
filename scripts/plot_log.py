"""Learning curves: python scripts/plot_log.py LOG [LOG ...] -o curves.png [--labels A B ...]

Draws one PNG from one or more agent*_log.txt files (returns and every other column against
samples, several runs overlaid and labelled). The logic lives in util/log_plot.py.
"""
import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from util.log_plot import plot_logs  # noqa: E402


def main(argv=None):
    parser = argparse.ArgumentParser(description="learning curves from agent*_log.txt files")
    parser.add_argument("logs", nargs="+", help="training logs (agent0_log.txt)")
    parser.add_argument("-o", "--output", default="curves.png", help="PNG to write")
    parser.add_argument("--labels", nargs="+", help="one label per log (default: the log's folder)")
    args = parser.parse_args(argv)
    if args.labels and len(args.labels) != len(args.logs):
        parser.error(f"{len(args.labels)} labels for {len(args.logs)} logs")
    try:
        columns = plot_logs(args.logs, args.output, args.labels)
    except ValueError as err:
        print(f"plot_log.py: {err}", file=sys.stderr)
        return 2
    print(f"{args.output}: {len(columns)} panels from {len(args.logs)} log(s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
