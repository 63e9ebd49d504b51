"""Where data files are found: as given (relative to the working directory), then relative to
the project root, then inside the pybullet wheel's data (which ships the humanoid3d clips)."""
import json
from pathlib import Path

import pybullet_data

EXTRA_MOTION_DIRS = ("sie", "amass", "long")


class ExtraDataNotFound(FileNotFoundError):
    """A clip of DeepMimic's that does not ship with the project and has not been fetched
    (`make data-extra`)."""


def project_root():
    return Path(__file__).resolve().parent.parent


def resolve_data_path(path):
    """Absolute path of the first existing candidate; FileNotFoundError naming every place tried."""
    given = Path(path)
    candidates = [given, project_root() / given, Path(pybullet_data.getDataPath()) / given]
    for candidate in candidates:
        if candidate.is_file():
            return candidate.resolve()
    places = ", ".join(str(c.parent.resolve()) for c in candidates[1:])
    if is_extra_data(path):
        raise ExtraDataNotFound(f"data file not found: {path} (not shipped with the project: "
                                "`make data-extra` downloads it, see data/README.md)")
    raise FileNotFoundError(f"data file not found: {path} (looked in the working directory, {places})")


def is_extra_data(path):
    """True for DeepMimic's clips kept out of the repository (other licences, size), which
    `make data-extra` (scripts/fetch_data_extra.py) downloads into data/motions/."""
    parts = Path(path).parts
    return any(parts[i:i + 2] == ("motions", extra) for i in range(len(parts) - 1) for extra in EXTRA_MOTION_DIRS)


def read_data_text(path, error=ValueError):
    """The text of a file; `error` naming the file when it is binary or cannot be read."""
    try:
        return Path(path).read_text()
    except UnicodeDecodeError as err:
        raise error(f"{path}: not a UTF-8 text file (byte {err.start})") from None
    except (IsADirectoryError, PermissionError) as err:
        raise error(f"{path}: cannot be read ({err.strerror})") from None


def load_json(path, error=ValueError):
    """(resolved path, parsed JSON) of a data file; `error` (one line naming the file) on bad JSON,
    binary content, or a number that is NaN or infinite (NaN, Infinity, 1e999)."""
    resolved = resolve_data_path(path)
    text = read_data_text(resolved, error)

    def finite(token):
        value = float(token)
        if value != value or value in (float("inf"), float("-inf")):
            raise ValueError(f"the number {token[:40]} is not finite")
        return value

    def no_constant(token):
        raise ValueError(f"{token} is not a finite number")

    try:
        return resolved, json.loads(text, parse_float=finite, parse_constant=no_constant)
    except json.JSONDecodeError as err:
        raise error(f"{resolved}: not valid JSON ({err})") from None
    except ValueError as err:
        raise error(f"{resolved}: {err}") from None
