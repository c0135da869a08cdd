"""A prepared copy's views (runtime/regions.py `item_views`), made from its regions' strides,
against `arrays.as_items` of the regions' element views: the same items, the same bytes copied."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ipu_mlir.dialects.attrs import TileGrid
from ipu_mlir.dialects.ops.arrays import as_items
from ipu_mlir.runtime.regions import Strided, item_views

ROWS, ELEMENTS = 12, 96


def strided(shape: tuple[int, ...], strides: tuple[int, ...], base: int) -> Strided:
    form = TileGrid(0, shape[:-1], (0,) * (len(shape) - 1))  # not read by the views
    return Strided((form, form, form), shape[-1], shape, base, strides)


def layouts(rng: np.random.Generator):
    """Pairs of sides of one shape within a (ROWS, ELEMENTS) buffer: runs contiguous in both,
    in one only, broadcast (stride 0) sources, size-1 axes, backwards strides."""
    cases = [
        ((4, 8), (ELEMENTS, 1), (ELEMENTS, 1), 0, 5),  # rows: a run of 8 items
        ((3, 2, 8), (2 * ELEMENTS, 8, 1), (ELEMENTS, 8, 1), 3, 0),  # two axes contiguous in both: one 16-element item
        ((3, 2, 8), (2 * ELEMENTS, 16, 1), (ELEMENTS, 8, 1), 0, 0),  # contiguous in the source only: 8
        ((5, 8), (0, 1), (ELEMENTS, 1), 7, 1),  # a broadcast source
        ((1, 4, 1, 6), (7, 6, 3, 1), (5, 6, 9, 1), 2, 4),  # size-1 axes skipped
        ((4, 1), (ELEMENTS, 1), (ELEMENTS, 1), 0, 0),  # single elements: no run
        ((6, 4), (-ELEMENTS, 1), (ELEMENTS, 1), 6 * ELEMENTS - ELEMENTS, 2),  # backwards rows
        ((2, 3, 4), (12, 4, 1), (12, 4, 1), 0, 30),  # all contiguous: one item, no axis
    ]
    for shape, src_strides, dst_strides, src_base, dst_base in cases:
        yield strided(shape, src_strides, src_base), strided(shape, dst_strides, dst_base)
    for _ in range(40):
        rank = int(rng.integers(1, 4))
        shape = (*(int(n) for n in rng.integers(1, 4, rank)), int(rng.integers(1, 9)))
        sides = []
        for _side in range(2):
            strides = [1]
            for n in reversed(shape[1:]):  # packed, or with gaps
                strides.insert(0, strides[0] * n + int(rng.integers(0, 2)) * int(rng.integers(1, 4)))
            span = sum((n - 1) * s for n, s in zip(shape, strides)) + 1
            sides.append(strided(shape, tuple(strides), int(rng.integers(0, ROWS * ELEMENTS - span + 1))))
        yield sides[0], sides[1]


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int64])
def test_item_views_copy_as_as_items_does(dtype):
    rng = np.random.default_rng(3)
    for reads, writes in layouts(rng):
        source = rng.integers(-100, 100, (ROWS, ELEMENTS)).astype(dtype)
        ours, theirs = np.zeros_like(source), np.zeros_like(source)
        dest_items, source_items = item_views(reads, writes, source, ours)
        expected_dest, expected_source = as_items(writes.view(theirs), reads.view(source))
        assert (dest_items.shape, dest_items.dtype) == (expected_dest.shape, expected_dest.dtype)
        assert source_items.dtype == expected_source.dtype
        dest_items[...] = source_items
        expected_dest[...] = expected_source
        assert ours.tobytes() == theirs.tobytes()
        assert math.prod(writes.shape) == 0 or ours.any()  # something was copied


def test_item_views_of_other_element_types_are_element_views():
    reads, writes = strided((4, 8), (ELEMENTS, 1), 0), strided((4, 8), (ELEMENTS, 1), 0)
    source, dest = np.ones((ROWS, ELEMENTS), np.float32), np.zeros((ROWS, ELEMENTS), np.int32)
    dest_items, source_items = item_views(reads, writes, source, dest)
    assert dest_items.dtype == np.int32 and source_items.dtype == np.float32
    dest_items[...] = source_items
    assert dest[:4, :8].sum() == 32 and dest.sum() == 32
