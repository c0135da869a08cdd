"""Tile memory for the simulator: buffers and the regions of them that ops read and write.

Each `ipu.buffer` is a `Buffer`: an array of (its tiles, its elements) plus a `written` mask,
not an image of SRAM, allocated at its first use and freed after its last in the checked run;
the plan of later runs binds each buffer to one array at load (`bind_arrays`), so copies and
codelets use views made once. Its rows follow the
tiles of the vertex groups using it (`order_rows`), so a vertex group's view is a slice of rows.
The regions ops touch are `regions.py`'s; a copy's strided pieces, `copy_pieces.py`'s.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np
from mlir import ir

from ipu_mlir.dialects import ipu
from ipu_mlir.dialects.ops import semantics
from ipu_mlir.dialects.program import Program
from ipu_mlir.target import Target
from ipu_mlir.target.diagnostics import IpuError, format_location

from .regions import Region, Strided, as_slice, item_views


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
