"""Learning curves from training logs (agent*_log.txt, util/logger.py's format): one PNG with a
panel per column against Samples, several runs overlaid. Headless (matplotlib's Agg backend)."""
import math
from pathlib import Path

import numpy as np

from util.atomic_write import atomic_path

X_COLUMN = "Samples"
NOT_PLOTTED = ("Iteration", "Wall_Time", X_COLUMN)
FIRST = ("Train_Return", "Test_Return")


def read_log(path):
    """(column names, rows (n, columns)) of a training log; ValueError naming the file otherwise."""
    path = Path(path)
    try:
        lines = [line.split() for line in path.read_text().splitlines() if line.strip()]
    except (OSError, UnicodeDecodeError) as err:
        raise ValueError(f"{path}: cannot read it as a training log ({err})") from None
    if not lines or "Iteration" not in lines[0] or X_COLUMN not in lines[0]:
        raise ValueError(f"{path}: not a training log (no header row with Iteration and {X_COLUMN})")
    names = lines[0]
    rows = []
    for number, cols in enumerate(lines[1:], start=2):
        try:
            values = [float(c) for c in cols]
        except ValueError:
            raise ValueError(f"{path}: line {number} is not a row of numbers") from None
        if len(values) != len(names):
            raise ValueError(f"{path}: line {number} has {len(values)} values for {len(names)} columns")
        rows.append(values)
    if not rows:
        raise ValueError(f"{path}: a header but no rows yet (the first iteration writes the first row)")
    return names, np.array(rows)


def plot_logs(paths, out_path, labels=None):
    """One PNG at out_path: a panel per column (returns first; every column any run has), each
    run a line against its samples."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    runs = [read_log(p) for p in paths]
    labels = labels or [_label(p, paths) for p in paths]
    columns = [c for c in FIRST if any(c in names for names, _ in runs)]
    for names, _ in runs:
        columns += [c for c in names if c not in NOT_PLOTTED and c not in columns]
    cols = min(3, len(columns))
    rows = math.ceil(len(columns) / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(5 * cols, 3.2 * rows), squeeze=False)
    for ax, column in zip(axes.flat, columns):
        for (names, data), label in zip(runs, labels):
            if column in names:
                ax.plot(data[:, names.index(X_COLUMN)], data[:, names.index(column)], label=label,
                        marker="." if len(data) < 30 else None)
        ax.set_title(column)
        ax.set_xlabel(X_COLUMN)
        ax.grid(alpha=0.3)
    for ax in axes.flat[len(columns):]:
        ax.axis("off")
    if len(runs) > 1:
        axes.flat[0].legend(fontsize="small")
    fig.tight_layout()
    with atomic_path(out_path) as tmp:
        fig.savefig(tmp, dpi=80, format="png")
    plt.close(fig)
    return columns


def _label(path, paths):
    """The file's folder name, or its path when folders repeat."""
    parents = [Path(p).parent.name for p in paths]
    name = Path(path).parent.name
    return name if name and parents.count(name) == 1 else str(path)
