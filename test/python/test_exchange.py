"""plan_transfers against a brute-force, element-by-element model of the copies."""

import itertools
import math

import numpy as np
import pytest

from ipu_mlir.lowering.exchange import plan_transfers
from ipu_mlir.lowering.layout import Layout, Parts


def _boxes(layout: Layout):
    """(tile, per-dim intervals) of every box of the layout, replicas included."""
    for parts in itertools.product(*[range(d.count) for d in layout.dims]):
        for replica in itertools.product(*[range(c) for c, _ in layout.replicate]):
            tile = layout.first_tile + sum(j * d.stride for j, d in zip(parts, layout.dims))
            tile += sum(r * s for r, (_, s) in zip(replica, layout.replicate))
            yield tile, [d.intervals[j] for j, d in zip(parts, layout.dims)]


def _store(tensor: np.ndarray, layout: Layout) -> dict[int, np.ndarray]:
    memory = {}
    for tile, box in _boxes(layout):
        piece = tensor[tuple(slice(lo, hi) for lo, hi in box)].reshape(-1)
        buffer = np.full(math.prod(layout.buffer_shape), np.nan)
        buffer[: piece.size] = piece
        memory[tile] = buffer
    return memory


def _apply(transfers, src_memory, dst_layout):
    dst_memory = {tile: np.full(math.prod(dst_layout.buffer_shape), np.nan) for tile, _ in _boxes(dst_layout)}
    written = {tile: np.zeros(buffer.size, dtype=int) for tile, buffer in dst_memory.items()}
    for t in transfers:
        src_tiles, dst_tiles = t.src_tiles.tiles(), t.dst_tiles.tiles()
        for flat, index in enumerate(itertools.product(*[range(n) for n in t.dst_tiles.sizes])):
            src_at = t.src_offset[0] + sum(i * s for i, s in zip(index, t.src_offset[1:]))
            dst_at = t.dst_offset[0] + sum(i * s for i, s in zip(index, t.dst_offset[1:]))
            dst_memory[dst_tiles[flat]][dst_at : dst_at + t.size] = src_memory[src_tiles[flat]][src_at : src_at + t.size]
            written[dst_tiles[flat]][dst_at : dst_at + t.size] += 1
    assert all((w <= 1).all() for w in written.values()), "an element was written twice"
    return dst_memory


def _check(shape, src: Layout, dst: Layout, shift=None, box=None, max_copies=None):
    tensor = np.arange(math.prod(shape), dtype=float).reshape(shape)
    transfers = plan_transfers(src, dst, shift, box)
    if max_copies is not None:
        assert len(transfers) <= max_copies
    got = _apply(transfers, _store(tensor, src), dst)
    shift = shift or (0,) * len(shape)
    box = box or tuple((0, n) for n in shape)
    for tile, region in _boxes(dst):
        extents = [hi - lo for lo, hi in region]
        expected = np.full(extents, np.nan)
        for index in itertools.product(*[range(e) for e in extents]):
            x = [lo + i - s for (lo, _), i, s in zip(region, index, shift)]
            if all(b0 <= xi < b1 for xi, (b0, b1) in zip(x, box)):
                expected[index] = tensor[tuple(x)]
        np.testing.assert_array_equal(got[tile][: math.prod(extents)], expected.reshape(-1))
    return transfers


def test_same_layout_is_one_copy():
    layout = Layout.blocks((64, 64), (16, 64), 0, (1, 0))
    transfers = _check((64, 64), layout, Layout.blocks((64, 64), (16, 64), 8, (1, 0)), max_copies=1)
    assert transfers[0].size == 1024


def test_merge_blocks_matches_docstring():
    transfers = _check((64, 64), Layout.blocks((64, 64), (16, 64), 0, (1, 0)), Layout.blocks((64, 64), (32, 64), 4, (1, 0)))
    # The two positions of a source block inside a destination block are a second grid level.
    assert len(transfers) == 1
    t = transfers[0]
    assert (t.size, t.src_tiles.sizes, t.src_tiles.strides, t.dst_tiles.strides) == (1024, (2, 2), (2, 1), (1, 0))
    assert t.dst_offset == (0, 0, 1024)


@pytest.mark.parametrize("src_block,dst_block", [((5, 7), (3, 4)), ((8, 8), (8, 3)), ((13, 2), (4, 13)), ((1, 20), (20, 1))])
def test_uneven_blocks(src_block, dst_block):
    shape = (13, 20)
    src = Layout.blocks(shape, src_block, 0, (-(-shape[1] // src_block[1]), 1))
    dst = Layout.blocks(shape, dst_block, 100, (-(-shape[1] // dst_block[1]), 1))
    _check(shape, src, dst)


def test_replicated_operand_of_a_matmul():
    # lhs 12x10 needed as (m-part, k-part) boxes, replicated over 3 n-parts.
    src = Layout.blocks((12, 10), (12, 5), 0, (0, 1))
    dst = Layout((12, 10), 10, (Parts.blocks(12, 4, 6), Parts.blocks(10, 5, 1)), replicate=((3, 2),))
    transfers = _check((12, 10), src, dst)
    assert len(transfers) == 1


def test_overlapping_halo_regions():
    # A 3-wide window with stride 1 over 16 rows in 4 parts: parts overlap by 2 rows.
    parts = Parts(tuple((max(0, 4 * j - 1), min(16, 4 * j + 5)) for j in range(4)), 1)
    dst = Layout((16, 8), 20, (parts, Parts.blocks(8, 8, 0)))
    transfers = _check((16, 8), Layout.blocks((16, 8), (8, 8), 0, (1, 0)), dst)
    assert len(transfers) <= 6


@pytest.mark.parametrize("dst_block", [(8, 8), (3, 8), (16, 3)])
def test_a_source_stored_with_halos_sends_each_element_once(dst_block):
    """A grid stored as its stencil's pieces (rows 4j .. 4j+5 on part j: `halo_storage`) holds
    most rows twice; each destination element comes from the first part holding it."""
    parts = Parts(tuple((4 * j, min(16, 4 * j + 6)) for j in range(4)), 1)
    src = Layout((16, 8), 0, (parts, Parts.blocks(8, 8, 0)))
    dst = Layout.blocks((16, 8), dst_block, 30, (-(-8 // dst_block[1]), 1))
    _check((16, 8), src, dst)


def test_shift_and_box_for_slices():
    src = Layout.blocks((10, 6), (5, 6), 0, (1, 0))
    dst = Layout.blocks((4, 6), (2, 3), 4, (2, 1))
    _check((10, 6), src, dst, shift=(-3, 0), box=((3, 7), (0, 6)))  # extract rows 3..6


def test_copy_count_does_not_grow_with_tiles():
    counts = []
    for tiles in (16, 256, 1472):
        n = tiles * 4
        src = Layout.blocks((n, 8), (4, 8), 0, (1, 0))
        dst = Layout.blocks((n, 8), (8, 8), 0, (1, 0))
        counts.append(len(plan_transfers(src, dst)))
    assert counts[0] == counts[1] == counts[2] == 1


def test_copy_count_does_not_grow_with_the_ratio_of_block_sizes():
    # One source row per tile gathered into blocks of 64 rows: 64 positions, one copy.
    src = Layout.blocks((1024, 8), (1, 8), 0, (1, 0))
    dst = Layout.blocks((1024, 8), (64, 8), 0, (1, 0))
    assert len(plan_transfers(src, dst)) == 1
    _check((256, 8), Layout.blocks((256, 8), (1, 8), 0, (1, 0)), Layout.blocks((256, 8), (64, 8), 0, (1, 0)), max_copies=1)
