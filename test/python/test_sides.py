"""A copy's side from its affine forms (`runtime/sides.py`) against the same side planned from
its listed grid points (`copy_pieces.Side.strided`), and a copy's pieces from the axes moving its
tiles (`narrow_pieces`) against those of all its listed points (`copy_pieces.strided_pieces`)."""

from __future__ import annotations

import numpy as np
from mlir import ir

from ipu_mlir.dialects import make_context
from ipu_mlir.dialects.attrs import TileGrid
from ipu_mlir.runtime.copy_pieces import Side, strided_pieces
from ipu_mlir.runtime.memory import Site
from ipu_mlir.runtime.regions import constant_axes
from ipu_mlir.runtime.sides import cut_to_first, narrow_pieces, still_axes, strided_side

TILES = 8


class Rows:
    """What a side reads of a buffer: its row per tile and elements per row."""

    def __init__(self, row_of_tile: np.ndarray, elements: int = 64):
        self.row_of_tile, self.elements = row_of_tile, elements

    def rows(self, tiles: np.ndarray, site: Site, verb: str) -> np.ndarray:
        return self.row_of_tile[tiles]


def test_sides_from_forms_are_the_sides_from_listed_points():
    rng = np.random.default_rng(5)
    layouts = [np.arange(TILES), np.arange(TILES)[::-1].copy(), np.array([0, 4, 1, 5, 2, 6, 3, 7]), rng.permutation(TILES)]
    found = 0
    with make_context():
        site = Site("ipu.copy", ir.Location.unknown())
        for _ in range(500):
            rank = int(rng.integers(1, 4))
            sizes = tuple(int(n) for n in rng.integers(1, 4, rank))
            strides = tuple(int(s) if rng.random() < 0.6 else 0 for s in rng.integers(1, 3, rank))
            reach = sum((n - 1) * s for n, s in zip(sizes, strides))
            tiles = (
                TileGrid(int(rng.integers(0, max(1, TILES - reach))), sizes, strides) if reach < TILES else TileGrid(0, sizes, (0,) * rank)
            )
            starts = TileGrid(int(rng.integers(0, 4)), sizes, tuple(int(s) if rng.random() < 0.6 else 0 for s in rng.integers(1, 9, rank)))
            buffer, count, write = Rows(layouts[int(rng.integers(0, len(layouts)))]), int(rng.integers(1, 5)), bool(rng.random() < 0.5)
            listed = tiles.tiles()
            expected = Side(buffer.rows(listed, site, ""), listed, starts.tiles(), buffer.elements, write, affine=True).strided(
                count, sizes
            )
            got = strided_side(buffer, tiles, starts, count, write, site)
            assert (got is None) == (expected is None), (tiles, starts, buffer.row_of_tile)
            if got is not None:
                found += 1
                assert (got.forms, got.base, got.strides, got.shape, got.count) == (
                    expected.forms,
                    expected.base,
                    expected.strides,
                    expected.shape,
                    expected.count,
                )
    assert 100 < found < 450  # affine and not affine both seen


def random_form(rng: np.random.Generator, sizes: tuple[int, ...], limit: int, scale: int = 1) -> TileGrid:
    strides = tuple(int(s) * scale if rng.random() < 0.5 else 0 for s in rng.choice([-1, 1, 2], len(sizes)))
    low = sum(min(0, (n - 1) * s) for n, s in zip(sizes, strides))
    high = sum(max(0, (n - 1) * s) for n, s in zip(sizes, strides))
    if high - low >= limit:
        return TileGrid(0, sizes, (0,) * len(sizes))
    return TileGrid(int(rng.integers(-low, limit - high)), sizes, strides)


def random_copy(rng: np.random.Generator, layouts: list[np.ndarray]):
    """Buffers (of rows laid out as one of `layouts`), tiles and starts of a random copy's
    source and destination, and its size."""
    sizes = tuple(int(n) for n in rng.integers(1, 4, int(rng.integers(1, 5))))
    grids = tuple(random_form(rng, sizes, TILES) for _ in range(2))
    starts = tuple(random_form(rng, sizes, 8, scale=4) for _ in range(2))
    buffers = tuple(Rows(layouts[int(rng.integers(0, len(layouts)))], 256) for _ in range(2))
    return buffers, grids, starts, int(rng.integers(1, 5))


def listed_pieces(buffers, grids, starts, count: int, site: Site, collapse: bool):
    """The simulator's pieces from every listed point (its path before narrow_pieces)."""
    sides = [
        Side(buffer.rows(grid.tiles(), site, ""), grid.tiles(), start.tiles(), buffer.elements, write, affine=True)
        for buffer, grid, start, write in zip(buffers, grids, starts, (False, True))
    ]
    sizes = grids[0].sizes
    if collapse:
        for axis, repeated in enumerate(constant_axes([sides[1].rows, sides[1].starts], sizes)):
            if repeated and sizes[axis] > 1:
                sides = [side.take(axis, 0, 1, sizes) for side in sides]
                sizes = (*sizes[:axis], 1, *sizes[axis + 1 :])
    return strided_pieces(*sides, count, sizes)


def test_pieces_from_the_moving_axes_are_the_pieces_from_listed_points():
    rng = np.random.default_rng(11)
    layouts = [np.arange(TILES), np.array([0, 4, 1, 5, 2, 6, 3, 7]), np.array([3, 2, 1, 0, 4, 5, 6, 7]), rng.permutation(TILES)]
    seen = {"narrowed": 0, "cut": 0, "left to listing": 0}
    with make_context():
        site = Site("ipu.copy", ir.Location.unknown())
        for _ in range(600):
            buffers, grids, starts, count = random_copy(rng, layouts)
            collapse = bool(rng.random() < 0.5)
            got = narrow_pieces(buffers, grids, starts, count, site, collapse)
            expected = listed_pieces(buffers, grids, starts, count, site, collapse)
            if got is None:  # the simulator then lists every point
                seen["left to listing"] += 1
                continue
            seen["narrowed"] += 1
            seen["cut"] += len(got) > 1
            described = [[(r.forms, r.base, r.strides, r.shape, r.count) for r in piece] for piece in got]
            assert described == [[(r.forms, r.base, r.strides, r.shape, r.count) for r in piece] for piece in expected], (grids, starts)
    assert min(seen.values()) > 20, seen


def test_replicas_written_once_from_forms_as_from_listed_points():
    # An unchecked plan writes the points of a destination row and start once: cut from the
    # forms (still_axes), the pieces are those of the listed points cut where they repeat.
    rng = np.random.default_rng(13)
    layouts = [np.arange(TILES), np.arange(TILES) // 2, np.zeros(TILES, np.int64), np.arange(TILES) % 4]
    seen = {"cut": 0, "whole": 0}
    with make_context():
        site = Site("ipu.copy", ir.Location.unknown())
        for _ in range(600):
            buffers, grids, starts, count = random_copy(rng, layouts)
            still = still_axes(buffers[1], grids[1], starts[1], site)
            cut = [tuple(cut_to_first(form, still) for form in forms) for forms in (grids, starts)]
            whole = [
                strided_side(buffer, grid, start, count, write, site) for buffer, grid, start, write in zip(buffers, *cut, (False, True))
            ]
            if None in whole:
                continue
            expected = listed_pieces(buffers, grids, starts, count, site, collapse=True)
            assert expected is not None and len(expected) == 1, (grids, starts)
            assert [(r.forms, r.base, r.strides, r.shape, r.count) for r in whole] == [
                (r.forms, r.base, r.strides, r.shape, r.count) for r in expected[0]
            ]
            seen["cut" if still else "whole"] += 1
    assert min(seen.values()) > 20, seen
