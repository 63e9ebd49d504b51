"""DeepMimic's argument files and command lines.

Syntax: `--key v1 v2 ...`; a line whose first non-blank character is `#` is a comment.
`--arg_file F` on the command line appends F's arguments after the command line's, and the first
occurrence of a key wins, so the command line overrides the file. Every value is kept as a list
of strings; the typed getters convert and raise `ArgError` (a one-line message naming the key and
the file it came from) on a wrong type or a missing required key. The parser records which keys
were asked for, so that `unused_keys` can name the ones given but never read (typos).
"""
import difflib
import math
import shlex
from pathlib import Path

from util.paths import read_data_text

_TRUE = {"true", "1", "yes", "on"}
_FALSE = {"false", "0", "no", "off"}


class ArgError(ValueError):
    """A missing, malformed or wrongly typed argument; the message names the key and source."""


def _parse_float(text):
    value = float(text)
    if math.isnan(value):      # no key takes NaN ("inf" is a valid limit for some)
        raise ValueError(text)
    return value


def _parse_int(text):
    return int(text)


def _parse_bool(text):
    low = text.lower()
    if low in _TRUE:
        return True
    if low in _FALSE:
        return False
    raise ValueError(text)


class ArgParser:
    def __init__(self):
        self.table = {}    # key -> list of string values
        self.sources = {}  # key -> where it was read ("command line" or a file path)
        self.asked = set()  # keys some code asked for (shared by copy.copy copies)

    def clear(self):
        self.table.clear()
        self.sources.clear()
        self.asked.clear()

    def load_args(self, arg_strs, source="command line"):
        """Reads `--key v...` tokens; returns the arg_file paths named among them."""
        key = None
        vals = []
        arg_files = []
        for token in arg_strs:
            if token.startswith("--") and len(token) > 2 and not _is_number(token):
                self._add(key, vals, source)
                key, vals = token[2:], []
            elif key is None:
                raise ArgError(f"{source}: value {token!r} comes before any --key")
            else:
                vals.append(token)
        self._add(key, vals, source)
        if source == "command line" and "arg_file" in self.table:
            arg_files = list(self.table["arg_file"])
        return arg_files

    def load_command_line(self, argv):
        """Command line first, then every --arg_file it names (first occurrence wins)."""
        for path in self.load_args(argv):
            self.load_file(path)

    def load_file(self, path):
        path = Path(path)
        if not path.is_file():
            raise ArgError(f"{path}: argument file not found")
        tokens = []
        for line_no, line in enumerate(read_data_text(path, ArgError).splitlines(), 1):
            stripped = line.strip()
            if not stripped or stripped.startswith("#"):
                continue
            try:
                tokens.extend(shlex.split(stripped, comments=True))
            except ValueError as err:
                raise ArgError(f"{path}:{line_no}: {err}") from None
        self.load_args(tokens, source=str(path))

    def _add(self, key, vals, source):
        if key is None:
            return
        if key not in self.table:  # first occurrence wins
            self.table[key] = vals
            self.sources[key] = source

    def has_key(self, key):
        self.asked.add(key)
        return key in self.table

    def set(self, key, vals):
        """Overrides a key (used by entry points that add derived arguments)."""
        self.table[key] = [str(v) for v in (vals if isinstance(vals, (list, tuple)) else [vals])]
        self.sources[key] = "program"

    def source(self, key):
        return self.sources.get(key, "arguments")

    # ---- typed getters ----
    def _values(self, key, required):
        self.asked.add(key)
        if key not in self.table and required:
            raise ArgError(f"missing required argument --{key}")
        return self.table.get(key)

    def _convert(self, key, text, conv, type_name):
        try:
            return conv(text)
        except ValueError:
            raise ArgError(f"{self.source(key)}: --{key} expects {type_name}, got {text!r}") from None

    def _scalar(self, key, default, required, conv, type_name):
        vals = self._values(key, required)
        if vals is None:
            return default
        if not vals:
            raise ArgError(f"{self.source(key)}: --{key} has no value")
        return self._convert(key, vals[0], conv, type_name)

    def _list(self, key, default, required, conv, type_name):
        vals = self._values(key, required)
        if vals is None:
            return list(default)
        return [self._convert(key, v, conv, type_name) for v in vals]

    def parse_string(self, key, default="", required=False):
        return self._scalar(key, default, required, str, "a string")

    def parse_strings(self, key, default=(), required=False):
        return self._list(key, default, required, str, "strings")

    def parse_int(self, key, default=0, required=False, at_least=None):
        value = self._scalar(key, default, required, _parse_int, "an integer")
        if self.has_key(key):
            self._check_range(key, value, at_least, None, False)
        return value

    def parse_ints(self, key, default=(), required=False):
        return self._list(key, default, required, _parse_int, "integers")

    def parse_float(self, key, default=0.0, required=False, at_least=None, above=None, finite=False, at_most=None):
        """A number; with at_least / above / at_most / finite, a value outside is an ArgError naming it."""
        value = self._scalar(key, default, required, _parse_float, "a number")
        if self.has_key(key):
            self._check_range(key, value, at_least, above, finite, at_most)
        return value

    def parse_floats(self, key, default=(), required=False, count=None, finite=False):
        """Numbers; with count, exactly that many; with finite, no inf."""
        values = self._list(key, default, required, _parse_float, "numbers")
        if self.has_key(key):
            if count is not None and len(values) != count:
                raise ArgError(f"{self.source(key)}: --{key} expects {count} numbers, got {len(values)}")
            for value in values:
                self._check_range(key, value, None, None, finite)
        return values

    def _check_range(self, key, value, at_least, above, finite, at_most=None):
        if finite and not math.isfinite(value):
            raise ArgError(f"{self.source(key)}: --{key} {value}: must be finite")
        if at_least is not None and value < at_least:
            raise ArgError(f"{self.source(key)}: --{key} {value}: must be >= {at_least}")
        if above is not None and not value > above:
            raise ArgError(f"{self.source(key)}: --{key} {value}: must be > {above}")
        if at_most is not None and value > at_most:
            raise ArgError(f"{self.source(key)}: --{key} {value}: must be at most {at_most}")

    def parse_bool(self, key, default=False, required=False):
        return self._scalar(key, default, required, _parse_bool, "true or false")

    def parse_bools(self, key, default=(), required=False):
        return self._list(key, default, required, _parse_bool, "true or false values")

    def unused_keys(self, known=()):
        """Keys given (on the command line or in a file) that no code asked for, except `known`
        ones (keys another entry point reads), in the order given."""
        skip = self.asked | set(known) | {"arg_file"}
        return [k for k in self.table if k not in skip and self.sources[k] != "program"]

    def unused_warning(self, known=()):
        """One line naming every unused key with its file and the closest key asked for, or ''.

        `warning: args/x.txt: unused argument --tme_lim_min (did you mean --time_lim_min?)`"""
        parts = []
        for key in self.unused_keys(known):
            close = difflib.get_close_matches(key, sorted(self.asked | set(known)), n=1)
            hint = f" (did you mean --{close[0]}?)" if close else ""
            parts.append(f"{self.source(key)}: unused argument --{key}{hint}")
        return "warning: " + "; ".join(parts) if parts else ""

    def to_lines(self):
        """The resolved arguments, one `--key values` line each (copied into output/)."""
        return [" ".join(["--" + k] + [shlex.quote(v) for v in vals])
                for k, vals in self.table.items() if k != "arg_file"]


def _is_number(token):
    try:
        float(token)
        return True
    except ValueError:
        return False


def load_args(argv):
    """An ArgParser holding the command line `argv` and the arg files it names."""
    parser = ArgParser()
    parser.load_command_line(argv)
    return parser
