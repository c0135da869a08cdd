"""Layers point one way: target -> dialects -> lowering | runtime -> frontends -> vis -> tools.

Every `ipu_mlir` import in a package's files (top-level or inside a function, absolute or
relative: `from ..runtime import x` in `lowering/` is `ipu_mlir.runtime`) must name a package at
a lower layer, or the package itself; lowering and runtime never import each other.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
LAYER = {"target": 0, "dialects": 1, "lowering": 2, "runtime": 2, "frontends": 3, "vis": 4, "tools": 5}


def _imports(path: Path, root: Path = REPO) -> list[tuple[int, str]]:
    """The `ipu_mlir` modules `path` imports, relative imports resolved against its package."""
    tree = ast.parse(path.read_text(), str(path))
    package = ["ipu_mlir", *path.parent.relative_to(root).parts]
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.append((node.lineno, node.module))
        elif isinstance(node, ast.ImportFrom):
            base = ".".join(package[: len(package) - node.level + 1])
            if node.module:
                found.append((node.lineno, f"{base}.{node.module}"))
            else:  # `from .. import ipu`: each name is a module of that package
                found.extend((node.lineno, f"{base}.{alias.name}") for alias in node.names)
        elif isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name) for alias in node.names)
    return [(line, name) for line, name in found if name.startswith("ipu_mlir.")]


def test_relative_imports_resolve_to_their_package(tmp_path: Path) -> None:
    """`from ..runtime import x` in lowering/ is ipu_mlir.runtime: a relative import cannot
    hide a layer violation."""
    (tmp_path / "lowering").mkdir()
    probe = tmp_path / "lowering" / "probe.py"
    probe.write_text("from ..runtime import simulator\nfrom .plan import Plan\nfrom .. import target\n")
    assert [name for _, name in _imports(probe, tmp_path)] == ["ipu_mlir.runtime", "ipu_mlir.lowering.plan", "ipu_mlir.target"]
    names = {name for _, name in _imports(REPO / "dialects" / "ops" / "generic.py")}
    assert "ipu_mlir.dialects.ipu" in names  # `from .. import ipu`


@pytest.mark.parametrize("package", sorted(LAYER))
def test_imports_point_down(package: str) -> None:
    wrong = []
    for path in sorted((REPO / package).rglob("*.py")):
        for line, name in _imports(path):
            imported = name.split(".")[1]
            same = imported == package
            if not same and (LAYER[imported] >= LAYER[package]):
                wrong.append(f"{path.relative_to(REPO)}:{line}: {package} imports {name}")
    assert not wrong, "\n".join(wrong)


def test_no_function_local_imports_of_our_packages() -> None:
    """A function-local import of our own code hides a cycle; imports belong at the top."""
    hidden = []
    for package in LAYER:
        for path in sorted((REPO / package).rglob("*.py")):
            tree = ast.parse(path.read_text(), str(path))
            for function in ast.walk(tree):
                if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    continue
                for node in ast.walk(function):
                    module = node.module if isinstance(node, ast.ImportFrom) else None
                    if isinstance(node, ast.ImportFrom) and (node.level > 0 or (module or "").startswith("ipu_mlir")):
                        hidden.append(f"{path.relative_to(REPO)}:{node.lineno}: imports {module or '.'} inside {function.name}()")
    assert not hidden, "\n".join(hidden)
