"""Tile grids and tile mappings: the `ipu` dialect's attribute encodings, decoded into dataclasses.

Both live in builtin attributes (dense arrays, dictionaries) so that passes can read them; the
dialect definition (`ipu.irdl.mlir`, "Shared attribute encodings") gives their meaning. Decoding
checks well-formedness and raises `MalformedAttribute` with a message the verifier puts on the op;
checks against a tensor shape or a target are separate methods.

    grid = TileGrid.range(0, 16)                      # array<i64: 0, 16, 1>
    mapping = LinearMapping(grain=4, tiles=grid)      # {kind = "linear", grain = 4, tiles = ...}
    mapping.tile_of_elements((8, 8))                  # tile index of every element, row-major
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np
from mlir import ir


class MalformedAttribute(ValueError):
    """A malformed `ipu` attribute; the message says what was expected."""


def _i64_array(attr: ir.Attribute, what: str) -> tuple[int, ...]:
    if not isinstance(attr, ir.DenseI64ArrayAttr):
        try:
            attr = ir.DenseI64ArrayAttr(attr)
        except (ValueError, TypeError):
            raise MalformedAttribute(f"expected {what} to be a dense i64 array, got {attr}") from None
    return tuple(int(v) for v in attr)


def i64_value(attr: ir.Attribute, what: str) -> int:
    """The value of an i64 integer attribute (narrower or boolean ones would read as signed)."""
    if isinstance(attr, ir.IntegerAttr) and ir.IntegerType(attr.type).width == 64:
        return attr.value
    raise MalformedAttribute(f"expected {what} to be an i64 integer, got {attr}")


def _string(attr: ir.Attribute, what: str) -> str:
    try:
        return ir.StringAttr(attr).value
    except (ValueError, TypeError):
        raise MalformedAttribute(f"expected {what} to be a string, got {attr}") from None


@dataclass(frozen=True)
class TileGrid:
    """Tiles `first + sum_k i_k * strides[k]` for `0 <= i_k < sizes[k]`, in row-major order."""

    first: int
    sizes: tuple[int, ...]
    strides: tuple[int, ...]

    def __init__(self, first: int, sizes: tuple[int, ...], strides: tuple[int, ...]) -> None:
        # Equal grids compare equal however they were spelled (lists, numpy integers). The
        # fields are set in one update of __dict__ (frozen: no setattr), not set by a generated
        # __init__ and set again: a BERT-12 load builds about 100,000 grids.
        self.__dict__.update(first=int(first), sizes=tuple(map(int, sizes)), strides=tuple(map(int, strides)))
        if len(self.sizes) != len(self.strides):
            raise MalformedAttribute(f"expected one stride per grid size, got sizes {list(self.sizes)} and strides {list(self.strides)}")

    @staticmethod
    def range(first: int, count: int) -> TileGrid:
        return TileGrid(first, (count,), (1,))

    @staticmethod
    def decode(attr: ir.Attribute) -> TileGrid:
        values = _i64_array(attr, "a tile grid")
        if len(values) < 3 or len(values) % 2 == 0:
            raise MalformedAttribute(
                f"expected a tile grid array<i64: first, size0, stride0, ...> with an odd number (>= 3) of entries, got {len(values)}"
            )
        grid = TileGrid(values[0], values[1::2], values[2::2])
        if any(size <= 0 for size in grid.sizes):
            raise MalformedAttribute(f"expected positive tile grid sizes, got {list(grid.sizes)}")
        return grid

    def encode(self) -> ir.DenseI64ArrayAttr:
        flat = [self.first]
        for size, stride in zip(self.sizes, self.strides):
            flat += [size, stride]
        return ir.DenseI64ArrayAttr.get(flat)

    @property
    def count(self) -> int:
        return math.prod(self.sizes)

    @property
    def min_tile(self) -> int:
        return self.first + sum(min(0, (n - 1) * s) for n, s in zip(self.sizes, self.strides))

    @property
    def max_tile(self) -> int:
        return self.first + sum(max(0, (n - 1) * s) for n, s in zip(self.sizes, self.strides))

    def tiles(self) -> np.ndarray:
        """Every tile of the grid, in grid order (repeats included), read-only: equal grids
        share one array (a simulator lists each op's grids several times while loading)."""
        return _grid_tiles(self.first, self.sizes, self.strides)

    def has_repeats(self) -> bool:
        span = self.max_tile - self.min_tile + 1
        if self.count > span:  # more entries than tiles in reach: some repeat, and listing them could exhaust memory
            return True
        return len(np.unique(self.tiles())) != self.count

    def check_within(self, num_tiles: int) -> None:
        if self.min_tile < 0 or self.max_tile >= num_tiles:
            raise MalformedAttribute(f"tile grid reaches tiles {self.min_tile}..{self.max_tile}, outside the target's {num_tiles} tiles")


@functools.lru_cache(maxsize=4096)
def _grid_tiles(first: int, sizes: tuple[int, ...], strides: tuple[int, ...]) -> np.ndarray:
    tiles = np.full(sizes, first, dtype=np.int64)
    for axis, (size, stride) in enumerate(zip(sizes, strides)):
        shape = [1] * len(sizes)
        shape[axis] = size
        tiles += (np.arange(size, dtype=np.int64) * stride).reshape(shape)
    tiles = tiles.reshape(-1)
    tiles.flags.writeable = False
    return tiles


@dataclass(frozen=True)
class LinearMapping:
    """Grains of `grain` consecutive elements, `ceil(grains / tiles)` grains per tile in order."""

    grain: int
    tiles: TileGrid

    def check_shape(self, shape: tuple[int, ...]) -> None:
        if self.grain <= 0:
            raise MalformedAttribute(f"expected a positive grain, got {self.grain}")
        if self.tiles.has_repeats():
            raise MalformedAttribute(f"expected distinct tiles in a linear mapping, but the grid {list(self.tiles.encode())} repeats tiles")

    def tile_of_elements(self, shape: tuple[int, ...]) -> np.ndarray:
        numel = math.prod(shape)
        grains = -(-numel // self.grain)
        grains_per_tile = max(1, -(-grains // self.tiles.count))
        grain_of_element = np.arange(numel, dtype=np.int64) // self.grain
        return self.tiles.tiles()[grain_of_element // grains_per_tile]

    def all_tiles(self) -> TileGrid:
        return self.tiles

    def encode(self) -> ir.DictAttr:
        return ir.DictAttr.get(
            {
                "kind": ir.StringAttr.get("linear"),
                "grain": ir.IntegerAttr.get(ir.IntegerType.get_signless(64), self.grain),
                "tiles": self.tiles.encode(),
            }
        )


@dataclass(frozen=True)
class BlockMapping:
    """Blocks of shape `block`; the block with index `j` lives on the grid's tile `j`."""

    block: tuple[int, ...]
    tiles: TileGrid

    def __post_init__(self) -> None:
        object.__setattr__(self, "block", tuple(int(b) for b in self.block))

    def check_shape(self, shape: tuple[int, ...]) -> None:
        if len(self.block) != len(shape) or len(self.tiles.sizes) != len(shape):
            raise MalformedAttribute(
                f"expected block and tile grid of rank {len(shape)} for a tensor of shape "
                f"{_shape_str(shape)}, got block rank {len(self.block)} and grid rank "
                f"{len(self.tiles.sizes)}"
            )
        if any(b <= 0 for b in self.block):
            raise MalformedAttribute(f"expected positive block sizes, got {list(self.block)}")
        blocks = tuple(-(-d // b) for d, b in zip(shape, self.block))
        if blocks != self.tiles.sizes:
            raise MalformedAttribute(
                f"expected a tile grid of sizes {list(blocks)} for blocks {_shape_str(self.block)} "
                f"of a tensor of shape {_shape_str(shape)}, got {list(self.tiles.sizes)}"
            )

    def tile_of_elements(self, shape: tuple[int, ...]) -> np.ndarray:
        tile = np.full(shape, self.tiles.first, dtype=np.int64)
        for axis, (dim, block, stride) in enumerate(zip(shape, self.block, self.tiles.strides)):
            index_shape = [1] * len(shape)
            index_shape[axis] = dim
            tile += ((np.arange(dim, dtype=np.int64) // block) * stride).reshape(index_shape)
        return tile.reshape(-1)

    def all_tiles(self) -> TileGrid:
        return self.tiles

    def encode(self) -> ir.DictAttr:
        return ir.DictAttr.get(
            {
                "kind": ir.StringAttr.get("block"),
                "block": ir.DenseI64ArrayAttr.get(list(self.block)),
                "tiles": self.tiles.encode(),
            }
        )


@dataclass(frozen=True)
class IntervalMapping:
    """Explicit `(begin, end, tile)` flat-index intervals covering the tensor exactly once."""

    intervals: tuple[tuple[int, int, int], ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "intervals", tuple(tuple(int(v) for v in interval) for interval in self.intervals))

    def check_shape(self, shape: tuple[int, ...]) -> None:
        numel = math.prod(shape)
        expected_begin = 0
        for begin, end, _ in self.intervals:
            if begin != expected_begin:
                problem = "overlaps the previous one" if begin < expected_begin else "leaves a gap before it"
                raise MalformedAttribute(
                    f"interval [{begin}, {end}) {problem}: intervals must cover the tensor's {numel} elements exactly once, in order"
                )
            if end <= begin:
                raise MalformedAttribute(f"interval [{begin}, {end}) is empty")
            expected_begin = end
        if expected_begin != numel:
            raise MalformedAttribute(
                f"intervals cover elements [0, {expected_begin}) of a tensor of {numel} elements: they must cover it exactly once"
            )

    def tile_of_elements(self, shape: tuple[int, ...]) -> np.ndarray:
        lengths = [end - begin for begin, end, _ in self.intervals]
        return np.repeat(np.array([t for _, _, t in self.intervals], dtype=np.int64), lengths)

    def all_tiles(self) -> TileGrid:
        # The tile range the intervals touch, for bounds checks only.
        tiles = [t for _, _, t in self.intervals] or [0]
        return TileGrid(min(tiles), (max(tiles) - min(tiles) + 1,), (1,))

    def encode(self) -> ir.DictAttr:
        return ir.DictAttr.get(
            {
                "kind": ir.StringAttr.get("intervals"),
                "intervals": ir.DenseI64ArrayAttr.get([v for interval in self.intervals for v in interval]),
            }
        )


TileMapping = LinearMapping | BlockMapping | IntervalMapping

_MAPPING_FIELDS = {
    "linear": {"kind", "grain", "tiles"},
    "block": {"kind", "block", "tiles"},
    "intervals": {"kind", "intervals"},
}


def decode_mapping(attr: ir.Attribute) -> TileMapping:
    """The tile mapping a dictionary attribute describes; `MalformedAttribute` if malformed."""
    if not isinstance(attr, ir.DictAttr):
        try:
            attr = ir.DictAttr(attr)
        except (ValueError, TypeError):
            raise MalformedAttribute(f"expected a tile mapping dictionary, got {attr}") from None
    fields = {named.name: named.attr for named in attr}
    if "kind" not in fields:
        raise MalformedAttribute('expected a tile mapping with a "kind" of "linear", "block" or "intervals"')
    kind = _string(fields["kind"], "the mapping kind")
    if kind not in _MAPPING_FIELDS:
        raise MalformedAttribute(f'unknown tile mapping kind "{kind}": expected "linear", "block" or "intervals"')
    if set(fields) != _MAPPING_FIELDS[kind]:
        raise MalformedAttribute(
            f'expected a "{kind}" mapping to have exactly the fields {sorted(_MAPPING_FIELDS[kind])}, got {sorted(fields)}'
        )
    if kind == "linear":
        return LinearMapping(i64_value(fields["grain"], "the grain"), TileGrid.decode(fields["tiles"]))
    if kind == "block":
        return BlockMapping(_i64_array(fields["block"], "the block shape"), TileGrid.decode(fields["tiles"]))
    flat = _i64_array(fields["intervals"], "the intervals")
    if len(flat) % 3:
        raise MalformedAttribute(f"expected intervals as (begin, end, tile) triples, got {len(flat)} entries")
    return IntervalMapping(tuple(tuple(flat[i : i + 3]) for i in range(0, len(flat), 3)))


def elements_per_tile(mapping: TileMapping, shape: tuple[int, ...]) -> dict[int, int]:
    """How many elements of a tensor of `shape` each tile holds (tiles holding none omitted),
    counted per grain run, block or interval: a weight has millions of elements. The mapping
    must fit `shape` (`check_shape`)."""
    if isinstance(mapping, LinearMapping):
        numel = math.prod(shape)
        grains = -(-numel // mapping.grain)
        per_tile = max(1, -(-grains // mapping.tiles.count)) * mapping.grain
        tiles = mapping.tiles.tiles()
        counts = np.clip(numel - np.arange(tiles.size, dtype=np.int64) * per_tile, 0, per_tile)
    elif isinstance(mapping, BlockMapping):
        counts = np.ones((), dtype=np.int64)
        for dim, block in zip(shape, mapping.block):  # the last block of a dimension may be partial
            extents = np.minimum(block, dim - np.arange(-(-dim // block), dtype=np.int64) * block)
            counts = np.multiply.outer(counts, extents)
        tiles, counts = mapping.tiles.tiles(), counts.reshape(-1)
    else:
        tiles = np.array([t for _, _, t in mapping.intervals], dtype=np.int64)
        counts = np.array([end - begin for begin, end, _ in mapping.intervals], dtype=np.int64)
    distinct, index = np.unique(tiles, return_inverse=True)
    totals = np.zeros(distinct.size, dtype=np.int64)
    np.add.at(totals, index, counts)
    held = totals > 0
    return dict(zip(distinct[held].tolist(), totals[held].tolist()))


def _shape_str(shape: tuple[int, ...]) -> str:
    return "x".join(str(d) for d in shape) if shape else "scalar"


# --- L2: the partition of a compute op -----------------------------------------------------

PARTITION_ATTR = "ipu.partition"
"""The discardable attribute giving the block size of each loop of a planned compute op."""
TILES_ATTR = "ipu.tiles"
"""The discardable attribute giving the tile grid of a planned compute op's parts."""


@dataclass(frozen=True)
class PartitionAttr:
    """`ipu.partition` and `ipu.tiles` of an L2 compute op: loop `d` is cut into blocks of
    `blocks[d]` iterations, and part `(j0, j1, ...)` runs on tile `(j0, j1, ...)` of `tiles`,
    a grid with one dimension per loop (a single tile, `array<i64: t, 1, 0>`, for an op
    without loops)."""

    blocks: tuple[int, ...]
    tiles: TileGrid

    @staticmethod
    def decode(attributes) -> PartitionAttr | None:
        """From an op's attributes; None when it has neither. Checks the encodings and that the
        grid has one dimension per loop, not the loops themselves (a shape's business)."""
        has_partition, has_tiles = PARTITION_ATTR in attributes, TILES_ATTR in attributes
        if not has_partition and not has_tiles:
            return None
        if has_partition != has_tiles:
            present, missing = (PARTITION_ATTR, TILES_ATTR) if has_partition else (TILES_ATTR, PARTITION_ATTR)
            raise MalformedAttribute(f"has '{present}' without '{missing}': a partition needs both")
        blocks = _i64_array(attributes[PARTITION_ATTR], f"'{PARTITION_ATTR}'")
        if any(b <= 0 for b in blocks):
            raise MalformedAttribute(f"expected '{PARTITION_ATTR}' to hold positive block sizes, got {list(blocks)}")
        try:
            grid = TileGrid.decode(attributes[TILES_ATTR])
        except MalformedAttribute as error:
            raise MalformedAttribute(f"'{TILES_ATTR}': {error}") from None
        expected = len(blocks) or 1
        if len(grid.sizes) != expected:
            raise MalformedAttribute(
                f"expected '{TILES_ATTR}' to have one grid dimension per loop of '{PARTITION_ATTR}' ({expected}), got {len(grid.sizes)}"
            )
        return PartitionAttr(blocks, grid)

    def encode(self) -> dict[str, ir.Attribute]:
        return {PARTITION_ATTR: ir.DenseI64ArrayAttr.get(list(self.blocks)), TILES_ATTR: self.tiles.encode()}

    def check_loops(self, extents: tuple[int, ...]) -> None:
        """That the partition cuts loops of these extents: one block per loop, and the grid
        sizes the part counts `ceil(extent / block)`."""
        if len(self.blocks) != len(extents):
            raise MalformedAttribute(
                f"expected '{PARTITION_ATTR}' to have one block size per loop ({len(extents)}: extents {list(extents)}), "
                f"got {len(self.blocks)}"
            )
        counts = tuple(-(-e // b) for e, b in zip(extents, self.blocks)) or (1,)
        if self.tiles.sizes != counts:
            raise MalformedAttribute(
                f"expected '{TILES_ATTR}' grid sizes {list(counts)} (ceil(extent / block) for extents {list(extents)} "
                f"and blocks {list(self.blocks)}), got {list(self.tiles.sizes)}"
            )


# --- Poplar's QUARTER metadata on FP8 products ----------------------------------------------------

QUARTER_ATTR = "ipu.quarter"
# QuarterMetadata::Format's two formats (Poplar, PopXL's float8_143 / float8_152) and the two
# OCP formats PyTorch writes (not Poplar's: what an exported model computes in), by element type.
QUARTER_FORMATS = {"f143": "f8E4M3FNUZ", "f152": "f8E5M2FNUZ", "e4m3fn": "f8E4M3FN", "e5m2": "f8E5M2"}
# PopXL's `matmul_pow2scaled`: "log2_scale ... in the range [-32, 32)" (popxl/ops/matmul.py);
# popart asserts the same range on the device (createAssertLog2ScaleInRangeProg(..., -32, 32)).
LOG2_SCALES = range(-32, 32)


@dataclass(frozen=True)
class QuarterAttr:
    """`ipu.quarter = {format = "f143", log2_scale = -6 : i32}` on an `ipu.matmul` or `ipu.conv`
    of FP8 operands: Poplar's QUARTER metadata, the operands' format and a power-of-two scale.
    The op computes `(lhs @ rhs) * 2^log2_scale`, summed in f32 and rounded once into its f16
    or f32 result, as PopXL's `matmul_pow2scaled` (`conv_pow2scaled`) does."""

    format: str
    log2_scale: int

    @staticmethod
    def decode(attr: ir.Attribute) -> QuarterAttr:
        if not isinstance(attr, ir.DictAttr) or sorted(attr[i].name for i in range(len(attr))) != ["format", "log2_scale"]:
            raise MalformedAttribute(f"expected a dictionary of 'format' and 'log2_scale', got {attr}")
        fmt = _string(attr["format"], "format")
        if fmt not in QUARTER_FORMATS:
            raise MalformedAttribute(f"format '{fmt}' is none of {', '.join(QUARTER_FORMATS)}")
        scale = attr["log2_scale"]
        if not isinstance(scale, ir.IntegerAttr) or ir.IntegerType(scale.type).width != 32:
            raise MalformedAttribute(f"expected log2_scale to be an i32 integer, got {scale}")
        if scale.value not in LOG2_SCALES:
            raise MalformedAttribute(f"log2_scale {scale.value} is outside [{LOG2_SCALES.start}, {LOG2_SCALES.stop})")
        return QuarterAttr(fmt, scale.value)

    def encode(self) -> ir.Attribute:
        return ir.DictAttr.get({
            "format": ir.StringAttr.get(self.format),
            "log2_scale": ir.IntegerAttr.get(ir.IntegerType.get_signless(32), self.log2_scale),
        })  # fmt: skip

    @staticmethod
    def format_of(element_type: ir.Type) -> str | None:
        """The format name of FP8 element type `element_type`, None for any other type."""
        return {v: k for k, v in QUARTER_FORMATS.items()}.get(str(element_type))


# --- Poplar's partialsType on f16 products ---------------------------------------------------------

# `ipu.partials = f16` (or f32) on an `ipu.matmul` or `ipu.conv` of f16 operands: the type the AMP
# keeps its partial sums in (poplin's MatMulOptions / ConvOptions `partialsType`, PopTorch's
# `Precision.setPartialsType`); set by `ipu-partials-type` (lowering/partials_type.py).
PARTIALS_ATTR = "ipu.partials"
PARTIALS_TYPES = ("f16", "f32")


def decode_partials(attr: ir.Attribute) -> str:
    """ "f16" or "f32" from `ipu.partials`' type attribute."""
    if not isinstance(attr, ir.TypeAttr) or str(attr.value) not in PARTIALS_TYPES:
        raise MalformedAttribute(f"expected f16 or f32, got {attr}")
    return str(attr.value)


def encode_partials(partials: str) -> ir.TypeAttr:
    return ir.TypeAttr.get(ir.F16Type.get() if partials == "f16" else ir.F32Type.get())
