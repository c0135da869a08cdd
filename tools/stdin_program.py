"""A program read from stdin (`-`) by ipu-run and ipu-vis, as ipu-opt and ipu-compile read
one: its text, and its errors located at `<stdin>:line:col` (MLIR names the locations of text
it parses "-")."""

from __future__ import annotations

import contextlib
import re
import sys
from pathlib import Path

from ipu_mlir.target.diagnostics import IpuError

from .ipu_opt import BYTECODE_MAGIC, STDIN_NAME

STDIN = "-"


def program_source(file: str) -> Path | str:
    """The program: its path, or for `-` the text read from stdin."""
    if file != STDIN:
        path = Path(file)
        with contextlib.suppress(OSError):  # unreadable: load_module says why
            with path.open("rb") as stream:
                if stream.read(len(BYTECODE_MAGIC)) == BYTECODE_MAGIC:
                    raise IpuError(f"cannot read '{file}': it is MLIR bytecode; give it as text (ipu-opt {file} -o FILE.mlir writes it so)")
        return path
    data = sys.stdin.buffer.read() if hasattr(sys.stdin, "buffer") else sys.stdin.read().encode()
    try:
        return data.decode("utf-8") + "\n"  # a newline: text, however short, never taken for a path
    except UnicodeDecodeError as error:
        raise IpuError(f"cannot read '{STDIN_NAME}': not UTF-8 text ({error.reason})") from None


def stdin_located(message: str) -> str:
    """`message` with its `-:line:col` locations named `<stdin>`."""
    return re.sub(r"(?m)^-:(?=\d+:\d+: )", f"{STDIN_NAME}:", message)
