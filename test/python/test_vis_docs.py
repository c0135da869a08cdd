"""docs/pictures.md stays true: its console sessions, run in order in one directory (with the
repository's examples), print what the page shows; its torch.compile session prints the
profile it says."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
DOC = (REPO / "docs" / "pictures.md").read_text()


def test_console_sessions(tmp_path: Path) -> None:
    (tmp_path / "examples").symlink_to(REPO / "examples")
    environment = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}"}
    environment.pop("IPU_MLIR_REPORT", None)
    blocks = re.findall(r"```console\n(.*?)```", DOC, re.S)
    assert len(blocks) >= 4
    for block in blocks:
        command, _, expected = block.partition("\n")
        done = subprocess.run(command.removeprefix("$ "), shell=True, cwd=tmp_path, env=environment, capture_output=True, text=True)
        assert done.stdout + done.stderr == expected, command


def test_torch_compile_session(tmp_path: Path) -> None:
    pytest.importorskip("torch_mlir")
    (session,) = [block for block in re.findall(r"```python\n(.*?)```", DOC, re.S) if 'backend="ipu"' in block]
    shown = re.search(r"print\(.*\)\s+# (.*)", session).group(1)
    done = subprocess.run([sys.executable, "-c", session], cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"{shown}\n"
