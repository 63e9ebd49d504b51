"""Tabular training logs: one fixed-width, whitespace-separated row per iteration, rank 0 only.

Columns are set by the first row (the order of the log_tabular calls); later rows must log the
same keys. A resumed run appends to its log; when it logs columns the log lacks (a run begun by an
older version), the file is first rewritten with the new header, the old rows holding nan there. The file is readable with numpy.genfromtxt(names=True) or pandas.read_csv(sep=r"\s+").
With configure_tensorboard, rank 0 also writes every row as TensorBoard scalars (step: the row's
Iteration), plus the row's log_scalar extras, which go to TensorBoard only.
"""
import numbers
import os

import util.mpi_util as mpi_util
from util.atomic_write import write_bytes

MIN_COLUMN_WIDTH = 15   # fits any number printed with 8 significant digits


def _format(val):
    if isinstance(val, numbers.Integral) and not isinstance(val, bool):
        return str(int(val))
    return f"{float(val):.8g}"


class Logger:
    @staticmethod
    def print(text=""):
        if mpi_util.is_root():
            print(text, flush=True)

    def __init__(self):
        self.output_path = None
        self._columns = None   # keys of the header row, in order
        self._row = {}
        self.last_row = {}     # the row most recently dumped
        self._append = False
        self._started = False  # the file has been created or opened for appending
        self._extras = {}      # TensorBoard-only scalars of the current row
        self._tensorboard = None
        self._dumped = 0

    @property
    def tensorboard_enabled(self):
        return self._tensorboard is not None

    def configure_tensorboard(self, logdir):
        """Rank 0 writes TensorBoard event files into logdir from the next dump on."""
        if mpi_util.is_root():
            from util.tensorboard import ScalarWriter
            self._tensorboard = ScalarWriter(logdir)

    def log_scalar(self, key, val):
        """A TensorBoard-only value of the current row (not a column of the file)."""
        self._extras[key] = val

    def configure_output_file(self, path, append=False):
        """Rows go to `path` from the next dump on; the file is created (or, with append, kept:
        resumed runs) at the first dump, so building a world alone never touches it."""
        self.output_path = path
        self._append = append and os.path.isfile(path) and os.path.getsize(path) > 0

    def log_tabular(self, key, val):
        if self._columns is not None and key not in self._columns:
            raise KeyError(f"log column {key!r} was not in the first row ({', '.join(self._columns)})")
        if key in self._row:
            raise KeyError(f"log column {key!r} logged twice in one row")
        self._row[key] = val

    def _widths(self):
        return [max(len(k), MIN_COLUMN_WIDTH) for k in self._columns]

    def _fix_columns(self):
        if self._columns is None:
            self._columns = list(self._row)
        missing = [k for k in self._columns if k not in self._row]
        if missing:
            raise KeyError(f"log row lacks column(s) {', '.join(missing)}")

    def dump_tabular(self):
        """Writes the current row to the file (rank 0, when configured) and starts a new row."""
        self._fix_columns()
        if mpi_util.is_root() and self.output_path:
            widths = self._widths()
            lines = []
            if not self._started:
                os.makedirs(os.path.dirname(os.path.abspath(self.output_path)), exist_ok=True)
                if self._append:
                    self._widen_old_log(widths)
                else:
                    lines.append(" ".join(f"{k:>{w}}" for k, w in zip(self._columns, widths)))
            lines.append(" ".join(f"{_format(self._row[k]):>{w}}" for k, w in zip(self._columns, widths)))
            _write_rows(self.output_path, "\n".join(lines) + "\n", append=self._started or self._append)
            self._started = True
        if self._tensorboard is not None:
            self._tensorboard.write(int(self._row.get("Iteration", self._dumped)), {**self._row, **self._extras})
        self._dumped += 1
        self.last_row, self._row, self._extras = self._row, {}, {}


    def _widen_old_log(self, widths):
        """Before a resumed run's first row: rewrites a log whose header lacks some of this run's
        columns with the full header, its rows holding nan in the new columns."""
        with open(self.output_path) as f:
            lines = f.read().splitlines()
        old = lines[0].split() if lines else []
        if old == self._columns:
            return
        dropped = [k for k in old if k not in self._columns]
        if dropped:
            raise ValueError(f"{self.output_path}: the log has column(s) {', '.join(dropped)} that this run does "
                             "not log; resume with the version that began it, or start a new output path")
        text = [" ".join(f"{k:>{w}}" for k, w in zip(self._columns, widths))]
        for line in lines[1:]:
            vals = dict(zip(old, line.split()))
            text.append(" ".join(f"{vals.get(k, 'nan'):>{w}}" for k, w in zip(self._columns, widths)))
        write_bytes(self.output_path, ("\n".join(text) + "\n").encode())
        print(f"{self.output_path}: new log column(s) {', '.join(k for k in self._columns if k not in old)}; "
              "earlier rows hold nan there", flush=True)


def _write_rows(path, text, append):
    """The row(s) in one write() call on a file opened for appending: a process killed at any
    moment leaves whole rows (the kernel finishes a write it started). A new log (no append)
    replaces the old one by a rename."""
    data = text.encode()
    if not append:
        write_bytes(path, data)
        return
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)
