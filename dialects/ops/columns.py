"""An im2col convolution's later runs by chunks: `Im2col.into` (dialects/ops/conv.py) on a
vertex group's own views of tile memory, the same arrays every run, gathers its columns a
chunk of tiles at a time into scratch memory kept between calls and multiplies each chunk at
once, while its columns are still in the core's cache.

Why: the columns of a whole vertex group are megabytes (the bench CNN's groups 4.4 MB each,
211 MB a run), gathered into a new array each call (new pages) and then read back by BLAS
from far caches or memory. Chunks of at most `CHUNK_BYTES` of columns, in scratch memory that
every chunk and vertex group reuses, are gathered and packed by BLAS while they are in the
core's cache. Measured on the bench CNN's steady run (in one process, interleaved, min of 12
on a busy host): 163.5 ms with the columns of a group gathered at once, 147.7 / 142.3 /
146.2 ms by chunks of 256 KB / 512 KB / 1 MB (816 / 408 / 216 chunks a run: a chunk costs
its Python calls).

The bytes are those of one product over all tiles: np.matmul multiplies each tile's
(filters, taps) @ (taps, oh * ow) matrices (the latter transposed columns for
`Im2col.transposed`) with one BLAS call anyway, and each chunk makes the
same calls on the same values laid out the same (columns dense, filters and output the
vertex group's views), only fewer of them at a time.

The scratch memory is this thread's, grown to the largest chunk any kernel asks for and
shared by all of them (one chunk's worth stays hot across vertex groups): a kernel rebuilds
its views when the thread's scratch is not the one it made them of, and every call writes
all of the scratch it reads (the padded input's zero border included) before reading it."""

from __future__ import annotations

import itertools
import math
import threading

import numpy as np

from .arrays import as_items

CHUNK_BYTES = 512 * 1024  # a chunk's columns at most, unless one tile's are more: the size of a core's L2 cache
ALIGN = 64  # bytes: each scratch region starts on a cache line

_scratch = threading.local()


def scratch(nbytes: int) -> np.ndarray:
    """This thread's scratch bytes, at least `nbytes`: made anew only when too small."""
    buffer = getattr(_scratch, "buffer", None)
    if buffer is None or buffer.nbytes < nbytes:
        buffer = _scratch.buffer = np.empty(nbytes, np.uint8)
    return buffer


def chunks(tiles: tuple[int, ...], tile_bytes: int) -> list[tuple[slice, ...]]:
    """The pieces of a grid of `tiles` (the input's own tile axes; 1 where it is broadcast)
    whose columns, `tile_bytes` a tile, are at most `CHUNK_BYTES` each (one tile at least): whole
    axes from the last, then a piece of one axis in equal steps, the axes before it one index at a time."""
    outer, remaining = [], math.prod(tiles) * tile_bytes
    for axis, n in enumerate(tiles):
        if remaining <= CHUNK_BYTES:
            break
        if n == 1:
            continue
        inner = remaining // n
        step = 1 if inner > CHUNK_BYTES else -(-n // -(-remaining // CHUNK_BYTES))
        outer.append((axis, step))
        remaining = inner * step
    starts = itertools.product(*(range(0, tiles[axis], step) for axis, step in outer))
    pieces = []
    for start in starts:
        index = [slice(None)] * len(tiles)
        for (axis, step), first in zip(outer, start):
            index[axis] = slice(first, min(first + step, tiles[axis]))
        pieces.append(tuple(index))
    return pieces


class Chunks:
    """`Im2col.into`'s product for one (x, filters, output matrices) by chunks; calling it
    computes the product of the values the arrays hold then. `x` and `matrices` must not
    overlap any operand (a chunk's product would overwrite what a later chunk reads)."""

    def __init__(self, conv, x: np.ndarray, filters: np.ndarray, matrices: np.ndarray):
        """`conv` an `Im2col` taking neither a pointwise nor a depthwise path; `filters` and
        `matrices` its product's views of the filter and the output."""
        self.conv, self.x, self.filters, self.matrices = conv, x, filters, matrices
        b = conv.batch
        self.pieces = chunks(x.shape[:b], math.prod(conv.columns) * x.itemsize)
        largest = x[self.pieces[0]].shape[:b]
        self.padded_shape = (*largest, *conv.padded) if any(conv.pad) else None
        self.columns_shape = (*largest, *conv.columns)
        padded_bytes = 0 if self.padded_shape is None else -(-math.prod(self.padded_shape) * x.itemsize // ALIGN) * ALIGN
        self.offsets = (0, padded_bytes, padded_bytes + math.prod(self.columns_shape) * x.itemsize)
        self.buffer, self.views, self.padded = None, [], None

    def __call__(self) -> None:
        if self.buffer is None or getattr(_scratch, "buffer", None) is not self.buffer:
            self._views(scratch(self.offsets[2]))
        if self.padded is not None:
            self.padded.fill(0)  # another kernel may have written the scratch since
        for inner, rows, filters, columns, matrices in self.views:
            if inner is not None:
                inner[0][...] = inner[1]
            rows[0][...] = rows[1]
            np.matmul(filters, columns, out=matrices)

    def _views(self, buffer: np.ndarray) -> None:
        """Each chunk's views of the operands and of `buffer`: the padded input and the columns
        of every chunk start at the same place with the same strides (its tile axes before
        the piece it takes are 1), so a zero border is a border for every chunk."""
        conv, b, dtype = self.conv, self.conv.batch, self.x.dtype
        start, middle, _ = self.offsets
        self.buffer, self.views = buffer, []
        padded = None if self.padded_shape is None else _region(buffer, start, self.padded_shape, dtype)
        columns = _region(buffer, middle, self.columns_shape, dtype)
        top, left = conv.pad[:2]
        for piece in self.pieces:
            x = self.x[piece]
            tiles = x.shape[:b]
            own = tuple(slice(None) if n == 1 else s for n, s in zip(self.filters.shape[:b], piece))
            chunk = tuple(slice(0, n) for n in tiles)
            if padded is None:
                source, inner = x, None
            else:
                source = padded[chunk]
                inner = as_items(source[..., top : top + conv.h, left : left + conv.w], x)
            windows = conv.windows(source)
            into = columns[chunk]
            rows = as_items(into.reshape(windows.shape), windows)
            self.views.append((inner, rows, self.filters[own], conv.operand(into), self.matrices[piece]))
        self.padded = padded


def _region(buffer: np.ndarray, start: int, shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    """A C-contiguous array of `shape` in `buffer`'s bytes from `start`."""
    return buffer[start : start + math.prod(shape) * dtype.itemsize].view(dtype).reshape(shape)
