"""The compiled-program cache: an L3 program kept on disk under a content hash of what made it,
so that compiling the same input again (or running the same zoo model again) is a file read.

    program = cache.compiled(cache.key("file", module_digest(module), target), lambda: compile(module), context)

A key hashes its parts with `project_digest()`: the project's version and the bytes of its own
source (a change to any pass changes every key), and the versions of the MLIR bindings, torch
and torch-mlir. An entry is the program's MLIR bytecode (weights as raw resource blobs: 0.06 s
to parse ResNet-50's 102 MB) behind a header with its length and SHA-256, written to a
temporary file and renamed into place (`os.replace` is atomic on POSIX: concurrent writers of
one key each leave a whole entry, readers never see half of one). An entry that is short,
corrupted or does not parse counts as a miss and is written again. The least recently used
entries go when the directory outgrows `IPU_MLIR_CACHE_SIZE` bytes (default 4 GB).

Where: `$IPU_MLIR_CACHE_DIR`, else `$XDG_CACHE_HOME/ipu-mlir`, else `~/.cache/ipu-mlir`.
`IPU_MLIR_NO_CACHE=1` (or `ipu-run --no-cache`) turns it off. A directory that cannot be
written only turns it off: the cache never fails a compile.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import importlib.metadata
import io
import os
import tempfile
from collections.abc import Callable
from pathlib import Path

from mlir import ir

import ipu_mlir

__all__ = ["compiled", "directory", "key", "load", "module_digest", "project_digest", "store"]

DIR_ENV, OFF_ENV, SIZE_ENV = "IPU_MLIR_CACHE_DIR", "IPU_MLIR_NO_CACHE", "IPU_MLIR_CACHE_SIZE"
DEFAULT_SIZE = 4 << 30  # ~40 ResNet-50 programs (102 MB each): an assumption, not a measurement of need
MAGIC = b"ipu-mlir program cache 1\n"
_SUFFIX = ".mlirbc"
# The packages whose code decides what a program compiles to (tools and vis only print it).
_SOURCE_PACKAGES = ("dialects", "frontends", "lowering", "runtime", "target")
_DEPENDENCIES = ("xtc-mlir-python-bindings", "torch", "torch-mlir")


def directory() -> Path | None:
    """The cache directory, or None when the cache is off."""
    if os.environ.get(OFF_ENV, "") not in ("", "0"):
        return None
    if os.environ.get(DIR_ENV):
        return Path(os.environ[DIR_ENV])
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "ipu-mlir"


@functools.cache
def project_digest() -> bytes:
    """The project's version, its compiling packages' source bytes and its dependencies' versions, hashed."""
    digest = hashlib.sha256(ipu_mlir.__version__.encode())
    for package in _SOURCE_PACKAGES:
        root = Path(importlib.import_module(f"ipu_mlir.{package}").__path__[0])
        for path in sorted(p for p in root.rglob("*") if p.suffix in (".py", ".mlir", ".toml") and "__pycache__" not in p.parts):
            digest.update(f"{package}/{path.relative_to(root)}\0".encode())
            digest.update(path.read_bytes())
    for name in _DEPENDENCIES:
        with contextlib.suppress(importlib.metadata.PackageNotFoundError):
            digest.update(f"{name}=={importlib.metadata.version(name)}\0".encode())
    return digest.digest()


def key(*parts: str | bytes | None) -> str:
    """The hex key of `parts` (each one delimited: ("ab", "c") and ("a", "bc") differ) and the project."""
    digest = hashlib.sha256(project_digest())
    for part in parts:
        data = b"\xff" if part is None else part if isinstance(part, bytes) else part.encode()
        digest.update(len(data).to_bytes(8, "little"))
        digest.update(data)
    return digest.hexdigest()


def module_digest(module: ir.Module) -> bytes:
    """A module's content hash: its bytecode (weights as raw blobs: 0.1 s for ResNet-50's 102 MB;
    printed text would spell them in hex), locations included (they name the layers)."""
    buffer = io.BytesIO()
    module.operation.write_bytecode(buffer)
    return hashlib.sha256(buffer.getvalue()).digest()


def load(entry_key: str, context: ir.Context) -> ir.Module | None:
    """The program stored under `entry_key`, parsed in `context`; None on a miss (absent, off,
    unreadable, truncated, corrupted or unparsable)."""
    root = directory()
    if root is None:
        return None
    path = root / (entry_key + _SUFFIX)
    try:
        data = path.read_bytes()
    except OSError:
        return None
    header = len(MAGIC) + 8 + 32
    if len(data) < header or not data.startswith(MAGIC):
        return None
    length = int.from_bytes(data[len(MAGIC) : len(MAGIC) + 8], "little")
    payload = data[header:]
    if length != len(payload) or hashlib.sha256(payload).digest() != data[header - 32 : header]:
        return None
    try:
        with context:
            module = ir.Module.parse(payload)
    except ir.MLIRError:
        return None
    with contextlib.suppress(OSError):
        os.utime(path)  # recently used: evicted last
    return module


def store(entry_key: str, module: ir.Module) -> None:
    """Writes `module` under `entry_key`: a temporary file renamed into place; nothing on failure."""
    root = directory()
    if root is None:
        return
    buffer = io.BytesIO()
    module.operation.write_bytecode(buffer)
    payload = buffer.getvalue()
    temporary = None
    try:
        root.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=root, prefix=".tmp-", suffix=_SUFFIX, delete=False) as file:
            temporary = file.name
            file.write(MAGIC + len(payload).to_bytes(8, "little") + hashlib.sha256(payload).digest() + payload)
        os.replace(temporary, root / (entry_key + _SUFFIX))
        temporary = None
        _evict(root)
    except OSError:
        pass  # a cache that cannot be written is a cache that is off
    finally:
        if temporary is not None:
            with contextlib.suppress(OSError):
                os.unlink(temporary)


def compiled(entry_key: str, compile_program: Callable[[], ir.Module], context: ir.Context) -> tuple[ir.Module, bool]:
    """The program under `entry_key`, else `compile_program()` stored there; and whether it was a hit."""
    module = load(entry_key, context)
    if module is not None:
        return module, True
    module = compile_program()
    store(entry_key, module)
    return module, False


def _evict(root: Path) -> None:
    """Removes the least recently used entries while the directory holds more than its size."""
    try:
        limit = int(os.environ.get(SIZE_ENV, DEFAULT_SIZE))
    except ValueError:
        limit = DEFAULT_SIZE
    entries = []
    for path in root.glob("*" + _SUFFIX):
        with contextlib.suppress(OSError):
            status = path.stat()
            entries.append((status.st_mtime, status.st_size, path))
    total = sum(size for _, size, _ in entries)
    for _, size, path in sorted(entries):
        if total <= limit:
            break
        with contextlib.suppress(OSError):
            path.unlink()
            total -= size
