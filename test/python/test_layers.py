"""Layers point one way: target -> dialects -> lowering | runtime -> frontends -> vis -> tools.

Every `ipu_mlir` import in a package's files (top-level or inside a function) must name a
package at a lower layer, or the package itself; lowering and runtime never import each other.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
LAYER = {"target": 0, "dialects": 1, "lowering": 2, "runtime": 2, "frontends": 3, "vis": 4, "tools": 5}


def _imports(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(), str(path))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append((node.lineno, node.module))
        elif isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name) for alias in node.names)
    return [(line, name) for line, name in found if name.startswith("ipu_mlir.")]


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
