"""A copy's two sides cut into strided views (`strided_pieces`): the copy is then a few numpy
assignments instead of windows per tile.

    pieces = strided_pieces(source_side, dest_side, size, grid_sizes)   # None: use windows
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import numpy as np

from ipu_mlir.dialects.attrs import TileGrid

from .regions import Strided, affine_form


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
