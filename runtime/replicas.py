"""Which tiles of a buffer always hold the same bytes: replicas the simulator stores once.

A matmul's operands are replicated along the other output dimension (A on every column tile,
B on every row tile), a bias on every row, a filter on every image tile: most of a program's
exchange writes copies of data that is already on another tile. Proving that two tiles hold
identical copies lets the simulator keep one row for both, so exchange moves each distinct
block once and a codelet sees the replicated operand as a broadcast (a size-1 grid axis).

Tiles of a buffer form classes: two tiles are in one class only if every write to the buffer
treats them alike. The classes are the coarsest partition stable under every write of the
program (a greatest fixed point, found by refining from one class per buffer):
  - a copy writes the same elements of both tiles from source tiles of one class at the same
    source elements (or writes neither);
  - a vertex group writes both, and every input of both is in one class (codelets are
    deterministic functions of their inputs), or writes neither;
  - a host stream writes neither (its slices of the host tensor differ by tile).
Stability makes "tiles of a class hold identical bytes" an invariant of every run: it holds
before the first write, and each write keeps it. Which bytes are written is fixed by the plan
(loops have constant bounds), so the classes hold for every run of it.

    classes = tile_classes(tiles_of_buffer, writes, num_tiles)   # {buffer: class per tile}
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class CopyWrite:
    """An `ipu.copy`, per point of its grid: source tile and element, dest tile and element."""

    source: str
    dest: str
    src_tiles: np.ndarray
    src_starts: np.ndarray
    dst_tiles: np.ndarray
    dst_starts: np.ndarray


@dataclass(frozen=True)
class ComputeWrite:
    """A vertex group: its codelet on `tiles`, reading `inputs`, writing `outputs`."""

    tiles: np.ndarray
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]


@dataclass(frozen=True)
class StreamWrite:
    """A host-to-device stream writing `tiles` of `buffer`."""

    buffer: str
    tiles: np.ndarray


Write = CopyWrite | ComputeWrite | StreamWrite


def tile_classes(tiles: dict[str, np.ndarray], writes: Iterable[Write], num_tiles: int) -> dict[str, np.ndarray]:
    """For each buffer, an array over all `num_tiles` tiles: the class of each tile holding the
    buffer (0, 1, ... in no particular order), -1 on the others."""
    classes = {}
    for name, holders in tiles.items():
        classes[name] = np.full(num_tiles, -1, np.int64)
        classes[name][holders] = 0
    writes = list(writes)
    changed = True
    while changed:  # each pass refines or ends: at most one pass per class there can be, plus one
        changed = False
        for index, write in enumerate(writes):
            for buffer, written, signature in _signatures(index, write, classes):
                changed |= _refine(classes[buffer], tiles[buffer], written, signature)
    return classes


def _signatures(index: int, write: Write, classes: dict[str, np.ndarray]):
    """(buffer, tiles written, a row of integers per tile written): tiles written alike get
    equal rows, within one write."""
    if isinstance(write, StreamWrite):
        yield write.buffer, write.tiles, write.tiles[:, None]
    elif isinstance(write, ComputeWrite):
        inputs = [classes[name][write.tiles] for name in write.inputs]
        signature = np.stack([np.full(write.tiles.size, index), *inputs], axis=1)
        for name in write.outputs:
            yield name, write.tiles, signature
    else:
        points = np.stack([write.dst_starts, classes[write.source][write.src_tiles], write.src_starts], axis=1)
        yield (write.dest, *_per_tile(write.dst_tiles, points))


def _per_tile(tiles: np.ndarray, points: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct `tiles` and, for each, the sorted list of its points' rows as one row
    (padded with -1): a tile written at several grid points is identified by all of them."""
    _, point_ids = np.unique(points, axis=0, return_inverse=True)
    order = np.lexsort((point_ids.reshape(-1), tiles))
    tiles, point_ids = tiles[order], point_ids.reshape(-1)[order]
    starts = np.flatnonzero(np.r_[True, tiles[1:] != tiles[:-1]])
    counts = np.diff(np.r_[starts, tiles.size])
    rows = np.full((starts.size, int(counts.max())), -1, np.int64)
    rows[np.repeat(np.arange(starts.size), counts), np.arange(tiles.size) - np.repeat(starts, counts)] = point_ids
    return tiles[starts], rows


def _refine(labels: np.ndarray, holders: np.ndarray, written: np.ndarray, signature: np.ndarray) -> bool:
    """Splits the classes of `labels` (over the buffer's `holders`) so that tiles of a class
    were written alike; True if any class split."""
    _, ids = np.unique(signature, axis=0, return_inverse=True)
    key = np.full(labels.size, -1, np.int64)
    key[written] = ids.reshape(-1)
    before = labels[holders]
    _, after = np.unique(np.stack([before, key[holders]], axis=1), axis=0, return_inverse=True)
    after = after.reshape(-1)
    labels[holders] = after
    return int(after.max(initial=-1)) > int(before.max(initial=-1))
