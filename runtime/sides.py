"""A copy's side as one strided view, from its affine forms, without listing its grid points.

A copy's tiles and starts are affine in its grid index; its buffer rows are the rows of its
tiles, so they move only along the axes that move the tile. Checking that the rows are
affine there, over a grid of at most a few thousand points (a tile each), makes the side a
`Strided` view (runtime/memory.py) with no pass over the copy's points: a ResNet-50 halo
copy has 2.4 million of them on 1,190 tiles. `memory.strided_pieces` plans the sides that are
not affine (in pieces, or as windows) from listed points.

    whole = strided_side(buffer, tiles, starts, count, write, site)   # None: not affine
"""

from __future__ import annotations

import numpy as np

from ipu_mlir.dialects.attrs import TileGrid

from .memory import Buffer, Site, Strided
from .replicas import moving_axes, restrict


def strided_side(buffer: Buffer, tiles: TileGrid, starts: TileGrid, count: int, write: bool, site: Site) -> Strided | None:
    """The side as `Side.strided` makes it from listed points, or None when its rows are not
    affine in the grid index, or a write repeats elements (left to the listed planning)."""
    sizes = tiles.sizes
    moving = moving_axes(tiles)
    rows = buffer.rows(restrict(tiles, moving).tiles(), site, "writes" if write else "reads")  # its errors: a tile without the buffer
    row_strides = _affine(rows, tuple(sizes[k] for k in moving))
    if row_strides is None:
        return None
    along = dict(zip(moving, row_strides))
    forms = tuple(
        TileGrid(first, sizes, tuple(s if n > 1 else 0 for n, s in zip(sizes, strides)))
        for first, strides in (
            (int(rows[0]), tuple(along.get(k, 0) for k in range(len(sizes)))),
            (tiles.first, tiles.strides),
            (starts.first, starts.strides),
        )
    )
    strides = tuple(r * buffer.elements + s for r, s in zip(forms[0].strides, forms[2].strides))
    if write and any(s == 0 and n > 1 for s, n in zip(strides, sizes)):
        return None
    return Strided(forms, count, (*sizes, count), forms[0].first * buffer.elements + starts.first, (*strides, 1))


def _affine(values: np.ndarray, sizes: tuple[int, ...]) -> tuple[int, ...] | None:
    """The strides of `values` (in grid order over `sizes`) as `values[0] + sum_k i_k *
    strides[k]`, or None if they are not affine."""
    steps = [int(np.prod(sizes[k + 1 :], dtype=np.int64)) for k in range(len(sizes))]
    strides = tuple(int(values[step]) - int(values[0]) if n > 1 else 0 for n, step in zip(sizes, steps))
    grid = np.indices(sizes, dtype=np.int64).reshape(len(sizes), -1) if sizes else np.zeros((0, 1), np.int64)
    expected = values[0] + np.asarray(strides, np.int64) @ grid
    return strides if np.array_equal(expected, values) else None
