"""cached_njit: numba's njit(cache=True), with a cache that a change to any module the function's
file imports makes stale, not only a change to that file.

A compiled function's machine code includes the code of every compiled function it calls and the
values of the globals it reads. numba's own cache (njit(cache=True)) is checked against a hash of
the function's own source file only: where env/sim/bullet_c_api.py's stable_pd_update calls
tree_dynamics.clamped_joint_torques, an edit of tree_dynamics.py alone (a `git pull`) left the
cached stable_pd_update running the old torques while the Python path ran the new ones.

Here the cache's source stamp is numba's stamp plus one SHA-256 digest of the function's file and
of every project module it imports, followed through their own imports (the import closure): the
`import` and `from ... import` statements of each file (anywhere in it, relative ones included),
resolved to files under the project root (the directory the function's top-level package sits in:
`a.b.c` in /r/a/b/c.py has root /r). `import a.b` names a/b.py (or a/b/__init__.py) and a's
__init__.py; `from a.b import c` names a/b's file and, where c is a module, a/b/c.py. Modules
outside the root (numpy, numba, the standard library, a virtual environment inside the root: their
names do not resolve to files under it) are left out. Any change to a file of the closure gives
another stamp: numba finds the index stale, compiles again and overwrites it, as when the
function's own file changes; an edit of a module the function does not call costs one needless
compile, never a stale one. A module reached otherwise than by an import statement (importlib, a
bare `import a` followed by `a.b.f` with a.b imported elsewhere) is not followed.

The hook: numba's Dispatcher.enable_caching (what cache=True calls) sets the dispatcher's `_cache`
to a FunctionCache; cached_njit sets it to ImportClosureCache, a FunctionCache whose CacheImpl hands
numba a locator (whichever numba chose: __pycache__, NUMBA_CACHE_DIR, the user-wide directory) with
the stamp extended. Index and data files, their names and places are numba's. The digest is taken
once per process, when the function is decorated (its module imported). `_cache` is numba's own
attribute: tests/test_compiled_cache.py checks, in fresh processes, that an edit of an imported
module reaches the cached caller with the installed numba.
"""
import ast
import functools
import hashlib
import inspect
from pathlib import Path

from numba import njit
from numba.core.caching import CompileResultCacheImpl, FunctionCache
from numba.core.dispatcher import Dispatcher


def cached_njit(func):
    """njit(func) with its compiled code cached on disk, recompiled when the function's file or any
    project module in its import closure changes (see the module docstring)."""
    dispatcher = njit(func)
    if isinstance(dispatcher, Dispatcher):     # not so under NUMBA_DISABLE_JIT=1
        dispatcher._cache = ImportClosureCache(func)
    return dispatcher


class _ImportClosureCacheImpl(CompileResultCacheImpl):
    """numba's CacheImpl for compiled functions, its locator's stamp extended by the closure's digest."""

    def __init__(self, py_func):
        self._closure_digest = import_closure_digest(inspect.getfile(py_func), py_func.__module__)
        super().__init__(py_func)

    @property
    def locator(self):
        return _StampedLocator(super().locator, self._closure_digest)


class ImportClosureCache(FunctionCache):
    """numba's FunctionCache, stamped with the function's import closure."""
    _impl_class = _ImportClosureCacheImpl


class _StampedLocator:
    """numba's cache locator with the import closure's digest added to its source stamp."""

    def __init__(self, locator, digest):
        self._locator = locator
        self._digest = digest

    def get_source_stamp(self):
        return self._locator.get_source_stamp(), self._digest

    def __getattr__(self, name):
        return getattr(self._locator, name)


@functools.lru_cache(maxsize=None)
def import_closure_digest(path, module_name):
    """SHA-256 hex digest of the file at `path` (the module `module_name`) and of every project
    module in its import closure, over their paths relative to the project root and contents."""
    root, files = import_closure(path, module_name)
    digest = hashlib.sha256()
    for file in sorted(files):
        digest.update(str(file.relative_to(root)).encode() + b"\0")
        digest.update(hashlib.sha256(file.read_bytes()).digest())
    return digest.hexdigest()


def import_closure(path, module_name):
    """(project root, the set of files: the module's own and every project module its imports
    reach, transitively)."""
    path = Path(path).resolve()
    root = path.parents[module_name.count(".") + (path.name == "__init__.py")]
    files, todo = set(), [(path, module_name)]
    while todo:
        file, name = todo.pop()
        if file in files:
            continue
        files.add(file)
        package = name if file.name == "__init__.py" else name.rpartition(".")[0]
        todo += filter(None, (_module_file(root, imported) for imported in _imported_names(file, package)))
    return root, files


def _imported_names(file, package):
    """The dotted names a file's import statements may load: `import a.b` gives a.b and a;
    `from .x import y` in package p gives p.x.y and p.x."""
    names = []
    for node in ast.walk(ast.parse(file.read_bytes(), filename=str(file))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                parts = alias.name.split(".")
                names += [".".join(parts[:n]) for n in range(1, len(parts) + 1)]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(filter(None, [package.rsplit(".", node.level - 1)[0], base]))
            names += [base] + [f"{base}.{alias.name}" for alias in node.names if alias.name != "*"]
    return names


def _module_file(root, name):
    """(file, module name) of the module `name` under the project root, or None."""
    if not name:
        return None
    stem = root.joinpath(*name.split("."))
    for file in (stem.with_suffix(".py"), stem / "__init__.py"):
        if file.is_file():
            return file, name
    return None
