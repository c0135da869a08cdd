"""The verifier's cost scales with ops, not with the transfers and elements they stand for: a
copy's grid of millions of transfers and a stream of millions of elements are checked from
their grids' strides (listing them fails these tests), and the stride test for disjoint writes
is exact where it answers (checked against listing every write)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from mlir import ir

from ipu_mlir.dialects import attrs, make_context, verifier, verify_program
from ipu_mlir.dialects.attrs import TileGrid


@pytest.fixture(autouse=True)
def context():
    with make_context() as ctx:
        yield ctx


@pytest.fixture
def no_listing(monkeypatch):
    """Listing more than 100000 tiles or elements fails the test."""
    tiles = TileGrid.tiles

    def listed(grid):
        assert grid.count <= 100_000, f"listed the {grid.count} entries of {grid}"
        return tiles(grid)

    def elements(mapping, shape):
        raise AssertionError(f"listed the elements of a {shape} tensor")

    monkeypatch.setattr(TileGrid, "tiles", listed)
    monkeypatch.setattr(attrs.LinearMapping, "tile_of_elements", elements)


def errors(text: str) -> list[str]:
    module = ir.Module.parse(text)
    return [str(error) for error in verifier.verify(module.operation)]


# 1472 x 16 x 256 = 6029312 transfers of one element: every tile gathers elements 0..255 of
# tiles 0..15 into its 4096 elements.
_LARGE = """
module attributes {{ipu.target = "gc200"}} {{
  "ipu.buffer"() {{sym_name = "x", type = memref<4096xf32>, tiles = array<i64: 0, 1472, 1>}} : () -> ()
  "ipu.buffer"() {{sym_name = "y", type = memref<4096xf32>, tiles = array<i64: 0, 1472, 1>}} : () -> ()
  func.func @f(%a: tensor<1472x4096xf32>) {{
    "ipu.host_to_device"(%a) {{buffer = @x, mapping = {{kind = "linear", grain = 1 : i64, tiles = array<i64: 0, 1472, 1>}}}}
        : (tensor<1472x4096xf32>) -> ()
    "ipu.copy"() {{source = @x, dest = @y, size = 1 : i64,
        src_tiles = array<i64: 0, 1472, 0, 16, 1, 256, 0>, dst_tiles = array<i64: 0, 1472, 1, 16, 0, 256, 0>,
        src_offset = array<i64: 0, 0, 0, 1>, dst_offset = array<i64: {dst_offset}>}} : () -> ()
    return
  }}
}}
"""


def test_a_copy_of_millions_of_transfers_is_checked_from_its_strides(no_listing):
    assert errors(_LARGE.format(dst_offset="0, 0, 256, 1")) == []


def test_a_large_copy_writing_twice_is_still_found():
    # The offset strides swapped: every tile writes each of 256 elements 16 times.
    (message,) = errors(_LARGE.format(dst_offset="0, 0, 1, 0"))
    assert message.endswith("'ipu.copy' op writes elements [0, 1) of @y on tile 0 twice")


@pytest.mark.parametrize("sizes, reach", [((2, 2), 3), ((3, 2), 3), ((2, 3, 2), 2)])
def test_the_stride_test_for_disjoint_writes_never_accepts_an_overlap(sizes, reach):
    answered = 0
    for strides in itertools.product(range(-reach, reach + 1), repeat=2 * len(sizes)):
        tiles = TileGrid(3, sizes, strides[: len(sizes)])
        offsets = TileGrid(8, sizes, strides[len(sizes) :])
        for size in (1, 2):
            if verify_program._nested(tiles, offsets, size, capacity=20):
                answered += 1
                flat = (tiles.tiles() * 20)[:, None] + offsets.tiles()[:, None] + np.arange(size)
                assert len(np.unique(flat)) == flat.size, (tiles, offsets, size)
    assert answered > 100  # it answers for most grids, not only trivial ones


def test_interleaved_disjoint_writes_are_accepted_and_interleaved_overlaps_reported():
    # Offsets 0, 2, 3, 5 (strides 2 and 3): disjoint for one element, overlapping for two.
    text = """
    module attributes {{ipu.target = "tiny"}} {{
      "ipu.buffer"() {{sym_name = "x", type = memref<16xf32>, tiles = array<i64: 0, 4, 1>}} : () -> ()
      "ipu.buffer"() {{sym_name = "y", type = memref<16xf32>, tiles = array<i64: 0, 1, 1>}} : () -> ()
      func.func @f() {{
        "ipu.copy"() {{source = @x, dest = @y, size = {size} : i64, src_tiles = array<i64: 0, 2, 1, 2, 2>,
            dst_tiles = array<i64: 0, 2, 0, 2, 0>, src_offset = array<i64: 0, 0, 0>, dst_offset = array<i64: 0, 2, 3>}} : () -> ()
        return
      }}
    }}
    """
    assert errors(text.format(size=1)) == []
    (message,) = errors(text.format(size=2))
    assert message.endswith("'ipu.copy' op writes elements [3, 5) of @y on tile 0 twice")


def test_ops_alike_to_one_that_passed_are_still_checked_against_their_own_buffers():
    # The verifier lets an op pass on what an earlier op of the same forms passed; these ops
    # share their attributes with a valid one but not their buffers: each is reported.
    text = """
    module attributes {ipu.target = "tiny"} {
      "ipu.buffer"() {sym_name = "x", type = memref<8xf32>, tiles = array<i64: 0, 4, 1>} : () -> ()
      "ipu.buffer"() {sym_name = "big", type = memref<8xf32>, tiles = array<i64: 0, 4, 1>} : () -> ()
      "ipu.buffer"() {sym_name = "small", type = memref<6xf32>, tiles = array<i64: 0, 4, 1>} : () -> ()
      "ipu.buffer"() {sym_name = "few", type = memref<8xf32>, tiles = array<i64: 0, 2, 1>} : () -> ()
      "ipu.buffer"() {sym_name = "ints", type = memref<8xi32>, tiles = array<i64: 0, 4, 1>} : () -> ()
      func.func @f(%a: tensor<16xf32>) {
        "ipu.host_to_device"(%a) {buffer = @big, mapping = {kind = "linear", grain = 1 : i64, tiles = array<i64: 0, 2, 1>}}
            : (tensor<16xf32>) -> ()
        "ipu.host_to_device"(%a) {buffer = @small, mapping = {kind = "linear", grain = 1 : i64, tiles = array<i64: 0, 2, 1>}}
            : (tensor<16xf32>) -> ()
        "ipu.copy"() {source = @x, dest = @big, size = 4 : i64, src_tiles = array<i64: 0, 4, 1>,
            dst_tiles = array<i64: 3, 4, -1>, src_offset = array<i64: 0, 0>, dst_offset = array<i64: 4, 0>} : () -> ()
        "ipu.copy"() {source = @x, dest = @small, size = 4 : i64, src_tiles = array<i64: 0, 4, 1>,
            dst_tiles = array<i64: 3, 4, -1>, src_offset = array<i64: 0, 0>, dst_offset = array<i64: 4, 0>} : () -> ()
        "ipu.copy"() {source = @x, dest = @few, size = 4 : i64, src_tiles = array<i64: 0, 4, 1>,
            dst_tiles = array<i64: 3, 4, -1>, src_offset = array<i64: 0, 0>, dst_offset = array<i64: 4, 0>} : () -> ()
        "ipu.copy"() {source = @x, dest = @ints, size = 4 : i64, src_tiles = array<i64: 0, 4, 1>,
            dst_tiles = array<i64: 3, 4, -1>, src_offset = array<i64: 0, 0>, dst_offset = array<i64: 4, 0>} : () -> ()
        "ipu.copy"() {source = @x, dest = @small, size = 4 : i64, src_tiles = array<i64: 0, 4, 1>,
            dst_tiles = array<i64: 3, 4, -1>, src_offset = array<i64: 0, 0>, dst_offset = array<i64: 4, 0>} : () -> ()
        return
      }
    }
    """
    found = [message.split(" op ", 1)[1] for message in errors(text)]
    assert found == [
        "maps 8 elements to tile 0, but @small holds 6 per tile: the stream overflows it",
        "writes elements [4, 8) of @small on tile 3, which holds 6 per tile: the exchange overflows the tile's copy of it",
        "sends to tile 3, which holds no copy of @few",
        "expects @x and @ints of the same element type, got f32 and i32",
        "writes elements [4, 8) of @small on tile 3, which holds 6 per tile: the exchange overflows the tile's copy of it",
    ]


def test_ops_of_a_nested_module_are_checked_against_its_own_target_and_symbols():
    # Tile 100 is within gc200's 1472 tiles, outside tiny's 16; @x names a buffer in each module.
    text = """
    module attributes {ipu.target = "tiny"} {
      "ipu.buffer"() {sym_name = "x", type = memref<8xf32>, tiles = array<i64: 100, 1, 1>} : () -> ()
      module attributes {ipu.target = "gc200"} {
        "ipu.buffer"() {sym_name = "x", type = memref<8xf32>, tiles = array<i64: 100, 1, 1>} : () -> ()
        "ipu.buffer"() {sym_name = "y", type = memref<8xf32>, tiles = array<i64: 100, 1, 1>} : () -> ()
        func.func @f() {
          "ipu.copy"() {source = @x, dest = @y, size = 8 : i64, src_tiles = array<i64: 100, 1, 0>,
              dst_tiles = array<i64: 100, 1, 0>, src_offset = array<i64: 0, 0>, dst_offset = array<i64: 0, 0>} : () -> ()
          return
        }
      }
    }
    """
    (message,) = errors(text)
    assert ":3:7:" in message and "'tiles': tile grid reaches tiles 100..100, outside the target's 16 tiles (tiny)" in message
