"""A copy's side from its affine forms (`runtime/sides.py`) against the same side planned from
its listed grid points (`memory.Side.strided`)."""

from __future__ import annotations

import numpy as np
from mlir import ir

from ipu_mlir.dialects import make_context
from ipu_mlir.dialects.attrs import TileGrid
from ipu_mlir.runtime.memory import Side, Site
from ipu_mlir.runtime.sides import strided_side

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
