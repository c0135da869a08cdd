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

import functools
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from ipu_mlir.dialects.attrs import TileGrid


@dataclass(frozen=True)
class CopyWrite:
    """An `ipu.copy`: over its grid, source tile and first element, dest tile and first element
    (affine forms, so a recorded program costs no per-tile arrays)."""

    source: str
    dest: str
    src_tiles: TileGrid
    src_starts: TileGrid
    dst_tiles: TileGrid
    dst_starts: TileGrid


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
    store = _Store()
    labels = {}  # buffer -> the number of its classes' array in `store`
    for name, held in tiles.items():
        initial = np.full(num_tiles, -1, np.int64)
        initial[held] = 0
        labels[name] = store.number(initial)
    # tiles holding each buffer, counted on its mask (a sort per buffer was a tenth of BERT-base's classes)
    holders = {name: int(np.count_nonzero(store.arrays[number] >= 0)) for name, number in labels.items()}
    versions = dict.fromkeys(tiles, 0)  # how often each buffer's classes split
    writes = list(writes)
    targets, sources = [_targets(w) for w in writes], [_sources(w) for w in writes]
    seen: list[tuple | None] = [None] * len(writes)  # the versions of its sources a write last saw
    groupings: dict[TileGrid, _Grouping | None] = {}  # per copy destination grid, for every pass
    # Buffers whose tiles are each a class of their own cannot split further: writes to them
    # are skipped (most of a CNN's copies write activations already split by an earlier write).
    discrete = {name for name, count in holders.items() if count <= 1}
    # A write's signature depends on its forms and its sources' classes, a refinement on the
    # classes refined and the signature: each is made once per distinct pair of numbers
    # (BERT-base's 12 layers repeat a layer's copies between buffers of the same classes).
    numbered: dict[tuple, int] = {}
    forms = [numbered.setdefault(_forms(w), len(numbered)) for w in writes]
    signed: dict[tuple, int] = {}  # (forms, sources' classes), numbered -> the signature's number
    signatures: list[tuple[np.ndarray, np.ndarray]] = []  # (tiles written, an id per tile written), numbered
    refined: dict[tuple[int, int], int] = {}  # (classes, signature), numbered -> the refined classes' number
    changed = True
    while changed:  # each pass splits a class or ends
        changed = False
        for index, write in enumerate(writes):
            if discrete.issuperset(targets[index]):
                continue
            state = tuple(versions[name] for name in sources[index])
            if seen[index] == state:
                continue  # refining again by the same signature splits nothing
            seen[index] = state
            key = (forms[index], *(labels[name] for name in sources[index]))
            signature = signed.get(key)
            if signature is None:
                signature = signed[key] = len(signatures)
                signatures.append(_signature(write, {name: store.arrays[labels[name]] for name in sources[index]}, groupings))
            for buffer in targets[index]:
                before = labels[buffer]
                after = refined.get((before, signature))
                if after is None:
                    after = refined[before, signature] = _refine(store, before, tiles[buffer], *signatures[signature])
                if after != before:
                    labels[buffer] = after
                    versions[buffer] += 1
                    changed = True
                    if int(store.arrays[after].max()) + 1 == holders[buffer]:
                        discrete.add(buffer)
    return {name: store.arrays[number].copy() for name, number in labels.items()}


class _Store:
    """Arrays of classes, each distinct one kept once (read-only) and numbered."""

    def __init__(self) -> None:
        self.numbers: dict[bytes, int] = {}
        self.arrays: list[np.ndarray] = []

    def number(self, labels: np.ndarray) -> int:
        key = labels.tobytes()
        if key not in self.numbers:
            self.numbers[key] = len(self.arrays)
            self.arrays.append(np.frombuffer(key, np.int64))  # read-only, on the key's bytes
        return self.numbers[key]


def _forms(write: Write) -> tuple:
    """What a write's signature depends on besides its sources' classes."""
    if isinstance(write, CopyWrite):
        return write.src_tiles, write.src_starts, write.dst_tiles, write.dst_starts
    return type(write).__name__, write.tiles.dtype.str, write.tiles.tobytes()


def _targets(write: Write) -> tuple[str, ...]:
    if isinstance(write, CopyWrite):
        return (write.dest,)
    return write.outputs if isinstance(write, ComputeWrite) else (write.buffer,)


def _sources(write: Write) -> tuple[str, ...]:
    if isinstance(write, CopyWrite):
        return (write.source,)
    return write.inputs if isinstance(write, ComputeWrite) else ()


def _signature(write: Write, classes: dict[str, np.ndarray], groupings: dict[TileGrid, _Grouping | None]):
    """(tiles written, an id per tile written), the same for each buffer the write writes:
    tiles written alike get equal ids, within one write (not numbered 0, 1, ...: `_refine`
    numbers them with the classes). `classes` holds the sources' classes."""
    if isinstance(write, StreamWrite):
        return write.tiles, write.tiles
    if isinstance(write, ComputeWrite):
        inputs = [classes[name][write.tiles] for name in write.inputs]
        return write.tiles, _ids(inputs, dense=False) if inputs else np.zeros(write.tiles.size, np.int64)
    separable = _copy_signature(write, classes[write.source])
    if separable is not None:
        return separable
    points = _ids([write.dst_starts.tiles(), classes[write.source][write.src_tiles.tiles()], write.src_starts.tiles()], dense=False)
    if write.dst_tiles not in groupings:
        groupings[write.dst_tiles] = _Grouping.of(write.dst_tiles.tiles())
    grouping = groupings[write.dst_tiles]
    return (write.dst_tiles.tiles(), points) if grouping is None else (grouping.tiles, grouping.ids(points))


def _copy_signature(write: CopyWrite, source: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """A copy's (tiles written, id per tile) from its affine forms, over the grid axes along
    which the destination tile moves, not over every grid point (a convolution's halo copy of
    ResNet-50 has 2.4 million points on 1,190 tiles); None when those axes repeat a tile.

    A destination tile's messages, in grid order over the other (its own) axes, are the
    triples (dest start, source class, source start), each form a part fixed by the tile plus
    a part over its own axes that is the same for every tile. Two tiles' lists are then equal
    exactly when their fixed parts of both starts are, and the source classes along their own
    axes, a row that depends on the tile only by its source tile's fixed part (one row per
    distinct part; axes along which the source tile stays repeat a column and are left out)."""
    layout = _copy_layout(write.dst_tiles, write.src_tiles, write.dst_starts, write.src_starts)
    if layout is None:
        return None
    tiles, fixed, parts, which, row, starts = layout
    column = source[fixed] if row is None else row_ids(source[parts[:, None] + row[None, :]])[which]
    return tiles, _ids([starts, column], dense=False)


@functools.lru_cache(maxsize=1 << 16)
def _copy_layout(dst_tiles: TileGrid, src_tiles: TileGrid, dst_starts: TileGrid, src_starts: TileGrid) -> tuple | None:
    """What `_copy_signature` takes of a copy whatever the classes, made once per distinct copy
    (a layer's copies recur in every layer of its shape, and in each refinement pass): the
    tiles written, the source tile's fixed part per tile, its distinct parts and which each
    tile has, the row of the source tile's part over its own axes (None if it stays), and an
    id per tile of its fixed parts of both starts."""
    sizes = dst_tiles.sizes
    moving = moving_axes(dst_tiles)
    dest = restrict(dst_tiles, moving)
    if dest.has_repeats():
        return None
    fixed = restrict(src_tiles, moving).tiles()
    along = tuple(k for k in range(len(sizes)) if k not in moving and src_tiles.strides[k])
    parts = which = row = None
    if along:
        parts, which = np.unique(fixed, return_inverse=True)
        which, row = which.reshape(-1), restrict(src_tiles, along, first=0).tiles()
    starts = _ids([restrict(form, moving).tiles() for form in (dst_starts, src_starts)])
    return dest.tiles(), fixed, parts, which, row, starts


@functools.lru_cache(maxsize=1 << 16)
def moving_axes(tiles: TileGrid) -> tuple[int, ...]:
    """The grid axes along which a copy side's tile moves (the others stay on one tile)."""
    return tuple(k for k, (n, s) in enumerate(zip(tiles.sizes, tiles.strides)) if n > 1 and s)


def restrict(form: TileGrid, axes: tuple[int, ...], first: int | None = None) -> TileGrid:
    """An affine form over the grid's `axes` only (the others at index 0); made once per form
    (a copy's forms are restricted for its classes, races and shared bus alike)."""
    return TileGrid(form.first if first is None else first, tuple(form.sizes[k] for k in axes), tuple(form.strides[k] for k in axes))


@dataclass(frozen=True)
class _Grouping:
    """The grid points of a copy by destination tile, for a tile written at several points
    (identified by the list of its points' ids, in grid order: two tiles sent the same
    messages in another order count as different, which only keeps them apart). Made once per
    grid: the refinement passes reuse it."""

    tiles: np.ndarray  # the distinct tiles
    order: np.ndarray  # grid points sorted by tile
    cells: tuple[np.ndarray, np.ndarray]  # (tile, position among its points) of each sorted point
    shape: tuple[int, int]

    @staticmethod
    def of(tiles: np.ndarray) -> _Grouping | None:
        """None when each tile is written once: its point is then its id."""
        if tiles.size < 2 or np.bincount(tiles).max() == 1:
            return None
        order = np.argsort(tiles.astype(np.uint16) if tiles.max(initial=0) < 2**16 else tiles, kind="stable")  # 16 bits: a radix sort
        ordered = tiles[order]
        starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]])
        counts = np.diff(np.r_[starts, ordered.size])
        cells = (np.repeat(np.arange(starts.size), counts), np.arange(ordered.size) - np.repeat(starts, counts))
        return _Grouping(ordered[starts], order, cells, (starts.size, int(counts.max())))

    def ids(self, points: np.ndarray) -> np.ndarray:
        """An id per distinct tile of the list of its points' ids."""
        rows = np.full(self.shape, -1, np.int64)
        rows[self.cells] = points[self.order]
        return row_ids(rows)


def row_ids(rows: np.ndarray) -> np.ndarray:
    """Equal ids for equal rows of `rows` (few rows, one per tile): their lexicographic ranks,
    one sort over all columns at once."""
    order = np.lexsort(rows.T[::-1])
    ordered = rows[order]
    ids = np.empty(rows.shape[0], np.int64)
    ids[order] = np.cumsum(np.r_[True, np.any(ordered[1:] != ordered[:-1], axis=1)]) - 1
    return ids


def _ids(columns: list[np.ndarray], dense: bool = True) -> np.ndarray:
    """Equal ids for equal rows of the integer `columns` and only for them: the columns combined
    in mixed radix, re-numbered 0, 1, ... when the next one could overflow (and at the end if
    `dense`; else they lie within 2**62)."""
    ids = np.zeros(columns[0].size, np.int64)
    for column in columns:
        low = int(column.min(initial=0))
        radix = int(column.max(initial=0)) - low + 1
        if int(ids.max(initial=0)) + 1 > (2**62) // radix:  # both numbered 0, 1, ...: their product is within rows**2
            ids, column, low = _dense(ids), _dense(column), 0
            radix = int(column.max(initial=0)) + 1
        ids = ids * radix + (column - low)
    return _dense(ids) if dense else ids


def _dense(ids: np.ndarray) -> np.ndarray:
    """`ids` numbered 0, 1, ... in increasing order. Ids spanning a few times their count are
    marked in a table and counted, in passes where `np.unique` sorts: half the time on a tile's
    worth of ids, numbered thousands of times per program."""
    if not ids.size:
        return ids
    low = int(ids.min())
    span = int(ids.max()) - low + 1
    if span > 4 * ids.size + 1024:
        return np.unique(ids, return_inverse=True)[1].reshape(-1)
    offsets = ids - low
    present = np.zeros(span, np.int64)
    present[offsets] = 1
    return np.cumsum(present)[offsets] - 1


def _refine(store: _Store, number: int, holders: np.ndarray, written: np.ndarray, signature: np.ndarray) -> int:
    """The classes numbered `number` in `store` (over the buffer's `holders`) split so that
    tiles of a class were written alike, numbered in `store` (`number` if none split)."""
    labels = store.arrays[number]
    key = np.full(labels.size, -1, np.int64)
    key[written] = signature
    before, keys = labels[holders], key[holders]
    # Whether each class has one key: scatter a key per class (any of its own), gather it back
    # (writes that split nothing, a third of ResNet-50's, skip the numbering below).
    some = np.empty(int(before.max(initial=-1)) + 1, np.int64)
    some[before] = keys
    if np.array_equal(some[before], keys):
        return number
    refined = labels.copy()
    refined[holders] = _ids([before, keys])
    return store.number(refined)
