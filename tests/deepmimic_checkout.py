"""A DeepMimic checkout for the tests that compare against its files: the DEEPMIMIC environment
variable (as `make test-reference DEEPMIMIC=<path>` takes it). Without it those tests skip, and
`make test` prints why (-rs)."""
import os
from pathlib import Path

import pytest

DEEPMIMIC = Path(os.environ["DEEPMIMIC"]) if os.environ.get("DEEPMIMIC") else None
SKIP_REASON = "DEEPMIMIC is not set to a DeepMimic checkout (compares against its files)"
needs_deepmimic = pytest.mark.skipif(DEEPMIMIC is None, reason=SKIP_REASON)


def deepmimic_path(relative):
    """DEEPMIMIC / relative; skips the calling test when DEEPMIMIC is not set or lacks the file."""
    if DEEPMIMIC is None:
        pytest.skip(SKIP_REASON)
    path = DEEPMIMIC / relative
    if not path.exists():
        pytest.skip(f"DEEPMIMIC={DEEPMIMIC} has no {relative}")
    return path
