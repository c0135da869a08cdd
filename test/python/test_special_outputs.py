"""An output path that is not a regular file (a FIFO, /dev/null, /dev/stdout: a symbolic link to
one) is written into, as a shell's `>` writes, and stays what it was: the whole-or-nothing rename
the tools use for files would replace it (as root, /dev/null by a regular file). A FIFO stands
in for the devices, which a test must not risk."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from ipu_mlir.target.files import is_special, publish

REPO = Path(__file__).resolve().parents[2]
IPU_OPT = Path(sys.executable).parent / "ipu-opt"
IPU_RUN = Path(sys.executable).parent / "ipu-run"


def _reading(fifo: Path) -> tuple[threading.Thread, list[bytes]]:
    """A thread reading `fifo` to its end (a writer blocks until a reader opens it)."""
    got: list[bytes] = []

    def read() -> None:
        with open(fifo, "rb") as stream:
            got.append(stream.read())

    thread = threading.Thread(target=read, daemon=True)
    thread.start()
    return thread, got


@pytest.fixture
def fifo(tmp_path: Path) -> Path:
    path = tmp_path / "pipe"
    os.mkfifo(path)
    return path


@pytest.mark.parametrize("through_link", [False, True], ids=["fifo", "link-to-fifo"])
def test_ipu_opt_writes_into_a_fifo_and_leaves_it_one(tmp_path, fifo, through_link):
    output = fifo
    if through_link:  # as /dev/stdout links to /proc/self/fd/1
        output = tmp_path / "stdout"
        output.symlink_to(fifo)
    thread, got = _reading(fifo)
    done = subprocess.run([IPU_OPT, REPO / "examples/relu.mlir", "-o", output], capture_output=True, text=True, timeout=120)
    thread.join(timeout=60)
    assert done.returncode == 0, done.stderr
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    assert output.is_symlink() == through_link
    assert b"ipu." in got[0] and got[0].rstrip().endswith(b"}")
    assert sorted(path.name for path in tmp_path.iterdir()) == sorted({"pipe", output.name})  # no temporary left


def test_ipu_runs_profile_written_to_a_fifo(fifo):
    thread, got = _reading(fifo)
    done = subprocess.run(
        [IPU_RUN, REPO / "examples/relu.mlir", "--random-inputs", "0", "--profile", fifo], capture_output=True, text=True, timeout=120
    )
    thread.join(timeout=60)
    assert done.returncode == 0, done.stderr
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    assert got[0].startswith(b"{")


def test_regular_files_are_still_renamed_over(tmp_path):
    path, temporary = tmp_path / "out.txt", tmp_path / ".out.txt.tmp"
    path.write_text("old")
    inode = os.stat(path).st_ino
    temporary.write_text("new")
    publish(temporary, path)
    assert path.read_text() == "new" and os.stat(path).st_ino != inode and not temporary.exists()
    assert not is_special(path) and not is_special(tmp_path) and not is_special(tmp_path / "missing")
