"""What loading reuses: the strided pieces of copies with equal sides (runtime/copy_pieces.py)."""

from __future__ import annotations

import numpy as np

from ipu_mlir.runtime import copy_pieces


def _side(rows, write: bool, start: int = 0) -> copy_pieces.Side:
    tiles = np.arange(len(rows))
    return copy_pieces.Side(np.asarray(rows), tiles, np.full(len(rows), start, np.int64), 64, write=write, affine=True)


def test_equal_sides_share_pieces_but_not_regions():
    scrambled = [0, 8, 1, 9, 2, 10, 3, 11, 4, 12, 5, 13, 6, 14, 7, 15]
    first = copy_pieces.strided_pieces(_side(range(16), False), _side(scrambled, True), 64, (16,))
    again = copy_pieces.strided_pieces(_side(range(16), False), _side(scrambled, True), 64, (16,))
    assert len(first) == len(again) == 8
    # the same views, but regions of their own: a write's region identifies it to aliasing buffers
    assert [(r.base, r.strides, w.base, w.strides) for r, w in first] == [(r.base, r.strides, w.base, w.strides) for r, w in again]
    assert all(a is not b for pair, other in zip(first, again) for a, b in zip(pair, other))


def test_sides_differing_in_rows_or_starts_get_their_own_pieces():
    forwards = copy_pieces.strided_pieces(_side(range(16), False), _side(range(16), True), 64, (16,))
    backwards = copy_pieces.strided_pieces(_side(range(15, -1, -1), False), _side(range(16), True), 64, (16,))
    shifted = copy_pieces.strided_pieces(_side(range(16), False), _side(range(16), True, start=3), 64, (16,))
    data = np.arange(16 * 64, dtype=np.float32).reshape(16, 64)
    assert np.array_equal(forwards[0][0].read(data), data)
    assert np.array_equal(backwards[0][0].read(data), data[::-1])
    assert shifted[0][1].base == 3 and forwards[0][1].base == 0


def test_tiles_keyed_by_their_whole_affine_form():
    # Two 2x4 grids whose tiles agree on their first entries in grid order (0, 1) but not on
    # the step of the outer axis: different pieces.
    rows = np.arange(8)
    source = copy_pieces.Side(rows, rows, np.zeros(8, np.int64), 64, write=False, affine=True)
    near = copy_pieces.Side(rows, rows, np.zeros(8, np.int64), 64, write=True, affine=True)
    far = copy_pieces.Side(rows, np.array([0, 1, 2, 3, 10, 11, 12, 13]), np.zeros(8, np.int64), 64, write=True, affine=True)
    (on_near,) = copy_pieces.strided_pieces(source, near, 64, (2, 4))
    (on_far,) = copy_pieces.strided_pieces(source, far, 64, (2, 4))
    assert on_near[1].tiles.tolist() == list(range(8))
    assert on_far[1].tiles.tolist() == [0, 1, 2, 3, 10, 11, 12, 13]
