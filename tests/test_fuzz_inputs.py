"""Property-based fuzzing of every data file kind: a mutated file either loads (with finite
numbers) or raises ValueError/FileNotFoundError whose message is one line naming the file."""
import json
import math
import shutil
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from env.anim.character import CharacterDesc
from env.anim.motion import Motion
from env.scenes.imitate_amp import MotionSet
from env.sim.ctrl_params import CtrlParams
from env.sim.world import World
from learning import checkpoint
from learning.agent_builder import load_agent_config
from learning.demos import load_demos
from util.arg_parser import ArgParser
from util.paths import project_root, resolve_data_path

ROOT = project_root()
CHAR_FILE = ROOT / "data/characters/humanoid3d.txt"
CASES = Counter()
# derandomize: the same cases on every run, so make test is deterministic (a random run found the
# unterminated-header case below; new exploration: edit the seed-free settings locally)
FUZZ = settings(max_examples=25, deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])

BAD_VALUES = st.sampled_from([float("nan"), float("inf"), 1e308, -1e308, 10 ** 30, "text", None,
                              True, [], {}, [1.0, 2.0], {"a": 1}, -1, 0])


@pytest.fixture(scope="module", autouse=True)
def report_counts():
    yield
    sys.__stdout__.write("\nfuzz cases per file kind: " + json.dumps(dict(sorted(CASES.items()))) + "\n")


@pytest.fixture(scope="module")
def char_desc():
    return CharacterDesc.load(str(CHAR_FILE))


def _paths(node, prefix=()):
    """Every (path of keys/indices) into a JSON value, the root included, at most 4 levels deep."""
    yield prefix
    if len(prefix) >= 4:
        return
    items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
    for k, v in items:
        yield from _paths(v, prefix + (k,))


@st.composite
def json_mutation(draw, data):
    """A JSON text: one value replaced by a bad one, or one key/element removed."""
    data = json.loads(json.dumps(data))
    paths = list(_paths(data))
    path = draw(st.sampled_from(paths[1:] or paths))
    parent = data
    for k in path[:-1]:
        parent = parent[k]
    if draw(st.booleans()):
        del parent[path[-1]]
    else:
        parent[path[-1]] = draw(BAD_VALUES)
    return json.dumps(data).encode()


@st.composite
def byte_mutation(draw, raw):
    """Bytes: truncated, a span overwritten with garbage, or wholly binary garbage."""
    kind = draw(st.sampled_from(["truncate", "splice", "garbage"]))
    if kind == "truncate":
        return raw[:draw(st.integers(0, max(len(raw) - 1, 0)))]
    if kind == "splice":
        start = draw(st.integers(0, len(raw)))
        junk = draw(st.binary(min_size=1, max_size=64))
        return raw[:start] + junk + raw[start + len(junk):]
    return draw(st.binary(min_size=0, max_size=256))


def mutated(raw, as_json):
    if as_json:
        return st.one_of(json_mutation(json.loads(raw)), byte_mutation(raw))
    return byte_mutation(raw)


def assert_loads_or_one_line(path, load):
    """Calls load(); a failure must be ValueError/FileNotFoundError, one line, naming `path`."""
    try:
        result = load()
    except (ValueError, FileNotFoundError) as err:
        message = str(err)
        assert "\n" not in message, message
        assert str(path) in message or str(Path(path).resolve()) in message, message
        return None
    return result


def _finite_arrays(obj):
    for value in vars(obj).values():
        if isinstance(value, np.ndarray) and np.issubdtype(value.dtype, np.floating):
            assert np.all(np.isfinite(value)), "a non-finite number was accepted"


def _fuzz_json_file(tmp_path, kind, source, mutation, load):
    path = tmp_path / f"{kind}.txt"
    path.write_bytes(mutation)
    CASES[kind] += 1
    return assert_loads_or_one_line(path, lambda: load(str(path)))


RAW = {
    "character": CHAR_FILE.read_bytes(),
    "controller": (ROOT / "data/controllers/humanoid3d_ctrl.txt").read_bytes(),
    "motion": resolve_data_path("data/motions/humanoid3d_walk.txt").read_bytes(),
    "agent": (ROOT / "data/agents/ct_agent_humanoid_ppo.txt").read_bytes(),
    "agent_amp": (ROOT / "data/agents/ct_agent_humanoid_amp.txt").read_bytes(),
    "terrain": (ROOT / "data/terrain/plane.txt").read_bytes(),
    "dataset": (ROOT / "data/datasets/dataset_locomotion.txt").read_bytes(),
    "args": (ROOT / "args/train_humanoid3d_walk_args.txt").read_bytes(),
    "demos": (ROOT / "data/demos/humanoid3d_walk_demos.npz").read_bytes(),
}


@FUZZ
@given(mutation=mutated(RAW["character"], True))
def test_character_file(tmp_path, mutation):
    desc = _fuzz_json_file(tmp_path, "character", CHAR_FILE, mutation, CharacterDesc.load)
    if desc is not None:
        for body in desc.bodies:
            assert all(math.isfinite(float(v)) for v in np.ravel(body.__dict__.get("mass", 0.0)))


@FUZZ
@given(mutation=mutated(RAW["controller"], True))
def test_controller_file(tmp_path, char_desc, mutation):
    params = _fuzz_json_file(tmp_path, "controller", None, mutation,
                             lambda p: CtrlParams.load(p, char_desc))
    if params is not None:
        _finite_arrays(params)


@FUZZ
@given(mutation=mutated(RAW["motion"], True))
def test_motion_clip(tmp_path, char_desc, mutation):
    motion = _fuzz_json_file(tmp_path, "motion", None, mutation, lambda p: Motion.load(p, char_desc))
    if motion is not None:
        _finite_arrays(motion)


@FUZZ
@given(mutation=st.one_of(mutated(RAW["agent"], True), mutated(RAW["agent_amp"], True)))
def test_agent_file(tmp_path, mutation):
    _fuzz_json_file(tmp_path, "agent", None, mutation, load_agent_config)


@settings(FUZZ, max_examples=10)
@given(mutation=mutated(RAW["terrain"], True))
def test_terrain_file(tmp_path, mutation):
    def build(path):
        world = World(terrain_file=path)
        world.shutdown()
    _fuzz_json_file(tmp_path, "terrain", None, mutation, build)


@settings(FUZZ, max_examples=10)
@given(mutation=mutated(RAW["dataset"], True))
def test_dataset_file(tmp_path, char_desc, mutation):
    _fuzz_json_file(tmp_path, "dataset", None, mutation, lambda p: MotionSet.load(p, char_desc))


@FUZZ
@given(mutation=byte_mutation(RAW["args"]))
def test_args_file(tmp_path, mutation):
    _fuzz_json_file(tmp_path, "args", None, mutation, lambda p: ArgParser().load_file(p))


@FUZZ
@given(mutation=byte_mutation(RAW["demos"]))
def test_demos_file(tmp_path, mutation):
    path = tmp_path / "demos.npz"
    path.write_bytes(mutation)
    CASES["demos"] += 1
    assert_loads_or_one_line(path, lambda: load_demos(str(path)))


@pytest.fixture(scope="module")
def small_checkpoint(tmp_path_factory):
    prefix = tmp_path_factory.mktemp("ckpt") / "model.ckpt"
    checkpoint.write_checkpoint(str(prefix), {"agent/main/actor/w": np.ones((3, 2), np.float32),
                                              "agent/resource/s_norm/count": np.ones(1, np.int32)})
    return prefix


@settings(FUZZ, max_examples=20)
@given(part=st.sampled_from([".index", ".data-00000-of-00001"]), data=st.data())
def test_checkpoint_files(tmp_path, small_checkpoint, part, data):
    prefix = tmp_path / "model.ckpt"
    for suffix in (".index", ".data-00000-of-00001"):
        shutil.copy(str(small_checkpoint) + suffix, str(prefix) + suffix)
    target = Path(str(prefix) + part)
    target.write_bytes(data.draw(byte_mutation(target.read_bytes())))
    CASES["checkpoint"] += 1
    tensors = assert_loads_or_one_line(prefix, lambda: checkpoint.read_checkpoint(
        checkpoint.resolve_checkpoint(str(prefix))))
    if tensors is not None:
        for value in tensors.values():
            assert np.all(np.isfinite(value))


@pytest.mark.parametrize("kind", ["character", "motion", "agent", "args", "demos", "checkpoint"])
@pytest.mark.parametrize("where", ["directory", "missing"])
def test_directory_or_missing_path_is_one_line(tmp_path, char_desc, kind, where):
    path = tmp_path / "thing.txt"
    if where == "directory":
        path.mkdir()
        if kind == "checkpoint":
            Path(str(path) + ".index").mkdir()
    loaders = {
        "character": lambda: CharacterDesc.load(str(path)),
        "motion": lambda: Motion.load(str(path), char_desc),
        "agent": lambda: load_agent_config(str(path)),
        "args": lambda: ArgParser().load_file(str(path)),
        "demos": lambda: load_demos(str(path)),
        "checkpoint": lambda: checkpoint.read_checkpoint(checkpoint.resolve_checkpoint(str(path))),
    }
    CASES["directory/missing"] += 1
    with pytest.raises((ValueError, FileNotFoundError)) as err:
        loaders[kind]()
    assert "\n" not in str(err.value) and str(path) in str(err.value)


def test_demos_file_with_an_unterminated_npy_header(tmp_path):
    """A case the fuzzer found: numpy parses a .npy header with Python's tokenizer, which raises
    tokenize.TokenError (not a ValueError) on an unterminated literal."""
    import io
    import zipfile

    from learning.demos import ARRAYS
    header = b"{'descr': '<f4', 'fortran_order': False, 'shape': (3,"
    header += b" " * (118 - len(header)) + b"\n"
    npy = b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header + b"\x00" * 12
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for name in ARRAYS + ("metadata",):
            z.writestr(f"{name}.npy", npy)
    path = tmp_path / "demos.npz"
    path.write_bytes(buf.getvalue())
    with pytest.raises(ValueError, match=f"{path}: not a readable demonstration file"):
        load_demos(str(path))
