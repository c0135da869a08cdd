"""Tile memory for the simulator: buffers and the regions of them that ops read and write.

Each `ipu.buffer` is a `Buffer`: an array of (its tiles, its elements) plus a `written` mask,
not an image of SRAM, allocated at its first use and freed after its last in the checked run;
the plan of later runs binds each buffer to one array at load (`bind_arrays`), so copies and
codelets use views made once. Its rows follow the
tiles of the vertex groups using it (`order_rows`), so a vertex group's view is a slice of rows.
A `Region` is what one op touches: rows (a codelet's view, a stream's slices), windows (a
copy's side whose offsets differ by tile) or one strided view (a copy's side affine in the
copy's grid: the copy is then a numpy assignment, a repeated source a broadcast).

    pieces = strided_pieces(source_side, dest_side, size, grid_sizes)   # None: use windows
"""

from __future__ import annotations

import functools
import hashlib
import itertools
import math
from dataclasses import dataclass

import numpy as np
from mlir import ir

from ipu_mlir.dialects import ipu
from ipu_mlir.dialects.attrs import TileGrid
from ipu_mlir.dialects.ops import semantics
from ipu_mlir.dialects.ops.arrays import as_items, assign
from ipu_mlir.dialects.program import Program
from ipu_mlir.target import Target
from ipu_mlir.target.diagnostics import IpuError, format_location
from ipu_mlir.target.element_types import as_strided


class SimulationError(IpuError):
    """A program the simulator cannot run, or one breaking a BSP rule."""


@dataclass(frozen=True)
class Site:
    """An op, remembered for messages and the profile (its attributes are never re-read)."""

    name: str
    location: ir.Location

    @property
    def where(self) -> str:
        return format_location(self.location) or "unknown location"

    def error(self, message: str) -> SimulationError:
        return SimulationError(f"'{self.name}' op {message}", self.location)

    def record(self, where: str | None = None, **details: str) -> dict[str, str]:
        """The op for the profile: its name, its location (`where`, when known already) and `details`."""
        return {"op": self.name, "loc": self.where if where is None else where, **details}


def site_of(op: ir.OpView) -> Site:
    return Site(op.operation.name, op.operation.location)


def numpy_dtype(element_type: ir.Type) -> np.dtype | None:
    """The numpy type holding a buffer of `element_type`, None if none does (nor for index,
    which has no size in tile memory)."""
    return None if isinstance(element_type, ir.IndexType) else semantics.numpy_dtype(element_type)


def element_dtype(element_type: ir.Type, site: Site) -> np.dtype:
    dtype = numpy_dtype(element_type)
    if dtype is None:
        raise site.error(f"uses element type {element_type}, which the simulator cannot hold (no numpy equivalent)")
    return dtype


def static_tensor(type_: ir.Type, site: Site, what: str) -> tuple[tuple[int, ...], np.dtype]:
    if not isinstance(type_, ir.RankedTensorType) or not type_.has_static_shape:
        raise site.error(f"expects {what} to be a statically shaped tensor, got {type_}")
    return tuple(type_.shape), element_dtype(type_.element_type, site)


# --- Copies -----------------------------------------------------------------------------------


# --- Regions of buffers ------------------------------------------------------------------


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


@dataclass(frozen=True)
class Side:
    """One side of a copy, per point of its grid (in grid order): the buffer row, the tile and
    the first element."""

    rows: np.ndarray
    tiles: np.ndarray
    starts: np.ndarray
    elements: int  # per row of the buffer
    write: bool
    affine: bool = False  # tiles and starts known to be affine in the grid index (listed from TileGrids)

    def take(self, axis: int, lo: int, hi: int, sizes: tuple[int, ...]) -> Side:
        cut = (slice(None),) * axis + (slice(lo, hi),)

        def pick(a: np.ndarray) -> np.ndarray:
            return a.reshape(sizes)[cut].reshape(-1)

        return Side(pick(self.rows), pick(self.tiles), pick(self.starts), self.elements, self.write, self.affine)

    def strided(self, count: int, sizes: tuple[int, ...]) -> Strided | None:
        """The side as one strided view, if rows and starts are affine in the grid index; not
        for a written side repeating elements (stride 0: left to the checks of the others)."""
        (row_first, row_strides), (tile_first, tile_strides), (start_first, start_strides) = (
            affine_form(a, sizes, known) for a, known in ((self.rows, False), (self.tiles, self.affine), (self.starts, self.affine))
        )
        if row_strides is None or tile_strides is None or start_strides is None:
            return None
        strides = tuple(r * self.elements + s for r, s in zip(row_strides, start_strides))
        if self.write and any(s == 0 and n > 1 for s, n in zip(strides, sizes)):
            return None
        forms = (
            TileGrid(row_first, sizes, row_strides),
            TileGrid(tile_first, sizes, tile_strides),
            TileGrid(start_first, sizes, start_strides),
        )
        return Strided(forms, count, (*sizes, count), row_first * self.elements + start_first, (*strides, 1))


def strided_pieces(source: Side, dest: Side, count: int, sizes: tuple[int, ...], limit: int = 32) -> list[tuple[Strided, Strided]] | None:
    """A copy as at most `limit` pairs of strided views, cutting its grid along axes into runs
    that are affine on both sides (a buffer's rows follow its vertex groups' tile order, so a
    copy spanning two of them is affine piecewise); None if it takes more.

    Copies between layers of one shape have equal sides, and so do a copy of the checked plan
    and the same copy in the later plan where no tile of its buffers has a replica: the pieces
    are found once per distinct pair of sides (ResNet-50: 2,822 of 9,646), keyed by a digest,
    and each copy gets its own (a write's region is its identity in `Buffer.write`)."""
    key = _sides_key(source, dest, sizes, (count, limit))
    if key not in _PIECES:
        if len(_PIECES) >= _PIECES_KEPT:
            _PIECES.clear()
        _PIECES[key] = _strided_pieces(source, dest, count, sizes, limit)
    found = _PIECES[key]
    return None if found is None else [(reads.fresh(), writes.fresh()) for reads, writes in found]


_PIECES: dict[bytes, list[tuple[Strided, Strided]] | None] = {}
_PIECES_KEPT = 1 << 14  # entries (a few hundred bytes each) before the memo starts again


def _sides_key(source: Side, dest: Side, sizes: tuple[int, ...], details: tuple) -> bytes:
    """A digest of what the pieces depend on: rows listed (in 16 bits when they fit, half the
    bytes to hash), tiles and starts by their affine forms over the grid `sizes` when known to
    be affine."""
    forms = [sizes, details]
    digest = hashlib.blake2b(digest_size=20)
    for side in (source, dest):
        forms.append((side.elements, side.write, side.affine, side.rows.size))
        for array in (side.tiles, side.starts) if side.affine else ():
            forms.append(affine_form(array, sizes, known=True))
        for array in (side.rows,) if side.affine else (side.rows, side.tiles, side.starts):
            small = bool(array.size) and 0 <= int(array.min()) and int(array.max()) < 2**15
            forms.append((array.size, small))
            digest.update(np.ascontiguousarray(array, np.int16 if small else np.int64).data)
    digest.update(repr(forms).encode())
    return digest.digest()


def _strided_pieces(source: Side, dest: Side, count: int, sizes: tuple[int, ...], limit: int) -> list[tuple[Strided, Strided]] | None:
    whole = source.strided(count, sizes), dest.strided(count, sizes)
    if None not in whole:
        return [whole]
    cuts = []
    for axis, n in enumerate(sizes):
        runs = _affine_runs([side.rows for side in (source, dest)] + [side.starts for side in (source, dest)], sizes, axis) if n > 1 else []
        if 1 < len(runs) <= limit:
            cuts.append((len(runs), axis, runs))
    if not cuts:
        return None
    _, axis, runs = min(cuts)
    pieces = []
    for index, (lo, hi) in enumerate(runs):
        shape = (*sizes[:axis], hi - lo, *sizes[axis + 1 :])
        budget = limit - len(pieces) - (len(runs) - index - 1)  # one piece at least per run left
        more = _strided_pieces(source.take(axis, lo, hi, sizes), dest.take(axis, lo, hi, sizes), count, shape, budget)
        if more is None:
            return None
        pieces += more
    return pieces


def _affine_runs(arrays: list[np.ndarray], sizes: tuple[int, ...], axis: int) -> list[tuple[int, int]]:
    """Runs [lo, hi) of indices along `axis` within which each array steps by one constant from
    one slab to the next (so it is affine there if its first slab is)."""
    n = sizes[axis]
    same = np.ones(n - 1, bool)
    steps = []
    for array in arrays:
        slabs = np.moveaxis(array.reshape(sizes), axis, 0).reshape(n, -1)
        difference = slabs[1:] - slabs[:-1]
        same &= np.all(difference == difference[:, :1], axis=1)
        steps.append(difference[:, 0])
    step, same = [tuple(row) for row in np.stack(steps, axis=1).tolist()], same.tolist()
    runs, lo = [], 0
    for i in range(n - 1):  # i joins i + 1 if the step is uniform and the run's own
        if not same[i] or (i > lo and step[i] != step[lo]):
            runs.append((lo, i + 1))
            lo = i + 1
    runs.append((lo, n))
    return runs


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


def _flat_ranges(starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """The indices of the ranges [starts[i], starts[i] + lengths[i]), concatenated."""
    ends = np.cumsum(lengths)
    return np.repeat(starts - ends + lengths, lengths) + np.arange(int(ends[-1]) if ends.size else 0)


# --- Buffers -------------------------------------------------------------------------------


def bind_arrays(lives: list[tuple[Buffer, int, int]]) -> None:
    """Gives each buffer, with the first and last step using it, an array of its own for every
    run: buffers whose steps do not overlap share one of their byte size, as `Pool` shares
    them run by run, so views of the buffers can be made once (runs without checks read
    only bytes written before in the same run, or at load)."""
    free: dict[int, list[tuple[int, np.ndarray]]] = {}  # bytes -> (last step using it, array)
    for buffer, first, last in sorted(lives, key=lambda life: life[1]):
        size = buffer.row_count * buffer.elements * buffer.dtype.itemsize
        spares = free.setdefault(size, [])
        index = next((i for i, (until, _) in enumerate(spares) if until < first), None)
        if index is None:
            array = np.empty(size, np.uint8)
            array.fill(0)  # its pages faulted in now, at load, not in the first run using it
        else:
            array = spares.pop(index)[1]
        spares.append((last, array))
        buffer.data, buffer.resident = array.view(buffer.dtype).reshape(buffer.row_count, buffer.elements), True


class Pool:
    """The arrays of released buffers, by size, for the next buffers of that size: once a run
    has taken the sizes it needs, later runs allocate nothing and fault in no fresh pages
    (about 5,000 minor page faults per run of a 12-layer MLP without it). A pool that does not
    `keep` frees what it is given: the checked run's per-tile arrays are not needed again."""

    def __init__(self, keep: bool) -> None:
        self.keep = keep
        self.free: dict[int, list[np.ndarray]] = {}
        # the buffers holding a `written` mask now (checked runs): of a buffer's aliases, only
        # they have data a write can clobber. The memory plan keeps aliases' lives apart, so
        # this is a handful of a buffer's hundreds of aliases (BERT-12: none of 953 on average)
        self.masked: set[Buffer] = set()

    def take(self, shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
        size = math.prod(shape) * dtype.itemsize
        spare = self.free.get(size)
        return (spare.pop() if spare else np.empty(size, np.uint8)).view(dtype).reshape(shape)

    def give(self, array: np.ndarray) -> None:
        if self.keep:
            self.free.setdefault(array.nbytes, []).append(array.base)


class Buffer:
    """One `ipu.buffer`: its copies on its tiles as the rows of one array, with a mask of the
    elements holding data. Overwrites by aliasing buffers are queued in `pending` (one entry
    per writing region) and applied to the mask before this buffer is next read or written:
    a buffer long dead costs nothing however often its bytes are reused."""

    def __init__(self, op: ipu.BufferOp, target: Target, pool: Pool, classes: np.ndarray | None = None):
        self.site, self.pool = site_of(op), pool
        memref, grid, self.offset = op.type, op.tiles, op.offset  # verified: tiles within the target, offset within a tile
        self.name = op.sym_name
        self.dtype = element_dtype(memref.element_type, self.site)
        self.elements = math.prod(memref.shape)
        self.element_bytes = ipu.element_bytes(memref.element_type)
        self.bytes = self.elements * self.element_bytes
        self.tiles = grid.tiles()
        if classes is None:  # every tile a row of its own
            classes = np.full(target.num_tiles, -1, dtype=np.int64)
            classes[self.tiles] = np.arange(self.tiles.size)
        # tiles of one class hold the same bytes (runtime/replicas.py): one row per class
        self.row_count = int(classes.max(initial=-1)) + 1
        self.row_of_tile = classes.copy()
        self.base = self.offset  # address for race checks; buffers without offset get their own
        self.aliases: set[Buffer] = set()
        self.pending: dict[int, tuple[Buffer, Region]] = {}
        self.data = self.written = self.last_write = None
        self.resident = False  # written once at load (a weight): kept from run to run

    def rows(self, tiles: np.ndarray, site: Site, verb: str) -> np.ndarray:
        rows = self.row_of_tile[tiles]
        if rows.min() < 0:
            tile = int(tiles[np.argmax(rows < 0)])
            raise site.error(f"{verb} @{self.name} on tile {tile}, which holds no copy of it: outside the tile's own memory")
        return rows

    def order_rows(self, tile_lists: list[np.ndarray]) -> None:
        """Rows for the tiles of `tile_lists` first, in their order, then the others."""
        listed = np.concatenate([*tile_lists, self.tiles])
        listed = listed[(listed >= 0) & (listed < self.row_of_tile.size)]
        rows = self.row_of_tile[listed]
        rows = rows[rows >= 0]
        _, first = np.unique(rows, return_index=True)
        rank = np.empty(self.row_count, np.int64)
        rank[rows[np.sort(first)]] = np.arange(self.row_count)
        self.row_of_tile[self.tiles] = rank[self.row_of_tile[self.tiles]]

    def describe(self, tile: int, lo: int, hi: int) -> str:
        """Elements [lo, hi) as tile memory: absolute bytes once the memory plan placed it."""
        eb = self.element_bytes
        if self.offset is None:
            return f"tile {tile} at bytes [{lo * eb}, {hi * eb}) of @{self.name}"
        return f"tile {tile} at bytes [{self.offset + lo * eb}, {self.offset + hi * eb}) (elements [{lo}, {hi}) of @{self.name})"

    def reset(self) -> None:
        if self.resident:
            return
        self.release()  # arrays are taken at first use, so freed buffers' memory is reused
        self.last_write = np.full(self.row_count, -1)  # per row: when it was last written, counting writes

    def release(self) -> None:
        if self.resident:
            return
        for array in (self.data, self.written):
            if array is not None:
                self.pool.give(array)
        self.data = self.written = None  # `last_write` stays, to name who overwrote an alias
        self.pool.masked.discard(self)
        self.pending.clear()

    def _allocate(self, check: bool) -> None:
        if self.data is None:
            self.data = self.pool.take((self.row_count, self.elements), self.dtype)
        if check and self.written is None:  # the mask exists only while checking
            self.written = self.pool.take((self.row_count, self.elements), np.dtype(bool))
            self.written.fill(False)
            self.pool.masked.add(self)

    def read(self, region: Region, site: Site, check: bool) -> np.ndarray:
        self._allocate(check)
        if check:
            self._check_read(region, site)
        return region.read(self.data)

    def copy_from(self, source: Buffer, reads: Strided, writes: Strided, site: Site, check: bool) -> None:
        """`write(writes, source.read(reads, site, check), check)` for two strided regions, the
        data moved through their item views (`item_views`: two array constructions, where
        `assign` takes a broadcast and two array interfaces, about 30 us a copy; a checked
        BERT-12 run makes 23,768 such writes)."""
        source._allocate(check)
        if check:
            source._check_read(reads, site)
        self._allocate(check)
        dest_items, source_items = item_views(reads, writes, source.data, self.data)
        dest_items[...] = source_items
        if check:
            self._mark(writes)

    def _check_read(self, region: Region, site: Site) -> None:
        """Raises if `region` holds an element never written (or clobbered through an alias)."""
        self._flush()
        view = region.read(self.written)
        if not view.all():
            view = view.reshape(-1, region.count)
            entry, first = (int(i) for i in np.argwhere(~view)[0])
            rest = view[entry, first:]
            lo = int(np.broadcast_to(region.lo, region.tiles.shape)[entry])
            missing = (int(region.tiles[entry]), lo + first, lo + first + (int(rest.argmax()) if rest.any() else rest.size))
            writer = self._last_writer(*missing)
            raise site.error(
                f"reads memory on {self.describe(*missing)}, {f'last written by @{writer.name}' if writer else 'never written'}"
            )

    def write(self, region: Region, values, check: bool) -> None:
        self._allocate(check)
        region.write(self.data, values)
        if check:
            self._mark(region)

    def _mark(self, region: Region) -> None:
        """Records a checked write of `region`: its elements hold data, and aliases lose theirs."""
        self._flush()
        region.write(self.written, True)
        self.last_write[region.rows] = next(_WRITES)
        for alias in self.aliases & self.pool.masked:  # those holding data to lose (a set walks the smaller)
            alias.pending[id(region)] = (self, region)

    def _flush(self) -> None:
        for source, region in self.pending.values():
            self._clobber(source, region)
        self.pending.clear()

    def _clobber(self, source: Buffer, region: Region) -> None:
        """Forgets the data of the elements sharing bytes with `source`'s write of `region`."""
        rows = self.row_of_tile[region.tiles]
        shift = source.offset - self.offset
        lo = np.maximum((shift + region.lo * source.element_bytes) // self.element_bytes, 0)
        hi = np.minimum(-((-shift - region.hi * source.element_bytes) // self.element_bytes), self.elements)
        keep = (rows >= 0) & (hi > lo)
        if not keep.any():
            return
        if np.ndim(lo) == 0:
            self.written[as_slice(rows[keep]), lo:hi] = False
        else:
            self.written.reshape(-1)[_flat_ranges(rows[keep] * self.elements + lo[keep], (hi - lo)[keep])] = False

    def _last_writer(self, tile: int, lo: int, hi: int) -> Buffer | None:
        """Of the aliasing buffers sharing those bytes on `tile`, the last one to write on it
        (its mask may be gone: buffers are released after their last use)."""
        start, end = (self.offset or 0) + lo * self.element_bytes, (self.offset or 0) + hi * self.element_bytes
        when = {
            b: b.last_write[b.row_of_tile[tile]]
            for b in self.aliases
            if b.row_of_tile[tile] >= 0 and b.offset < end and start < b.offset + b.bytes
        }
        writer = max(when, key=when.get, default=None)
        return writer if writer is not None and when[writer] >= 0 else None


_WRITES = itertools.count()


def row_uses(program: Program) -> dict[str, list[np.ndarray]]:
    """Per buffer, the tiles of each vertex group using it, in program order (`order_rows`)."""
    uses: dict[str, list[np.ndarray]] = {}
    for function in program.functions(ipu.COMPUTE_SET_ATTR):
        for op in program.groups(ir.StringAttr(function.attributes["sym_name"]).value):
            tiles = op.tiles.tiles()
            for name in (*op.inputs, *op.outputs):
                uses.setdefault(name, []).append(tiles)
    return uses


def order_rows(buffers: dict[str, Buffer], uses: dict[str, list[np.ndarray]]) -> None:
    """Puts each buffer's rows in the order of the tiles of the vertex groups using it
    (`row_uses`), so a vertex group's view of its buffers is a slice of rows (no gather).
    Copies and streams address rows through `row_of_tile` and do not care about the order."""
    for name, tile_lists in uses.items():
        if name in buffers:
            buffers[name].order_rows(tile_lists)


def link_aliases(buffers: list[Buffer]) -> None:
    """Pairs up the placed buffers sharing bytes on some tile (a sweep over sorted offsets)."""
    placed = sorted((b for b in buffers if b.offset is not None), key=lambda b: b.offset)
    tile_bits = {id(b): int.from_bytes(np.packbits(b.row_of_tile >= 0, bitorder="little").tobytes(), "little") for b in placed}
    for i, first in enumerate(placed):
        for second in placed[i + 1 :]:
            if second.offset >= first.offset + first.bytes:
                break
            if tile_bits[id(first)] & tile_bits[id(second)]:
                first.aliases.add(second)
                second.aliases.add(first)
