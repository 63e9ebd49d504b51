"""Fixtures of the reference-core tests (marker `reference`; `make test-reference DEEPMIMIC=<path>`).

DEEPMIMIC names a DeepMimic checkout; the session builds its core (cached, build_core.sh) and runs
it in one child process (core_server.py) that every test re-initialises with its own arguments.
Without DEEPMIMIC, or when the core does not build, every test here fails (never skips): a
reference run that compared nothing must not look like a pass.
"""
import pytest

from tests.reference_core import harness


@pytest.fixture(scope="session")
def checkout():
    path = harness.checkout_path()
    if path is None:
        pytest.fail("DEEPMIMIC is not set: run `make test-reference DEEPMIMIC=<DeepMimic checkout>`", pytrace=False)
    if not (path / "DeepMimicCore").is_dir() or not (path / "args").is_dir():
        pytest.fail(f"DEEPMIMIC={path} is not a DeepMimic checkout (no DeepMimicCore/ or args/)", pytrace=False)
    return path


@pytest.fixture(scope="session")
def core(checkout):
    try:
        build = harness.build_core(checkout)
    except harness.CoreError as err:
        pytest.fail(str(err), pytrace=False)
    proc = harness.CoreProcess(build, checkout)
    yield proc
    proc.close()


@pytest.fixture
def make_sides(core, checkout, tmp_path):
    """make_sides(case) -> (ours, theirs), both built from the case's files; closed after the test."""
    made = []

    def make(case):
        ours_argv, theirs_argv = harness.case_args(case, checkout, tmp_path)
        ours, theirs = harness.OurSide(ours_argv), harness.TheirSide(core, theirs_argv)
        made.append(ours)
        return ours, theirs

    yield make
    for side in made:
        side.close()
