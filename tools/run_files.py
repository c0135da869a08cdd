"""A run's files, all or none: ipu-run's outputs (`DIR/output<i>.npy`) and profile JSON.

Everything is first written into private staging directories (`.ipu-run-XXXX`, mode 0700,
one in each destination's parent), then published by renames while holding an exclusive
`flock` on each parent directory (in path order: two runs cannot deadlock) and with SIGINT
and SIGTERM held off. Publishing a set also removes the `output<k>.npy` a previous run left
beyond this run's outputs, so that a directory always holds one run's complete set. A
destination that cannot be replaced undoes the renames already made (the files they replaced
come back from hard links kept in the staging directory). The staging directories go in
every case. What is published gets the user's umask (a new DIR 0777 & ~umask, files
0666 & ~umask, an existing profile keeps its mode).
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import re
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from ipu_mlir.target.diagnostics import IpuError
from ipu_mlir.target.files import is_special

from .cli import signals_held

OUTPUT_NAME = re.compile(r"output\d+\.npy")
STAGING_PREFIX = ".ipu-run-"


def output_name(index: int) -> str:
    return f"output{index}.npy"


def write_run_files(
    output_dir: Path | None, outputs: list[np.ndarray], profile: Path | None, profile_text: str, texts: dict[Path, str] | None = None
) -> None:
    """Publishes the outputs into `output_dir`, the profile at `profile` (either may be None)
    and each of `texts` (path -> contents: `--report`'s profile and page) together, or raises
    `IpuError` having published nothing."""
    texts = {path.absolute(): text for path, text in (texts or {}).items()}
    if profile is not None:
        texts = {profile.absolute(): profile_text, **texts}
    # A device or FIFO (/dev/null, /dev/stdout) is written into once the files are published,
    # as a shell's `>` writes: renaming a file over it would destroy it.
    special = {path: text for path, text in texts.items() if is_special(path)}
    texts = {path: text for path, text in texts.items() if path not in special}
    destinations = [output_dir.absolute()] if output_dir is not None else []
    destinations += list(texts)
    what = str(destinations[0]) if destinations else ""
    with signals_held(), contextlib.ExitStack() as stack:
        try:
            parents = sorted({path.parent for path in destinations})
            for parent in parents:
                stack.enter_context(_locked(parent))
            staging = {parent: stack.enter_context(_staging_dir(parent)) for parent in parents}
            moves: list[_Move] = []
            stale: list[_Move] = []
            if output_dir is not None:
                directory = output_dir.absolute()
                what = str(output_dir)
                moves, stale = _stage_outputs(directory, outputs, staging[directory.parent])
            for index, (destination, text) in enumerate(texts.items()):
                what = str(destination)
                staged = staging[destination.parent] / f"text{index}"
                staged.write_text(text)
                os.chmod(staged, _file_mode(destination))
                moves.append((staged, destination, staging[destination.parent]))
            for source, destination, _ in moves:
                what = str(destination)
                if source.is_file() and destination.is_dir() and not destination.is_symlink():
                    raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR))
            _publish(moves, stale)
            for destination, text in special.items():
                what = str(destination)
                with open(destination, "w") as stream:
                    stream.write(text)
        except OSError as error:
            raise IpuError(f"cannot write '{what}': {error.strerror or error}") from None


# (staged file or directory, its destination, where the file it replaces is kept aside)
_Move = tuple[Path, Path, Path]


def _stage_outputs(directory: Path, outputs: list[np.ndarray], staging: Path) -> tuple[list[_Move], list[_Move]]:
    """The moves publishing the outputs, and those setting aside a previous run's extra
    `output<k>.npy` (to a name in `staging`)."""
    staged_dir = staging / "outputs"
    staged_dir.mkdir(mode=0o777)  # less the umask
    names = [output_name(index) for index in range(len(outputs))]
    for name, output in zip(names, outputs):
        np.save(staged_dir / name, output, allow_pickle=False)
    if not directory.is_dir():
        return [(staged_dir, directory, staging)], []
    extra = sorted(path for path in directory.iterdir() if OUTPUT_NAME.fullmatch(path.name) and path.name not in names)
    return [(staged_dir / name, directory / name, staging) for name in names], [(path, path, staging) for path in extra]


def _publish(moves: list[_Move], stale: list[_Move]) -> None:
    """Sets the stale files aside and renames each staged file onto its destination; on an
    error, undoes what was done (the files set aside or replaced come back) and re-raises."""
    done: list[tuple[Path, Path | None]] = []  # (destination, what it held before, kept aside)
    try:
        for index, (path, _, aside) in enumerate(stale):
            kept = aside / f"stale{index}"
            os.replace(path, kept)
            done.append((path, kept))
        for index, (source, destination, aside) in enumerate(moves):
            kept = None
            if destination.is_file():
                kept = aside / f"replaced{index}"
                try:
                    os.link(destination, kept)  # the destination stays in place meanwhile
                except OSError:  # no hard links here: this one cannot be undone
                    kept = None
            os.replace(source, destination)
            done.append((destination, kept))
    except BaseException:
        for destination, kept in reversed(done):
            with contextlib.suppress(OSError):
                if kept is not None:
                    os.replace(kept, destination)
                elif destination.is_dir() and not destination.is_symlink():
                    shutil.rmtree(destination)
                else:
                    destination.unlink()
        raise


@contextlib.contextmanager
def _locked(directory: Path) -> Iterator[None]:
    """An exclusive flock on `directory` itself: no lock file to leave behind."""
    descriptor = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX)
        yield
    finally:
        os.close(descriptor)


@contextlib.contextmanager
def _staging_dir(parent: Path) -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(dir=parent, prefix=STAGING_PREFIX))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def _file_mode(path: Path) -> int:
    if path.is_file():
        return path.stat().st_mode & 0o7777
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask
