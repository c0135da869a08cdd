"""The regions of a simulator buffer (runtime/memory.py) that one op reads or writes.

A `Region` is what one op touches: rows (a codelet's view, a stream's slices), windows (a
copy's side whose offsets differ by tile) or one strided view (a copy's side affine in the
copy's grid: the copy is then a numpy assignment, a repeated source a broadcast).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np

from ipu_mlir.dialects.attrs import TileGrid
from ipu_mlir.dialects.ops.arrays import as_items, assign
from ipu_mlir.target.element_types import as_strided


@dataclass(eq=False)
class Rows:
    """Elements [lo, lo + count) of rows `rows` of a buffer, the copies on tiles `tiles`: a
    codelet's view, a stream's slices, a copy's side. `rows` is a slice when evenly spaced, so
    reading is then a view."""

    rows: slice | np.ndarray
    tiles: np.ndarray
    lo: int
    count: int

    @property
    def hi(self) -> int:
        return self.lo + self.count

    def read(self, array: np.ndarray) -> np.ndarray:
        return array[self.rows, self.lo : self.hi]

    def write(self, array: np.ndarray, values) -> None:
        if isinstance(self.rows, slice):
            assign(array[self.rows, self.lo : self.hi], values)
        else:
            array[self.rows, self.lo : self.hi] = values


@dataclass(eq=False)
class Windows:
    """Elements [lo[i], lo[i] + count) of rows[i]: a copy's side whose offsets differ by tile."""

    rows: np.ndarray
    tiles: np.ndarray
    lo: np.ndarray
    count: int

    @property
    def hi(self) -> np.ndarray:
        return self.lo + self.count

    def _view(self, array: np.ndarray, writeable: bool) -> np.ndarray:
        rows, length = array.shape
        shape, strides = (rows, length - self.count + 1, self.count), (array.strides[0], array.strides[1], array.strides[1])
        return as_strided(array, shape, strides, writeable=writeable)

    def read(self, array: np.ndarray) -> np.ndarray:
        return self._view(array, False)[self.rows, self.lo]

    def write(self, array: np.ndarray, values) -> None:
        self._view(array, True)[self.rows, self.lo] = values  # distinct windows: no element written twice


@dataclass(eq=False)
class Strided:
    """A copy's side whose rows and starts are both affine in the copy's grid index: one strided
    view of the buffer of shape (*grid sizes, count), so a copy is one numpy assignment with no
    index arrays, and a source repeated along a grid dimension (stride 0) is broadcast, not
    gathered. `rows`, `tiles` and `lo` list the same elements, for checks and messages: listed
    when asked, from their affine forms, so a plan keeps no per-tile arrays for its copies."""

    forms: tuple[TileGrid, TileGrid, TileGrid]  # rows, tiles and starts over the copy's grid
    count: int
    shape: tuple[int, ...]
    base: int  # element index of the first element, in the flat (rows x elements) array
    strides: tuple[int, ...]  # in elements

    @property
    def rows(self) -> np.ndarray:
        return self.forms[0].tiles()

    @property
    def tiles(self) -> np.ndarray:
        return self.forms[1].tiles()

    @property
    def lo(self) -> np.ndarray:
        return self.forms[2].tiles()

    @property
    def hi(self) -> np.ndarray:
        return self.lo + self.count

    def fresh(self) -> Strided:
        """The same view as another region (regions of writes are told apart by identity)."""
        return Strided(self.forms, self.count, self.shape, self.base, self.strides)

    def view(self, array: np.ndarray) -> np.ndarray:
        size = array.itemsize
        return np.ndarray(self.shape, array.dtype, array, self.base * size, tuple(s * size for s in self.strides))

    def read(self, array: np.ndarray) -> np.ndarray:
        return self.view(array)

    def write(self, array: np.ndarray, values) -> None:
        assign(self.view(array), values)


@dataclass(eq=False)
class Grid:
    """Elements [0, count) of a buffer's rows on a vertex group's tiles, as one array of the
    group's grid sizes by the codelet argument's shape, so the codelet runs over the grid's
    axes: a strided view when the rows are affine in the grid index, where a row repeated
    along a grid axis (a replica) is a size-1 axis the codelet broadcasts; else a gather."""

    rows: np.ndarray  # per point of the grid, in grid order
    tiles: np.ndarray
    count: int
    sizes: tuple[int, ...]
    shape: tuple[int, ...]  # the codelet argument's
    first: int
    strides: tuple[int, ...] | None  # rows per step along each grid axis; None: not affine
    lo = 0

    @property
    def hi(self) -> int:
        return self.count

    def view(self, array: np.ndarray, writeable: bool) -> np.ndarray:
        row, item = array.strides
        inner = tuple(item * math.prod(self.shape[i + 1 :]) for i in range(len(self.shape)))
        return as_strided(
            array[self.first :], (*self.sizes, *self.shape), tuple(s * row for s in self.strides) + inner, writeable=writeable
        )

    def read(self, array: np.ndarray) -> np.ndarray:
        if self.strides is not None:
            return self.view(array, False)
        return array[self.rows.reshape(self.sizes), : self.count].reshape(*self.sizes, *self.shape)

    def write(self, array: np.ndarray, values) -> None:
        if self.strides is not None:
            assign(self.view(array, True), values)
        else:
            array[self.rows.reshape(self.sizes), : self.count] = np.broadcast_to(values, (*self.sizes, *self.shape)).reshape(
                *self.sizes, self.count
            )


def item_views(reads: Strided, writes: Strided, source: np.ndarray, dest: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """`arrays.as_items(writes.view(dest), reads.view(source))`, made straight from the two
    regions' strides: the trailing axes contiguous in both as one item, in two array
    constructions (as_items takes about 30 us a pair, through array interfaces; a BERT-12
    load prepares 22,796 pairs)."""
    if source.dtype != dest.dtype or reads.shape != writes.shape:
        return as_items(writes.view(dest), reads.view(source))
    axes, run = 0, 1
    for n, a, b in zip(reversed(writes.shape), reversed(writes.strides), reversed(reads.strides)):
        if n != 1 and not a == b == run:
            break
        axes, run = axes + 1, run * n
    if run == 1:
        return writes.view(dest), reads.view(source)
    size, kept = dest.itemsize, len(writes.shape) - axes
    item, shape = np.dtype(f"V{run * size}"), writes.shape[:kept]
    dest_items, source_items = (
        np.ndarray(shape, item, array, region.base * size, tuple([s * size for s in region.strides[:kept]]))
        for region, array in ((writes, dest), (reads, source))
    )
    return dest_items, source_items


def grid_region(rows: np.ndarray, tiles: np.ndarray, sizes: tuple[int, ...], shape: tuple[int, ...], kept: tuple[bool, ...]) -> Grid:
    """A vertex group's edge over its grid (`rows` and `tiles` in grid order), with the axes
    not `kept` cut to their first point."""
    pick = tuple(slice(None) if keep else slice(0, 1) for keep in kept)
    rows, tiles = rows.reshape(sizes)[pick], tiles.reshape(sizes)[pick]
    first, strides = affine_form(rows.reshape(-1), rows.shape)
    view_sizes = rows.shape if strides is None else tuple(1 if stride == 0 else n for n, stride in zip(rows.shape, strides))
    return Grid(rows.reshape(-1), tiles.reshape(-1), math.prod(shape), view_sizes, shape, first, strides)


def constant_axes(arrays: list[np.ndarray], sizes: tuple[int, ...]) -> tuple[bool, ...]:
    """For each grid axis, whether every array (in grid order) is constant along it."""
    grids = [a.reshape(sizes) for a in arrays]
    constant = []
    for axis, n in enumerate(sizes):
        before = (slice(None),) * axis + (slice(None, -1),)
        after = (slice(None),) * axis + (slice(1, None),)
        constant.append(n == 1 or all(bool((g[after] == g[before]).all()) for g in grids))  # each point equal to the one before
    return tuple(constant)


Region = Rows | Windows | Strided | Grid


def copy_region(rows: np.ndarray, tiles: np.ndarray, starts: np.ndarray, count: int) -> Region:
    """A copy's side as rows, or windows when its starts differ by tile."""
    if np.any(starts != starts[0]):
        return Windows(rows, tiles, starts, count)
    return Rows(as_slice(rows), tiles, int(starts[0]), count)


def affine_form(values: np.ndarray, sizes: tuple[int, ...], known: bool = False) -> tuple[int, tuple[int, ...] | None]:
    """`values` in grid order as `first + sum_k i_k * strides[k]`, or strides None if not
    (not checked when `known` to be affine)."""
    flat = values.reshape(-1)
    first = int(flat[0])
    strides = tuple((flat[_axis_steps(sizes)] - first).tolist())
    if known or flat.size == 1:
        return first, strides
    if len(sizes) == 1:
        affine = bool((flat[1:] - flat[:-1] == strides[0]).all())
    else:  # the grid's multi-indices (cached per shape) dotted with the strides: one pass
        affine = bool((np.dot(np.array(strides, np.int64), _grid_indices(sizes)) + first == flat).all())
    return first, strides if affine else None


@functools.lru_cache(maxsize=1024)
def _axis_steps(sizes: tuple[int, ...]) -> np.ndarray:
    """Per grid axis, the entry one step along it from the first, in grid order
    (math.prod(sizes[k + 1 :]) entries on); the first itself (stride 0) along an axis of size 1."""
    return np.array([math.prod(sizes[k + 1 :]) if n > 1 else 0 for k, n in enumerate(sizes)], np.intp)


@functools.lru_cache(maxsize=1024)
def _grid_indices(sizes: tuple[int, ...]) -> np.ndarray:
    """(rank, points): the multi-index of each point of a grid of `sizes`, in grid order."""
    indices = np.indices(sizes, dtype=np.int64).reshape(len(sizes), -1)
    indices.flags.writeable = False
    return indices


def as_slice(rows: np.ndarray) -> slice | np.ndarray:
    step = int(rows[1] - rows[0]) if rows.size > 1 else 1
    if step > 0 and np.all(np.diff(rows) == step):
        return slice(int(rows[0]), int(rows[-1]) + 1, step)
    return rows
