"""The layers import downwards only (docs/ARCHITECTURE.md): env/ imports nothing from
learning/ or app/, learning/ nothing from app/ and from env/ only the Env API's modules."""
import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
ENV_API_MODULES = {"env.env", "env.tracking_error", "env.style_error"}   # the API and its metrics' names


def imported_modules(package):
    """(file, module) of every import statement in the package's files (lazy ones too)."""
    for path in sorted((ROOT / package).rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                yield from ((path, alias.name) for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                yield path, node.module


def top(module):
    return module.split(".")[0]


@pytest.mark.parametrize("package,forbidden", [("env", {"learning", "app"}), ("learning", {"app"}),
                                               ("util", {"env", "learning", "app"})])
def test_no_upward_imports(package, forbidden):
    upward = [f"{path.relative_to(ROOT)}: {module}" for path, module in imported_modules(package)
              if top(module) in forbidden]
    assert upward == []


def test_learning_sees_the_env_through_its_api():
    beyond = [f"{path.relative_to(ROOT)}: {module}" for path, module in imported_modules("learning")
              if top(module) == "env" and module not in ENV_API_MODULES]
    assert beyond == []
