"""A program read from stdin (`-`) by ipu-run and ipu-vis, as ipu-opt and ipu-compile read
one: its text, and its errors located at `<stdin>:line:col` (MLIR names the locations of text
it parses "-")."""

from __future__ import annotations

import re
import sys
from pathlib import Path

from ipu_mlir.target.diagnostics import IpuError

from .ipu_opt import STDIN_NAME

STDIN = "-"


def program_source(file: str) -> Path | str:
    """The program: its path, or for `-` the text read from stdin."""
    if file != STDIN:
        return Path(file)
    data = sys.stdin.buffer.read() if hasattr(sys.stdin, "buffer") else sys.stdin.read().encode()
    try:
        return data.decode("utf-8") + "\n"  # a newline: text, however short, never taken for a path
    except UnicodeDecodeError as error:
        raise IpuError(f"cannot read '{STDIN_NAME}': not UTF-8 text ({error.reason})") from None


def stdin_located(message: str) -> str:
    """`message` with its `-:line:col` locations named `<stdin>`."""
    return re.sub(r"(?m)^-:(?=\d+:\d+: )", f"{STDIN_NAME}:", message)
