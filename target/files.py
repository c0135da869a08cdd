"""Output files written whole or not at all, shared by the tools and the pictures: the text goes
to a temporary file, then takes the output's name by a rename, so that a reader sees the old file
or the new one and a failed write leaves nothing. A path that is not a regular file (a device
such as /dev/null, a FIFO, /dev/stdout) cannot be replaced that way without destroying it: its
contents are written into it instead, as a shell's `>` does."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path


def is_special(path: str | os.PathLike) -> bool:
    """Whether `path` names something other than a regular file or a directory (following
    symbolic links): a device, a FIFO, a socket."""
    return os.path.exists(path) and not os.path.isfile(path) and not os.path.isdir(path)


def staging_dir(path: str | os.PathLike) -> str:
    """Where the temporary file for `path` goes: beside it (so the rename stays on one file
    system), or the temporary directory when `path` is special and is written into, not
    replaced (its directory, /dev for instance, need not be writable)."""
    return tempfile.gettempdir() if is_special(path) else str(Path(path).parent)


def temporary_for(path: str | os.PathLike, suffix: str = "") -> str:
    """The name of the temporary file that becomes `path` (`publish`): hidden, in `staging_dir`,
    this process's own; `suffix` keeps an extension a writer reads (matplotlib's format)."""
    return os.path.join(staging_dir(path), f".{os.path.basename(path)}.tmp{os.getpid()}{suffix}")


def publish(temporary: str | os.PathLike, path: str | os.PathLike) -> None:
    """Puts the finished file `temporary` at `path`: renamed over it, or, when `path` is
    special, copied into it and removed."""
    if is_special(path):
        try:
            with open(temporary, "rb") as source, open(path, "wb") as sink:
                shutil.copyfileobj(source, sink)
        finally:
            os.unlink(temporary)
    else:
        os.replace(temporary, path)
