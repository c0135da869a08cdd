"""Every console block of README.md and docs/ shows what the tools print today.

A block is either run here or by the test named in CHECKED_ELSEWHERE (a page with its own
fixtures: pictures, the extending and writing-passes examples, training). Here, each page's
blocks run in order in one scratch directory holding the repository's `examples/` and the
page's fixtures, `docs/examples/console/<page>/` (the `model.mlir`, `bad.mlir`, ... a page's
commands name). A `$ command` prints exactly the lines below it, except that:

- a line `...` stands for any number of lines, and `...` inside a line for any text;
- times in seconds (`6.90 s`) are not compared.

Commands that take minutes (full-size models) run only under `make docs-check`
(IPU_DOCS_ALL=1); their blocks are still parsed and listed here.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
FIXTURES = REPO / "docs" / "examples" / "console"

# Pages whose console blocks another test runs, with that test's file.
CHECKED_ELSEWHERE = {
    "docs/pictures.md": "test_vis_docs.py",
    "docs/extending.md": "test_extending.py",
    "docs/writing-passes.md": "test_ipu_opt.py",
    "docs/training.md": "test_training_cli.py",
    "docs/many-ipus.md": "test_mpi.py",
    "docs/poptorch.md": "test_poptorch_face.py",
}
# A command matching one of these takes minutes: run by `make docs-check` only.
SLOW = (re.compile(r"--model (?!.*--reduced)"),)
RUN_SLOW = os.environ.get("IPU_DOCS_ALL") == "1"
_TIME = re.compile(r"\b\d+(\.\d+)? s\b")


def _pages() -> list[Path]:
    return [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]


def _console_blocks(page: Path) -> list[str]:
    return re.findall(r"^```(?:console|pycon)\n(.*?)^```", page.read_text(), re.S | re.M)


def _steps(block: str) -> list[tuple[str, list[str]]]:
    """(command, expected output lines) for each `$ ` of a block; `\\` continues a command."""
    steps: list[tuple[str, list[str]]] = []
    lines = block.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        assert line.startswith("$ "), f"output before any command: {line!r}"
        command = line[2:]
        while command.endswith("\\"):
            i += 1
            command = command[:-1] + " " + lines[i].strip()
        i += 1
        output = []
        while i < len(lines) and not lines[i].startswith("$ "):
            output.append(lines[i])
            i += 1
        while output and output[-1] == "":
            output.pop()
        steps.append((command, output))
    return steps


def _matches(expected: list[str], actual: list[str]) -> bool:
    """Whether `actual` is `expected` with each `...` line standing for any lines."""
    if not expected:
        return not actual
    head, rest = expected[0], expected[1:]
    if head.strip() == "...":
        return any(_matches(rest, actual[start:]) for start in range(len(actual) + 1))
    if not actual:
        return False
    pattern = ".*".join(re.escape(part) for part in _TIME.sub("T s", head).split("..."))
    return re.fullmatch(pattern, _TIME.sub("T s", actual[0])) is not None and _matches(rest, actual[1:])


def _local_pages() -> list[Path]:
    return [page for page in _pages() if _console_blocks(page) and str(page.relative_to(REPO)) not in CHECKED_ELSEWHERE]


def test_every_console_block_is_checked() -> None:
    """A page with console blocks is run here or names the test that runs it."""
    for name, test in CHECKED_ELSEWHERE.items():
        source = (REPO / "test" / "python" / test).read_text()
        assert name in source, f"{test} does not mention {name}, which CHECKED_ELSEWHERE says it checks"
    assert {str(page.relative_to(REPO)) for page in _local_pages()} >= {"README.md", "docs/ipu-run.md", "docs/ipu-opt.md"}


@pytest.mark.parametrize("page", _local_pages(), ids=lambda page: str(page.relative_to(REPO)))
def test_console_blocks(page: Path, tmp_path: Path) -> None:
    (tmp_path / "examples").symlink_to(REPO / "examples")
    fixtures = FIXTURES / page.stem
    if fixtures.is_dir():
        shutil.copytree(fixtures, tmp_path, dirs_exist_ok=True)
    # One stream, unbuffered: what a terminal shows, in its order.
    environment = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}", "PYTHONUNBUFFERED": "1"}
    environment.pop("IPU_MLIR_REPORT", None)
    mismatches = []
    for block in _console_blocks(page):
        for command, expected in _steps(block):
            if command.startswith("export PATH="):
                continue  # the venv's bin is already first on PATH
            if any(slow.search(command) for slow in SLOW) and not RUN_SLOW:
                continue
            done = subprocess.run(
                ["bash", "-c", command],
                cwd=tmp_path,
                env=environment,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
                timeout=900,
            )
            actual = done.stdout.splitlines()
            if not _matches(expected, actual):
                mismatches.append(f"$ {command}\n--- shown:\n" + "\n".join(expected) + "\n--- printed:\n" + "\n".join(actual))
    assert not mismatches, f"{page.name}: {len(mismatches)} commands print other than shown\n\n" + "\n\n".join(mismatches)


@pytest.mark.parametrize(
    "expected, actual, result",
    [
        (["a", "...", "d"], ["a", "b", "c", "d"], True),
        (["a", "...", "d"], ["a", "d"], True),
        (["a", "b ... d"], ["a", "b c d"], True),
        (["took 6.90 s"], ["took 12.1 s"], True),
        (["0.200 us"], ["0.201 us"], False),
        (["a", "b"], ["a"], False),
        (["a"], ["a", "b"], False),
    ],
)
def test_matcher(expected: list[str], actual: list[str], result: bool) -> None:
    assert _matches(expected, actual) is result


def test_docs_stand_alone() -> None:
    """Every relative link of README.md and docs/ names a file of the tree, and nothing cites the
    design notes outside it (`../shared`): the founding design is docs/design.md."""
    broken = []
    for page in _pages():
        text = page.read_text()
        assert "shared/DESIGN" not in text and "../shared" not in text and "shared/MLIR-NOTES" not in text, page
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text):
            if "://" in target or target.startswith("mailto:"):
                continue
            if not (page.parent / target).exists():
                broken.append(f"{page.relative_to(REPO)}: {target}")
    assert not broken, broken
