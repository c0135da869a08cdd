"""A copy's side as one strided view, from its affine forms, without listing its grid points.

A copy's tiles and starts are affine in its grid index; its buffer rows are the rows of its
tiles, so they move only along the axes that move the tile. Checking that the rows are
affine there, over a grid of at most a few thousand points (a tile each), makes the side a
`Strided` view (runtime/regions.py) with no pass over the copy's points: a ResNet-50 halo
copy has 2.4 million of them on 1,190 tiles. `copy_pieces.strided_pieces` plans the sides that are
not affine (in pieces, or as windows) from listed points.

    whole = strided_side(buffer, tiles, starts, count, write, site)   # None: not affine

A side that is not affine is planned from listed points (`copy_pieces.strided_pieces`), but only
over the axes moving either side's tile (`narrow_pieces`): along the others, rows stay and
starts step by their forms' strides, so no cut falls there and each piece takes them back as
axes of its own. A ResNet-50 copy of 368,640 points lists 9,216.

    pieces = narrow_pieces((source, dest), grids, starts, count, site, collapse)   # None: list all
"""

from __future__ import annotations

from ipu_mlir.dialects.attrs import TileGrid

from .copy_pieces import Side, strided_pieces
from .memory import Buffer, Site
from .regions import Strided, affine_form, constant_axes
from .replicas import moving_axes, restrict


def strided_side(buffer: Buffer, tiles: TileGrid, starts: TileGrid, count: int, write: bool, site: Site) -> Strided | None:
    """The side as `Side.strided` makes it from listed points, or None when its rows are not
    affine in the grid index, or a write repeats elements (left to the listed planning)."""
    sizes = tiles.sizes
    row = _row_form(buffer, tiles, site, "writes" if write else "reads")
    if row is None:
        return None
    forms = tuple(
        TileGrid(first, sizes, tuple(s if n > 1 else 0 for n, s in zip(sizes, strides)))
        for first, strides in (row, (tiles.first, tiles.strides), (starts.first, starts.strides))
    )
    strides = tuple(r * buffer.elements + s for r, s in zip(forms[0].strides, forms[2].strides))
    if write and any(s == 0 and n > 1 for s, n in zip(strides, sizes)):
        return None
    return Strided(forms, count, (*sizes, count), forms[0].first * buffer.elements + starts.first, (*strides, 1))


def still_axes(buffer: Buffer, tiles: TileGrid, starts: TileGrid, site: Site) -> tuple[int, ...]:
    """The grid axes (of more than one point) along which a written side's row and start
    both stay, from its forms: its points along them write one place (replicas in an
    unchecked plan, alike). None found when its rows are not affine in the grid index."""
    row = _row_form(buffer, tiles, site, "writes")
    if row is None:
        return ()
    return tuple(k for k, (n, r, s) in enumerate(zip(tiles.sizes, row[1], starts.strides)) if n > 1 and r == 0 and s == 0)


def cut_to_first(form: TileGrid, axes: tuple[int, ...]) -> TileGrid:
    """`form` with `axes` cut to their first point."""
    return TileGrid(form.first, tuple(1 if k in axes else n for k, n in enumerate(form.sizes)), form.strides)


def _row_form(buffer: Buffer, tiles: TileGrid, site: Site, verb: str) -> tuple[int, tuple[int, ...]] | None:
    """The side's buffer rows as an affine form over the grid (first row, a stride per axis),
    or None when they are not affine; rows move only along the axes moving the tile."""
    sizes = tiles.sizes
    moving = moving_axes(tiles)
    rows = buffer.rows(restrict(tiles, moving).tiles(), site, verb)  # its errors: a tile without the buffer
    row_strides = affine_form(rows, tuple(sizes[k] for k in moving))[1]
    if row_strides is None:
        return None
    along = dict(zip(moving, row_strides))
    return int(rows[0]), tuple(along.get(k, 0) for k in range(len(sizes)))


def narrow_pieces(
    buffers: tuple[Buffer, Buffer],
    grids: tuple[TileGrid, TileGrid],
    starts: tuple[TileGrid, TileGrid],
    count: int,
    site: Site,
    collapse: bool,
) -> list[tuple[Strided, Strided]] | None:
    """The pieces `copy_pieces.strided_pieces` makes of the copy's listed sides (a source and a
    destination side over the whole grid), from the sides listed over the axes moving either
    tile only. With `collapse` (an unchecked plan), axes along which the destination's row
    and start stay are cut to their first point, as the caller does to listed sides. None
    when strided_pieces finds none, or when an axis left out writes one place twice in a
    checked plan: the caller then lists every point."""
    sizes = grids[0].sizes
    kept = tuple(k for k, n in enumerate(sizes) if n > 1 and (grids[0].strides[k] or grids[1].strides[k]))
    again = {k for k, n in enumerate(sizes) if k not in kept and n > 1 and starts[1].strides[k] == 0}  # one place written again
    if again and not collapse:
        return None
    sides = []
    for buffer, grid, start, verb in zip(buffers, grids, starts, ("reads", "writes")):
        tiles = restrict(grid, kept).tiles()
        sides.append(
            Side(buffer.rows(tiles, site, verb), tiles, restrict(start, kept).tiles(), buffer.elements, verb == "writes", affine=True)
        )
    narrow = tuple(sizes[k] for k in kept)
    if collapse:
        for axis, repeated in enumerate(constant_axes([sides[1].rows, sides[1].starts], narrow)):
            if repeated and narrow[axis] > 1:
                sides = [side.take(axis, 0, 1, narrow) for side in sides]
                narrow = (*narrow[:axis], 1, *narrow[axis + 1 :])
    pieces = strided_pieces(*sides, count, narrow)
    if pieces is None:
        return None
    wide = [1 if k in again else n for k, n in enumerate(sizes)]
    return [tuple(_widened(region, kept, wide, start) for region, start in zip(piece, starts)) for piece in pieces]


def _widened(region: Strided, kept: tuple[int, ...], sizes: list[int], starts: TileGrid) -> Strided:
    """A piece over the kept axes with the others back in place: the row and tile stay along
    them, the start steps by its form's stride (0 along an axis of one point)."""
    position = {k: i for i, k in enumerate(kept)}
    sizes = [region.shape[position[k]] if k in position else n for k, n in enumerate(sizes)]

    def along(values: tuple[int, ...], others: tuple[int, ...]) -> tuple[int, ...]:
        return tuple(values[position[k]] if k in position else other for k, other in enumerate(others))

    stay = (0,) * len(sizes)
    start_strides = tuple(s if n > 1 else 0 for n, s in zip(sizes, starts.strides))
    forms = tuple(
        TileGrid(form.first, tuple(sizes), along(form.strides, others)) for form, others in zip(region.forms, (stay, stay, start_strides))
    )
    return Strided(forms, region.count, (*sizes, region.count), region.base, (*along(region.strides[:-1], start_strides), 1))
