"""util/compiled_cache.py: a cached compiled function is compiled again when a project module it
imports changes, not only its own file; every cached compiled function of the project uses it."""
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from env.sim import bullet_c_api
from util.compiled_cache import ImportClosureCache, import_closure

ROOT = Path(__file__).resolve().parent.parent
NUMBA_CACHE = re.compile(r"^\s*@(numba\.)?n?jit\(.*cache\s*=\s*True", re.MULTILINE)

CALLER = """from pkg.mid import leaf
from util.compiled_cache import cached_njit


@cached_njit
def run(x):
    return leaf.scale(x)
"""
LEAF = """from util.compiled_cache import cached_njit


@cached_njit
def scale(x):
    return 2.0 * x
"""
REPORT = """import json
from pkg import caller
print(json.dumps([caller.run(1.0), sum(caller.run.stats.cache_hits.values())]))
"""


def run_python(code, path, *args):
    """The JSON of the last stdout line of `code` run in a fresh interpreter in `path`, with `path`
    first on its module path (then this project, for util.compiled_cache and tests)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(path), str(ROOT)])}
    out = subprocess.run([sys.executable, "-c", code, str(path), *map(str, args)], cwd=path, env=env,
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_an_edit_of_a_module_reached_by_imports_recompiles_the_caller(tmp_path):
    """caller.run calls leaf.scale, leaf imported relatively through mid: an edit of leaf.py alone
    reaches run's cached code; with nothing edited, or an unimported module edited, run's code is
    loaded from the cache."""
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "mid.py").write_text("from . import leaf\n")
    (pkg / "leaf.py").write_text(LEAF)
    (pkg / "caller.py").write_text(CALLER)
    (pkg / "other.py").write_text("X = 1\n")
    assert run_python(REPORT, tmp_path) == [2.0, 0]       # compiled and saved
    assert run_python(REPORT, tmp_path) == [2.0, 1]       # loaded
    (pkg / "leaf.py").write_text(LEAF.replace("2.0 * x", "3.0 * x"))
    assert run_python(REPORT, tmp_path) == [3.0, 0]
    (pkg / "other.py").write_text("X = 2\n")
    assert run_python(REPORT, tmp_path) == [3.0, 1]


def test_the_compiled_update_is_keyed_on_tree_dynamics():
    root, files = import_closure(bullet_c_api.__file__, bullet_c_api.__name__)
    assert root == ROOT
    assert {f.relative_to(ROOT).as_posix() for f in files} >= {
        "env/sim/bullet_c_api.py", "env/sim/tree_dynamics.py", "env/sim/wheel_symbols.py", "util/compiled_cache.py"}
    assert isinstance(bullet_c_api.stable_pd_update._cache, ImportClosureCache)


def test_no_cached_compiled_function_bypasses_it():
    """numba's own cache=True keys a cache on the function's file only."""
    sources = [f for d in ("env", "learning", "util") for f in (ROOT / d).rglob("*.py")]
    assert ROOT / "env/sim/tree_dynamics.py" in sources
    assert [str(f) for f in sources if NUMBA_CACHE.search(f.read_text())] == []


COMPARE = """import json, sys
import numpy as np
import env.sim.bullet_c_api
from env.anim.character import CharacterDesc
from env.sim.ctrl_params import CtrlParams
from tests.test_bullet_c_api import character, rollout
assert env.sim.bullet_c_api.__file__.startswith(sys.argv[1])
desc = CharacterDesc.load(sys.argv[2] + "/data/characters/humanoid3d.txt")
params = CtrlParams.load(sys.argv[2] + "/data/controllers/humanoid3d_ctrl.txt", desc)
gains = params.kp, params.kd, np.array([j.torque_lim for j in desc.joints])
runs = []
for c_api in (True, False):
    world, sim, pd = character(desc, gains, seed=3, c_api=c_api)
    assert pd.c_api == c_api
    runs.append(rollout(world, sim, pd, 30))
    world.shutdown()
print(json.dumps([runs[0].tolist(), runs[1].tolist()]))
"""


@pytest.mark.slow
def test_edited_tree_dynamics_reaches_the_compiled_update(tmp_path):
    """A copy of env/ and util/ (with their compiled caches): the torques of
    tree_dynamics.clamped_joint_torques halved in the copy, a fresh process's compiled stable-PD
    update (bullet_c_api, whose file is unchanged) commands the halved torques, as the Python path
    does."""
    for package in ("env", "util"):
        shutil.copytree(ROOT / package, tmp_path / package)
    compiled, python = (np.array(run) for run in run_python(COMPARE, tmp_path, ROOT))
    assert np.array_equal(compiled, python)
    tree = tmp_path / "env/sim/tree_dynamics.py"
    source = tree.read_text()
    assert source.count("    return tau[6:]\n") == 1
    tree.write_text(source.replace("    return tau[6:]\n", "    return 0.5 * tau[6:]\n"))
    compiled_after, python_after = (np.array(run) for run in run_python(COMPARE, tmp_path, ROOT))
    assert not np.array_equal(python_after, python)        # the edit took effect
    assert np.array_equal(compiled_after, python_after)
