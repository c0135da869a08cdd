"""Tile grids and tile mappings (`ipu_mlir.dialects.attrs`) against the meaning the dialect
definition gives them ("Shared attribute encodings" in dialects/ipu.irdl.mlir).

Expected values come from literal tables worked out by hand or from the small reference
implementations below, written from the documentation with plain loops (never by calling the
code under test)."""

from __future__ import annotations

import itertools
import math
import re
from collections import Counter

import numpy as np
import pytest
from mlir import ir

from ipu_mlir.dialects import make_context
from ipu_mlir.dialects.attrs import (
    BlockMapping,
    IntervalMapping,
    LinearMapping,
    MalformedAttribute,
    TileGrid,
    decode_mapping,
    elements_per_tile,
)


@pytest.fixture(autouse=True)
def context():
    with make_context() as ctx, ir.Location.unknown():
        yield ctx


def attr(text: str) -> ir.Attribute:
    return ir.Attribute.parse(text)


def raises_exactly(message: str):
    return pytest.raises(MalformedAttribute, match=f"^{re.escape(message)}$")


# --- Reference implementations (from the documentation, plain loops) ---------------------------


def ref_grid(first: int, sizes, strides) -> list[int]:
    """`first + i0*s0 + i1*s1 + ...` for `0 <= ik < nk`, row-major over `(i0, i1, ...)`."""
    return [first + sum(i * s for i, s in zip(index, strides)) for index in itertools.product(*map(range, sizes))]


def ref_linear(numel: int, grain: int, grid_tiles: list[int]) -> list[int]:
    """Poplar's mapTensorLinearly: grains of `grain` elements (the last one possibly short); with
    `g` grains and `T` tiles, the tile at grid position `p` gets grains
    `[p * ceil(g / T), (p + 1) * ceil(g / T))`."""
    grains = (numel + grain - 1) // grain
    per_tile = (grains + len(grid_tiles) - 1) // len(grid_tiles)
    tile_of = [None] * numel
    for position, tile in enumerate(grid_tiles):
        for g in range(position * per_tile, min((position + 1) * per_tile, grains)):
            for element in range(g * grain, min((g + 1) * grain, numel)):
                assert tile_of[element] is None
                tile_of[element] = tile
    assert None not in tile_of
    return tile_of


def ref_block(shape, block, first: int, strides) -> list[int]:
    """Element `(i0, i1, ...)` is in block `(i0 // b0, ...)`, on grid tile
    `first + sum_k (ik // bk) * sk`; listed in row-major element order."""
    return [first + sum((i // b) * s for i, b, s in zip(index, block, strides)) for index in itertools.product(*map(range, shape))]


def ref_intervals(numel: int, intervals) -> list[int]:
    tile_of = [None] * numel
    for begin, end, tile in intervals:
        for element in range(begin, end):
            assert tile_of[element] is None
            tile_of[element] = tile
    assert None not in tile_of
    return tile_of


def ref_slices(tile_of: list[int]) -> dict[int, list[int]]:
    """Each tile's slice: its elements in increasing flat index order."""
    slices: dict[int, list[int]] = {}
    for element, tile in enumerate(tile_of):
        slices.setdefault(tile, []).append(element)
    return slices


# --- TileGrid ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "grid, expected",
    [
        (TileGrid.range(0, 16), list(range(16))),
        (TileGrid(3, (5,), (2,)), [3, 5, 7, 9, 11]),
        (TileGrid(7, (1,), (100,)), [7]),
        (TileGrid(1, (2, 3), (8, 2)), [1, 3, 5, 9, 11, 13]),
        (TileGrid(0, (3, 2), (1, 3)), [0, 3, 1, 4, 2, 5]),  # column-major tiles, row-major grid order
        (TileGrid(10, (3,), (-3,)), [10, 7, 4]),
        (TileGrid(20, (2, 3), (-10, 1)), [20, 21, 22, 10, 11, 12]),
        (TileGrid(5, (2, 2), (-1, -2)), [5, 3, 4, 2]),
        (TileGrid(3, (4,), (0,)), [3, 3, 3, 3]),
        (TileGrid(0, (2, 3), (0, 1)), [0, 1, 2, 0, 1, 2]),
        (TileGrid(4, (2, 3), (1, 0)), [4, 4, 4, 5, 5, 5]),
        (TileGrid(1, (2, 2, 2), (4, 2, 1)), [1, 2, 3, 4, 5, 6, 7, 8]),
        (TileGrid(0, (2, 1, 3), (10, 99, -1)), [0, -1, -2, 10, 9, 8]),
    ],
)
def test_grid_tiles(grid, expected):
    tiles = grid.tiles()
    assert tiles.tolist() == expected
    assert tiles.dtype == np.int64 and tiles.ndim == 1
    assert grid.count == len(expected)
    assert grid.min_tile == min(expected)
    assert grid.max_tile == max(expected)
    assert grid.has_repeats() == (len(set(expected)) != len(expected))


def test_grid_range():
    assert TileGrid.range(4, 3) == TileGrid(4, (3,), (1,))
    assert TileGrid.range(4, 3).tiles().tolist() == [4, 5, 6]


@pytest.mark.parametrize(
    "grid, repeats",
    [
        (TileGrid(0, (4, 4), (4, 1)), False),
        (TileGrid(0, (4, 4), (1, 4)), False),
        (TileGrid(0, (4, 4), (1, 1)), True),
        (TileGrid(0, (2, 3), (3, 1)), False),
        (TileGrid(0, (2, 3), (2, 1)), True),  # 0 1 2 / 2 3 4
        (TileGrid(9, (3,), (0,)), True),
        (TileGrid(9, (1,), (0,)), False),  # a zero stride over one tile repeats nothing
        (TileGrid(9, (1, 5), (0, -2)), False),
        (TileGrid(0, (2, 2), (2, -2)), True),  # 0 -2 / 2 0
    ],
)
def test_grid_has_repeats(grid, repeats):
    assert grid.has_repeats() is repeats


def test_grid_tiles_match_reference_on_random_grids():
    rng = np.random.default_rng(20261122)
    for _ in range(300):
        rank = int(rng.integers(1, 5))
        sizes = tuple(int(n) for n in rng.integers(1, 6, size=rank))
        strides = tuple(int(s) for s in rng.integers(-7, 8, size=rank))
        first = int(rng.integers(-20, 50))
        grid = TileGrid(first, sizes, strides)
        expected = ref_grid(first, sizes, strides)
        assert grid.tiles().tolist() == expected, grid
        assert grid.count == len(expected) == math.prod(sizes)
        assert (grid.min_tile, grid.max_tile) == (min(expected), max(expected)), grid
        assert grid.has_repeats() == (len(set(expected)) != len(expected)), grid


@pytest.mark.parametrize(
    "grid, text",
    [
        (TileGrid.range(0, 16), "array<i64: 0, 16, 1>"),
        (TileGrid(3, (4,), (0,)), "array<i64: 3, 4, 0>"),
        (TileGrid(1, (2, 4), (8, 2)), "array<i64: 1, 2, 8, 4, 2>"),
        (TileGrid(20, (2, 3, 1), (-10, 1, 5)), "array<i64: 20, 2, -10, 3, 1, 1, 5>"),
    ],
)
def test_grid_encode_decode(grid, text):
    encoded = grid.encode()
    assert isinstance(encoded, ir.DenseI64ArrayAttr)
    assert str(encoded) == text
    assert list(encoded) == [grid.first] + [v for pair in zip(grid.sizes, grid.strides) for v in pair]
    decoded = TileGrid.decode(encoded)
    assert decoded == grid
    assert type(decoded.sizes) is tuple and type(decoded.strides) is tuple
    # Decoding the text form (as a pass reading parsed IR does) gives the same grid.
    assert TileGrid.decode(attr(text)) == grid
    # A generic Attribute (not the DenseI64ArrayAttr subclass) decodes too.
    generic = ir.Attribute(encoded)
    assert type(generic) is ir.Attribute
    assert TileGrid.decode(generic) == grid


def test_grid_round_trip_random():
    rng = np.random.default_rng(7)
    for _ in range(100):
        rank = int(rng.integers(1, 5))
        grid = TileGrid(
            int(rng.integers(-5, 2000)),
            tuple(int(n) for n in rng.integers(1, 100, size=rank)),
            tuple(int(s) for s in rng.integers(-50, 50, size=rank)),
        )
        assert TileGrid.decode(attr(str(grid.encode()))) == grid


@pytest.mark.parametrize(
    "text, message",
    [
        ("array<i64: 0, 4>", "expected a tile grid array<i64: first, size0, stride0, ...> with an odd number (>= 3) of entries, got 2"),
        (
            "array<i64: 0, 4, 1, 2>",
            "expected a tile grid array<i64: first, size0, stride0, ...> with an odd number (>= 3) of entries, got 4",
        ),
        ("array<i64>", "expected a tile grid array<i64: first, size0, stride0, ...> with an odd number (>= 3) of entries, got 0"),
        ("array<i64: 5>", "expected a tile grid array<i64: first, size0, stride0, ...> with an odd number (>= 3) of entries, got 1"),
        ("array<i64: 0, 0, 1>", "expected positive tile grid sizes, got [0]"),
        ("array<i64: 0, 4, 1, -2, 3>", "expected positive tile grid sizes, got [4, -2]"),
        ("array<i64: 0, 4, 1, 3, 1, 0, 7>", "expected positive tile grid sizes, got [4, 3, 0]"),
        ("array<i32: 0, 4, 1>", "expected a tile grid to be a dense i64 array, got array<i32: 0, 4, 1>"),
        ("[0, 4, 1]", "expected a tile grid to be a dense i64 array, got [0, 4, 1]"),
        ("dense<[0, 4, 1]> : tensor<3xi64>", "expected a tile grid to be a dense i64 array, got dense<[0, 4, 1]> : tensor<3xi64>"),
        ("3 : i64", "expected a tile grid to be a dense i64 array, got 3 : i64"),
        ('"tiles"', 'expected a tile grid to be a dense i64 array, got "tiles"'),
    ],
)
def test_grid_decode_errors(text, message):
    with raises_exactly(message):
        TileGrid.decode(attr(text))


def test_malformed_attribute_is_a_value_error():
    assert issubclass(MalformedAttribute, ValueError)


@pytest.mark.parametrize(
    "grid, num_tiles, message",
    [
        (TileGrid.range(0, 16), 16, None),
        (TileGrid.range(1, 16), 16, "tile grid reaches tiles 1..16, outside the target's 16 tiles"),
        (TileGrid(15, (16,), (-1,)), 16, None),
        (TileGrid(14, (16,), (-1,)), 16, "tile grid reaches tiles -1..14, outside the target's 16 tiles"),
        (TileGrid(0, (4, 4), (4, 1)), 16, None),
        (TileGrid(0, (4, 4), (5, 1)), 16, "tile grid reaches tiles 0..18, outside the target's 16 tiles"),
        (TileGrid(1471, (1472,), (0,)), 1472, None),
    ],
)
def test_grid_check_within(grid, num_tiles, message):
    if message is None:
        grid.check_within(num_tiles)
    else:
        with raises_exactly(message):
            grid.check_within(num_tiles)


# --- LinearMapping -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "shape, grain, grid, expected",
    [
        # 10 elements, grains of 3 (the last one short): 4 grains on 4 tiles, one each.
        ((10,), 3, TileGrid.range(0, 4), [0, 0, 0, 1, 1, 1, 2, 2, 2, 3]),
        # 5 grains of 2 on 3 tiles: ceil(5 / 3) = 2 grains per tile, the last tile gets one.
        ((10,), 2, TileGrid.range(0, 3), [0, 0, 0, 0, 1, 1, 1, 1, 2, 2]),
        # 9 grains on 4 tiles: 3 per tile, so tile 3 gets nothing (not a balanced 3/2/2/2 split).
        ((9,), 1, TileGrid.range(0, 4), [0, 0, 0, 1, 1, 1, 2, 2, 2]),
        # More tiles than grains: the first grains' tiles, in grid order.
        ((5,), 2, TileGrid.range(4, 8), [4, 4, 5, 5, 6]),
        # A grain larger than the tensor: everything on the first tile of the grid.
        ((2, 3), 100, TileGrid(7, (4,), (-1,)), [7, 7, 7, 7, 7, 7]),
        # Row-major flattening of a 2-D tensor, strided grid in grid order.
        ((3, 4), 4, TileGrid(2, (3,), (5,)), [2, 2, 2, 2, 7, 7, 7, 7, 12, 12, 12, 12]),
        # Grid order of a 2-D grid is row-major: positions (0,0) (0,1) (1,0) (1,1) = tiles 0 8 1 9.
        ((8,), 2, TileGrid(0, (2, 2), (1, 8)), [0, 0, 8, 8, 1, 1, 9, 9]),
    ],
)
def test_linear_tile_of_elements_literal(shape, grain, grid, expected):
    mapping = LinearMapping(grain, grid)
    mapping.check_shape(shape)
    result = mapping.tile_of_elements(shape)
    assert result.tolist() == expected
    assert result.shape == (math.prod(shape),)


def test_linear_matches_poplar_on_a_gc200_sized_tensor():
    # 1000 elements, grain 1, 16 tiles: ceil(1000 / 16) = 63 per tile, 1000 - 15 * 63 = 55 on the last.
    mapping = LinearMapping(1, TileGrid.range(0, 16))
    assert elements_per_tile(mapping, (10, 100)) == {**{t: 63 for t in range(15)}, 15: 55}
    # 1472 tiles, 1,000,000 elements in grains of 8: 125,000 grains, 85 per tile; tile 1470 gets
    # 125000 - 1470 * 85 = 50 grains and tile 1471 none.
    mapping = LinearMapping(8, TileGrid.range(0, 1472))
    counts = elements_per_tile(mapping, (1000, 1000))
    assert counts[0] == 85 * 8 and counts[1469] == 85 * 8
    assert counts[1470] == 50 * 8
    assert 1471 not in counts
    assert len(counts) == 1471


@pytest.mark.parametrize(
    "shape, grain, grid",
    [
        ((1024,), 8, TileGrid.range(0, 16)),
        ((1024,), 7, TileGrid.range(0, 16)),
        ((64, 64), 64, TileGrid.range(0, 64)),
        ((64, 64), 100, TileGrid.range(0, 64)),
        ((7,), 1, TileGrid.range(0, 16)),
        ((7,), 3, TileGrid.range(0, 16)),
        ((3, 5, 7), 4, TileGrid(100, (3, 4), (10, -1))),
        ((3, 5, 7), 11, TileGrid(0, (5,), (3,))),
        ((2, 2), 1, TileGrid(0, (2,), (0,))),
        ((1,), 1, TileGrid.range(5, 1)),
        ((0,), 4, TileGrid.range(0, 4)),
        ((4, 0, 3), 1, TileGrid.range(0, 4)),
    ],
)
def test_linear_tile_of_elements_matches_reference(shape, grain, grid):
    numel = math.prod(shape)
    expected = ref_linear(numel, grain, ref_grid(grid.first, grid.sizes, grid.strides))
    assert LinearMapping(grain, grid).tile_of_elements(shape).tolist() == expected


def test_linear_check_shape_rejects_repeated_tiles():
    # A tile's slice of a linear mapping is one contiguous range: the grid lists each tile once.
    with raises_exactly("expected distinct tiles in a linear mapping, but the grid [3, 3, 0] repeats tiles"):
        LinearMapping(1, TileGrid(3, (3,), (0,))).check_shape((6,))


@pytest.mark.parametrize("grain", [0, -1, -64])
def test_linear_check_shape_rejects_non_positive_grain(grain):
    with raises_exactly(f"expected a positive grain, got {grain}"):
        LinearMapping(grain, TileGrid.range(0, 4)).check_shape((16,))


def test_linear_encode():
    mapping = LinearMapping(8, TileGrid.range(0, 16))
    assert str(mapping.encode()) == '{grain = 8 : i64, kind = "linear", tiles = array<i64: 0, 16, 1>}'
    assert mapping.all_tiles() == TileGrid.range(0, 16)


# --- BlockMapping ------------------------------------------------------------------------------


def test_block_2d_partial_edge_blocks_literal():
    # 3x5 in 2x2 blocks: 2x3 blocks, the last row and column of blocks partial.
    mapping = BlockMapping((2, 2), TileGrid(0, (2, 3), (3, 1)))
    mapping.check_shape((3, 5))
    assert mapping.tile_of_elements((3, 5)).reshape(3, 5).tolist() == [
        [0, 0, 1, 1, 2],
        [0, 0, 1, 1, 2],
        [3, 3, 4, 4, 5],
    ]
    assert elements_per_tile(mapping, (3, 5)) == {0: 4, 1: 4, 2: 2, 3: 2, 4: 2, 5: 1}


def test_block_2d_strided_grid_literal():
    # Block (j0, j1) on tile 10 - 5 * j0 + 2 * j1.
    mapping = BlockMapping((1, 2), TileGrid(10, (2, 3), (-5, 2)))
    mapping.check_shape((2, 6))
    assert mapping.tile_of_elements((2, 6)).reshape(2, 6).tolist() == [
        [10, 10, 12, 12, 14, 14],
        [5, 5, 7, 7, 9, 9],
    ]


def test_block_3d_literal():
    # 2x3x2 in blocks 1x2x2: blocks (2, 2, 1); grid tile first + 4*j0 + 1*j1 + 0*j2.
    mapping = BlockMapping((1, 2, 2), TileGrid(3, (2, 2, 1), (4, 1, 0)))
    mapping.check_shape((2, 3, 2))
    assert mapping.tile_of_elements((2, 3, 2)).reshape(2, 3, 2).tolist() == [
        [[3, 3], [3, 3], [4, 4]],
        [[7, 7], [7, 7], [8, 8]],
    ]


@pytest.mark.parametrize(
    "shape, block, first, strides",
    [
        ((64, 64), (16, 64), 0, (1, 0)),
        ((64, 64), (64, 16), 4, (0, 1)),
        ((5, 7), (2, 3), 0, (3, 1)),
        ((5, 7), (5, 7), 9, (0, 0)),
        ((5, 7), (1, 1), 0, (7, 1)),
        ((5, 7), (4, 6), 100, (-50, -1)),
        ((3, 4, 5), (2, 3, 2), 0, (6, 3, 1)),
        ((3, 4, 5), (2, 3, 2), 1, (1, 2, 4)),
        ((3, 4, 5), (3, 1, 4), 50, (-20, 5, -1)),
        ((9,), (4,), 2, (3,)),
        ((2, 3, 4, 5), (1, 2, 3, 4), 0, (8, 4, 2, 1)),
    ],
)
def test_block_tile_of_elements_matches_reference(shape, block, first, strides):
    sizes = tuple(-(-d // b) for d, b in zip(shape, block))
    mapping = BlockMapping(block, TileGrid(first, sizes, strides))
    mapping.check_shape(shape)
    assert mapping.tile_of_elements(shape).tolist() == ref_block(shape, block, first, strides)


@pytest.mark.parametrize(
    "block, grid, shape, message",
    [
        (
            (2, 2),
            TileGrid(0, (2, 3), (3, 1)),
            (3, 5, 1),
            "expected block and tile grid of rank 3 for a tensor of shape 3x5x1, got block rank 2 and grid rank 2",
        ),
        (
            (2, 2),
            TileGrid(0, (6,), (1,)),
            (3, 5),
            "expected block and tile grid of rank 2 for a tensor of shape 3x5, got block rank 2 and grid rank 1",
        ),
        (
            (2,),
            TileGrid(0, (2, 3), (3, 1)),
            (3, 5),
            "expected block and tile grid of rank 2 for a tensor of shape 3x5, got block rank 1 and grid rank 2",
        ),
        ((0, 2), TileGrid(0, (2, 3), (3, 1)), (3, 5), "expected positive block sizes, got [0, 2]"),
        ((2, -1), TileGrid(0, (2, 3), (3, 1)), (3, 5), "expected positive block sizes, got [2, -1]"),
        (
            (2, 2),
            TileGrid(0, (2, 2), (2, 1)),
            (3, 5),
            "expected a tile grid of sizes [2, 3] for blocks 2x2 of a tensor of shape 3x5, got [2, 2]",
        ),
        (
            (2, 2),
            TileGrid(0, (3, 2), (2, 1)),
            (3, 5),
            "expected a tile grid of sizes [2, 3] for blocks 2x2 of a tensor of shape 3x5, got [3, 2]",
        ),
        (
            (16, 64),
            TileGrid(0, (4, 2), (1, 0)),
            (64, 64),
            "expected a tile grid of sizes [4, 1] for blocks 16x64 of a tensor of shape 64x64, got [4, 2]",
        ),
    ],
)
def test_block_check_shape_errors(block, grid, shape, message):
    with raises_exactly(message):
        BlockMapping(block, grid).check_shape(shape)


def test_block_encode():
    mapping = BlockMapping((16, 64), TileGrid(0, (4, 1), (1, 0)))
    assert str(mapping.encode()) == '{block = array<i64: 16, 64>, kind = "block", tiles = array<i64: 0, 4, 1, 1, 0>}'
    assert mapping.all_tiles() == TileGrid(0, (4, 1), (1, 0))


# --- IntervalMapping ---------------------------------------------------------------------------


def test_intervals_tile_of_elements_literal():
    mapping = IntervalMapping(((0, 3, 5), (3, 4, 1), (4, 10, 5)))
    mapping.check_shape((2, 5))
    assert mapping.tile_of_elements((2, 5)).tolist() == [5, 5, 5, 1, 5, 5, 5, 5, 5, 5]
    assert elements_per_tile(mapping, (2, 5)) == {1: 1, 5: 9}
    # all_tiles: the range of tiles touched, for bounds checks.
    assert mapping.all_tiles() == TileGrid(1, (5,), (1,))


def test_intervals_encode():
    mapping = IntervalMapping(((0, 4000, 3), (4000, 4096, 7)))
    assert str(mapping.encode()) == '{intervals = array<i64: 0, 4000, 3, 4000, 4096, 7>, kind = "intervals"}'


def test_intervals_of_an_empty_tensor():
    mapping = IntervalMapping(())
    mapping.check_shape((0, 3))
    assert mapping.tile_of_elements((0, 3)).tolist() == []


@pytest.mark.parametrize(
    "intervals, shape, message",
    [
        (
            ((0, 3, 0), (4, 10, 1)),
            (10,),
            "interval [4, 10) leaves a gap before it: intervals must cover the tensor's 10 elements exactly once, in order",
        ),
        (
            ((1, 10, 0),),
            (2, 5),
            "interval [1, 10) leaves a gap before it: intervals must cover the tensor's 10 elements exactly once, in order",
        ),
        (
            ((0, 5, 0), (4, 10, 1)),
            (10,),
            "interval [4, 10) overlaps the previous one: intervals must cover the tensor's 10 elements exactly once, in order",
        ),
        (
            ((0, 10, 0), (0, 10, 1)),
            (10,),
            "interval [0, 10) overlaps the previous one: intervals must cover the tensor's 10 elements exactly once, in order",
        ),
        (
            ((5, 10, 0), (0, 5, 1)),
            (10,),
            "interval [5, 10) leaves a gap before it: intervals must cover the tensor's 10 elements exactly once, in order",
        ),
        (
            ((0, 5, 0), (5, 8, 1)),
            (10,),
            "intervals cover elements [0, 8) of a tensor of 10 elements: they must cover it exactly once",
        ),
        (
            ((0, 12, 0),),
            (10,),
            "intervals cover elements [0, 12) of a tensor of 10 elements: they must cover it exactly once",
        ),
        ((), (4,), "intervals cover elements [0, 0) of a tensor of 4 elements: they must cover it exactly once"),
        (((0, 5, 0), (5, 5, 1), (5, 10, 2)), (10,), "interval [5, 5) is empty"),
        (((0, 0, 0), (0, 10, 1)), (10,), "interval [0, 0) is empty"),
        (((0, 5, 0), (5, 3, 1)), (10,), "interval [5, 3) is empty"),
    ],
)
def test_intervals_check_shape_errors(intervals, shape, message):
    with raises_exactly(message):
        IntervalMapping(intervals).check_shape(shape)


@pytest.mark.parametrize(
    "shape, intervals",
    [
        ((64, 64), ((0, 4000, 3), (4000, 4096, 7))),
        ((10,), ((0, 1, 9), (1, 2, 8), (2, 7, 9), (7, 10, 0))),
        ((2, 3, 4), ((0, 24, 11),)),
    ],
)
def test_intervals_tile_of_elements_matches_reference(shape, intervals):
    expected = ref_intervals(math.prod(shape), intervals)
    assert IntervalMapping(intervals).tile_of_elements(shape).tolist() == expected


# --- decode_mapping ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, expected",
    [
        (
            '{kind = "linear", grain = 8 : i64, tiles = array<i64: 0, 16, 1>}',
            LinearMapping(8, TileGrid(0, (16,), (1,))),
        ),
        (
            '{tiles = array<i64: 4, 1, 0, 4, 1>, block = array<i64: 64, 16>, kind = "block"}',
            BlockMapping((64, 16), TileGrid(4, (1, 4), (0, 1))),
        ),
        (
            '{kind = "intervals", intervals = array<i64: 0, 4000, 3, 4000, 4096, 7>}',
            IntervalMapping(((0, 4000, 3), (4000, 4096, 7))),
        ),
        ('{kind = "intervals", intervals = array<i64>}', IntervalMapping(())),
    ],
)
def test_decode_mapping(text, expected):
    decoded = decode_mapping(attr(text))
    assert decoded == expected
    assert type(decoded) is type(expected)


@pytest.mark.parametrize(
    "mapping",
    [
        LinearMapping(8, TileGrid.range(0, 16)),
        LinearMapping(1, TileGrid(7, (2, 3), (-1, 0))),
        BlockMapping((16, 64), TileGrid(0, (4, 1), (1, 0))),
        BlockMapping((2, 3, 2), TileGrid(1, (2, 2, 3), (1, 2, 4))),
        IntervalMapping(((0, 3, 5), (3, 4, 1), (4, 10, 5))),
    ],
)
def test_mapping_encode_decode_round_trip(mapping):
    assert decode_mapping(mapping.encode()) == mapping
    assert decode_mapping(attr(str(mapping.encode()))) == mapping
    assert decode_mapping(ir.Attribute(mapping.encode())) == mapping  # not the DictAttr subclass


@pytest.mark.parametrize(
    "text, message",
    [
        (
            '{kind = "cyclic", tiles = array<i64: 0, 16, 1>}',
            'unknown tile mapping kind "cyclic": expected "linear", "block" or "intervals"',
        ),
        (
            '{kind = "Linear", grain = 1 : i64, tiles = array<i64: 0, 16, 1>}',
            'unknown tile mapping kind "Linear": expected "linear", "block" or "intervals"',
        ),
        ("{grain = 1 : i64, tiles = array<i64: 0, 16, 1>}", 'expected a tile mapping with a "kind" of "linear", "block" or "intervals"'),
        ("{}", 'expected a tile mapping with a "kind" of "linear", "block" or "intervals"'),
        ("{kind = 3 : i64}", "expected the mapping kind to be a string, got 3 : i64"),
        (
            '{kind = "linear", grain = 1 : i64}',
            "expected a \"linear\" mapping to have exactly the fields ['grain', 'kind', 'tiles'], got ['grain', 'kind']",
        ),
        (
            '{kind = "linear", grain = 1 : i64, tiles = array<i64: 0, 4, 1>, extra = 1 : i64}',
            "expected a \"linear\" mapping to have exactly the fields ['grain', 'kind', 'tiles'], got ['extra', 'grain', 'kind', 'tiles']",
        ),
        (
            '{kind = "block", block = array<i64: 2>, grain = 1 : i64}',
            "expected a \"block\" mapping to have exactly the fields ['block', 'kind', 'tiles'], got ['block', 'grain', 'kind']",
        ),
        (
            '{kind = "intervals", intervals = array<i64: 0, 4, 0>, tiles = array<i64: 0, 4, 1>}',
            "expected a \"intervals\" mapping to have exactly the fields ['intervals', 'kind'], got ['intervals', 'kind', 'tiles']",
        ),
        ('{kind = "intervals"}', "expected a \"intervals\" mapping to have exactly the fields ['intervals', 'kind'], got ['kind']"),
        ('{kind = "linear", grain = "a", tiles = array<i64: 0, 4, 1>}', 'expected the grain to be an i64 integer, got "a"'),
        # Narrower integers would read as signed (255 : i8 is -1): only i64 is accepted.
        ('{kind = "linear", grain = 255 : i8, tiles = array<i64: 0, 4, 1>}', "expected the grain to be an i64 integer, got -1 : i8"),
        ('{kind = "linear", grain = true, tiles = array<i64: 0, 4, 1>}', "expected the grain to be an i64 integer, got true"),
        (
            '{kind = "linear", grain = 1 : i64, tiles = array<i64: 0, 4>}',
            "expected a tile grid array<i64: first, size0, stride0, ...> with an odd number (>= 3) of entries, got 2",
        ),
        ('{kind = "linear", grain = 1 : i64, tiles = [0, 4, 1]}', "expected a tile grid to be a dense i64 array, got [0, 4, 1]"),
        ('{kind = "block", block = [1], tiles = array<i64: 0, 4, 1>}', "expected the block shape to be a dense i64 array, got [1]"),
        ('{kind = "block", block = array<i64: 4>, tiles = array<i64: 0, 0, 1>}', "expected positive tile grid sizes, got [0]"),
        ('{kind = "intervals", intervals = array<i64: 0, 4>}', "expected intervals as (begin, end, tile) triples, got 2 entries"),
        (
            '{kind = "intervals", intervals = array<i32: 0, 4, 1>}',
            "expected the intervals to be a dense i64 array, got array<i32: 0, 4, 1>",
        ),
        ("[1]", "expected a tile mapping dictionary, got [1]"),
        ('"linear"', 'expected a tile mapping dictionary, got "linear"'),
        ("array<i64: 0, 16, 1>", "expected a tile mapping dictionary, got array<i64: 0, 16, 1>"),
    ],
)
def test_decode_mapping_errors(text, message):
    with raises_exactly(message):
        decode_mapping(attr(text))


# --- elements_per_tile -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "mapping, shape, expected",
    [
        (LinearMapping(64, TileGrid.range(0, 16)), (1024,), {t: 64 for t in range(16)}),
        (LinearMapping(3, TileGrid.range(0, 4)), (10,), {0: 3, 1: 3, 2: 3, 3: 1}),
        (LinearMapping(1, TileGrid(3, (4,), (0,))), (2, 5), {3: 10}),
        (BlockMapping((2, 2), TileGrid(0, (2, 3), (3, 1))), (3, 5), {0: 4, 1: 4, 2: 2, 3: 2, 4: 2, 5: 1}),
        (IntervalMapping(((0, 4000, 3), (4000, 4096, 7))), (64, 64), {3: 4000, 7: 96}),
    ],
)
def test_elements_per_tile(mapping, shape, expected):
    counts = elements_per_tile(mapping, shape)
    assert counts == expected
    assert sum(counts.values()) == math.prod(shape)
    assert all(type(k) is int and type(v) is int for k, v in counts.items())


# --- Property: every mapping covers each element exactly once ----------------------------------


def random_shape(rng) -> tuple[int, ...]:
    rank = int(rng.integers(1, 5))
    return tuple(int(d) for d in rng.integers(1, 10, size=rank))


def random_linear(rng, shape):
    numel = math.prod(shape)
    grain = int(rng.integers(1, numel + 4))
    rank = int(rng.integers(1, 3))
    sizes = tuple(int(n) for n in rng.integers(1, 9, size=rank))  # sometimes more tiles than grains
    # A linear mapping's grid lists distinct tiles: non-zero inner stride, outer rows apart.
    inner = int(rng.choice([-3, -1, 1, 2, 5]))
    strides = (inner,) if rank == 1 else (int(rng.choice([-1, 1, 2])) * sizes[1] * abs(inner), inner)
    grid = TileGrid(int(rng.integers(0, 100)), sizes, strides)
    return LinearMapping(grain, grid), ref_linear(numel, grain, ref_grid(grid.first, sizes, strides))


def random_block(rng, shape):
    block = tuple(int(rng.integers(1, d + 2)) for d in shape)  # sometimes larger than the dim
    sizes = tuple(-(-d // b) for d, b in zip(shape, block))
    strides = tuple(int(s) for s in rng.integers(-4, 8, size=len(shape)))
    first = int(rng.integers(0, 100))
    return BlockMapping(block, TileGrid(first, sizes, strides)), ref_block(shape, block, first, strides)


def random_intervals(rng, shape):
    numel = math.prod(shape)
    cuts = sorted(set(int(c) for c in rng.integers(1, numel, size=int(rng.integers(0, 6)))) if numel > 1 else set())
    bounds = [0, *cuts, numel]
    intervals = tuple((b, e, int(rng.integers(0, 16))) for b, e in zip(bounds, bounds[1:]))
    return IntervalMapping(intervals), ref_intervals(numel, intervals)


@pytest.mark.parametrize("make", [random_linear, random_block, random_intervals])
def test_every_mapping_covers_each_element_exactly_once(make):
    rng = np.random.default_rng(1234)
    for _ in range(200):
        shape = random_shape(rng)
        numel = math.prod(shape)
        mapping, expected = make(rng, shape)
        mapping.check_shape(shape)
        tile_of = mapping.tile_of_elements(shape)
        assert tile_of.shape == (numel,), (mapping, shape)
        assert tile_of.tolist() == expected, (mapping, shape)
        # Each tile's slice, as the reference lists it: disjoint, and together every element once.
        slices = ref_slices(tile_of.tolist())
        covered = sorted(e for elements in slices.values() for e in elements)
        assert covered == list(range(numel))
        counts = elements_per_tile(mapping, shape)
        assert counts == {tile: len(elements) for tile, elements in slices.items()}
        assert counts == dict(Counter(expected))
        assert sum(counts.values()) == numel
        # The encoding round-trips and decodes to a mapping with the same placement.
        decoded = decode_mapping(mapping.encode())
        assert decoded == mapping
        assert decoded.tile_of_elements(shape).tolist() == expected


def test_linear_slices_are_consecutive_grains_in_grid_order():
    # Each grid position gets one run of consecutive elements, and the runs follow grid order.
    rng = np.random.default_rng(99)
    for _ in range(200):
        shape = random_shape(rng)
        numel = math.prod(shape)
        grain = int(rng.integers(1, numel + 2))
        count = int(rng.integers(1, 20))
        mapping = LinearMapping(grain, TileGrid(0, (count,), (1,)))  # position == tile
        tile_of = mapping.tile_of_elements(shape)
        assert np.all(np.diff(tile_of) >= 0)  # runs in grid order
        grains = -(-numel // grain)
        per_tile = -(-grains // count)
        for tile, n in elements_per_tile(mapping, shape).items():
            # A whole number of grains, except possibly on the tile holding the last element.
            if tile != tile_of[-1]:
                assert n == per_tile * grain
            assert n <= per_tile * grain


def test_grid_built_from_lists_behaves_like_one_built_from_tuples():
    from_lists = TileGrid(0, [2, 3], [3, 1])
    assert from_lists == TileGrid(0, (2, 3), (3, 1))
    BlockMapping((2, 2), from_lists).check_shape((3, 5))
