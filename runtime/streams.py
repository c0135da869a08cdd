"""Host streams for the simulator: `ipu.host_to_device` and `ipu.device_to_host` as numpy
assignments between the host tensor and tile memory, planned once.

A tile's slice of a stream is its elements in flat order. Under a block mapping that is its
block in row-major order, so each class of alike blocks (the full blocks, and the edge blocks
of each dimension) is one strided view of the host tensor, each dimension split into (block,
offset) with the blocks first, assigned to the grid of its tiles' rows: no index arrays.
Other mappings sort the host tensor by tile, so the slices lie end to end, and tiles with equal
slice lengths next to each other form a run: one 2-D assignment per run, not per tile. Linear
mappings over increasing tiles need no sorting (nor listing their elements); the rest are
sorted by (slice length, tile), so that a run is a class of alike tiles.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np
from mlir import ir

from ipu_mlir.dialects.attrs import BlockMapping, LinearMapping, TileGrid
from ipu_mlir.dialects.ops.arrays import as_items, assign
from ipu_mlir.target import Target
from ipu_mlir.target.element_types import as_strided

from .memory import Buffer, Site, static_tensor
from .regions import Grid, Rows, as_slice, grid_region
from .steps import Assign


@dataclass(frozen=True)
class _Blocks:
    """Blocks of shape `block` on a grid of `sizes` tiles, from element `index` of the host
    tensor on."""

    index: tuple[slice, ...]
    sizes: tuple[int, ...]
    block: tuple[int, ...]
    region: Grid

    def host(self, array: np.ndarray, writeable: bool = False) -> np.ndarray:
        """The blocks' elements of `array` as (*sizes, *block): a view."""
        base = array[self.index]
        shape = tuple(x for n, b in zip(self.sizes, self.block) for x in (n, b))
        strides = tuple(x for stride, b in zip(base.strides, self.block) for x in (stride * b, stride))
        rank = len(self.block)
        return as_strided(base, shape, strides, writeable=writeable).transpose(*range(0, 2 * rank, 2), *range(1, 2 * rank, 2))


class Stream:
    """A host stream's layout: `blocks` for block mappings, else `runs` of the sorted tensor."""

    def __init__(self, buffer: Buffer, op: ir.OpView, tensor: ir.RankedTensorType, value: int, site: Site, target: Target):
        self.buffer, self.value, self.site = buffer, value, site  # value: the host tensor's slot
        # The verifier checked the element type, the mapping, and that each tile's share fits.
        self.shape, _ = static_tensor(tensor, site, "the streamed tensor")
        numel = math.prod(self.shape)
        self.bytes = numel * buffer.element_bytes
        mapping = op.mapping
        self.blocks: list[_Blocks] = []
        self.runs: list[tuple[int, int, Rows]] = []
        self.order = None
        if isinstance(mapping, BlockMapping) and self.shape and not mapping.tiles.has_repeats():
            self._plan_blocks(mapping)
        else:
            self._plan_runs(mapping, numel, target)

    @property
    def tiles(self) -> np.ndarray:
        """The tiles the stream writes or reads."""
        return np.concatenate(
            [piece.region.tiles for piece in self.blocks] + [region.tiles for _, _, region in self.runs] + [np.zeros(0, np.int64)]
        )

    def _plan_blocks(self, mapping: BlockMapping) -> None:
        per_dim = []  # per dimension: (first block, blocks, block size) of the full and the edge blocks
        for dim, block in zip(self.shape, mapping.block):
            full, edge = divmod(dim, block)
            per_dim.append([(0, full, block)] * bool(full) + [(full, 1, edge)] * bool(edge))
        grid = mapping.tiles
        for alike in itertools.product(*per_dim):
            first = grid.first + sum(start * stride for (start, _, _), stride in zip(alike, grid.strides))
            sizes, block = tuple(n for _, n, _ in alike), tuple(size for _, _, size in alike)
            tiles = TileGrid(first, sizes, grid.strides).tiles()
            region = grid_region(self.buffer.rows(tiles, self.site, "streams"), tiles, sizes, block, (True,) * len(sizes))
            index = tuple(slice(start * b, start * b + n * size) for (start, n, size), b in zip(alike, mapping.block))
            self.blocks.append(_Blocks(index, sizes, block, region))

    def _plan_runs(self, mapping, numel: int, target: Target) -> None:
        if isinstance(mapping, LinearMapping) and np.all(np.diff(mapping.tiles.tiles()) > 0):
            tile_of, counts = None, _linear_counts(mapping, numel, target.num_tiles)  # without listing the elements
        else:
            tile_of = mapping.tile_of_elements(self.shape)
            counts = np.bincount(tile_of, minlength=target.num_tiles)
        tiles = np.flatnonzero(counts)
        groups = np.split(tiles, np.flatnonzero(np.diff(counts[tiles])) + 1) if tiles.size else []
        classes = np.unique(counts[tiles])
        if tile_of is not None and (np.any(tile_of[1:] < tile_of[:-1]) or len(groups) > classes.size):
            order = np.argsort(counts[tile_of] * target.num_tiles + tile_of, kind="stable")
            self.order = order.astype(np.int32 if numel < 2**31 else np.int64)
            groups = [tiles[counts[tiles] == count] for count in classes]
        position = 0
        for run_tiles in groups:
            count = int(counts[run_tiles[0]])
            region = Rows(as_slice(self.buffer.rows(run_tiles, self.site, "streams")), run_tiles, 0, count)
            self.runs.append((position, position + count * run_tiles.size, region))
            position += count * run_tiles.size


def _linear_counts(mapping: LinearMapping, numel: int, num_tiles: int) -> np.ndarray:
    """Elements per tile of a linear mapping: `ceil(grains / tiles)` grains each, in grid order."""
    grains = -(-numel // mapping.grain)
    per_tile = max(1, -(-grains // mapping.tiles.count)) * mapping.grain
    counts = np.zeros(num_tiles, np.int64)
    counts[mapping.tiles.tiles()] = np.clip(numel - np.arange(mapping.tiles.count) * per_tile, 0, per_tile)
    return counts


class HostToDevice(Stream):
    fixed: list | None = None  # per block: the bound buffer's view, written by `Assign` (`prepare`)

    def prepare(self) -> None:
        """The tile memory's side of each block made once, for a buffer bound to an array
        (memory.bind_arrays): a run makes only the host side's view (a 10-layer MLP streams 21
        inputs a run, each a view of each side and their items: 0.3 of its 0.8 ms)."""
        bound = self.buffer.resident and self.buffer.data is not None
        if bound and self.blocks and not self.runs and all(piece.region.strides is not None for piece in self.blocks):
            self.fixed = [Assign(piece.region.view(self.buffer.data, True)) for piece in self.blocks]

    def run(self, values: list, check: bool) -> None:
        host = values[self.value]
        if self.fixed is not None:
            for piece, write in zip(self.blocks, self.fixed):
                write(piece.host(host))
            return
        for piece in self.blocks:
            self.buffer.write(piece.region, piece.host(host), check)
        if self.runs:
            flat = host.reshape(-1)
            ordered = flat if self.order is None else flat[self.order]
            for start, end, region in self.runs:
                self.buffer.write(region, ordered[start:end].reshape(-1, region.count), check)


class DeviceToHost(Stream):
    # per block: the bound buffer's items, and the shape, type, offset and strides of the result's (`prepare`)
    fixed: list | None = None

    def prepare(self) -> None:
        """Each block's view of a buffer bound to an array (memory.bind_arrays) made once, as
        runs of elements contiguous on both sides (`as_items`), and where those runs lie in a
        result array: a run writes a fresh result through one array construction per block
        (GPT-2's 128 x 1,000 logits in runs of 14 floats: 0.3 ms a run through views and items made anew)."""
        if not (self.buffer.resident and self.buffer.data is not None and self.blocks and not self.runs):
            return
        if any(piece.region.strides is None for piece in self.blocks):
            return
        template = np.empty(self.shape, self.buffer.dtype)
        self.fixed = []
        for piece in self.blocks:
            items, source = as_items(piece.host(template, writeable=True), piece.region.view(self.buffer.data, False))
            offset = items.__array_interface__["data"][0] - template.__array_interface__["data"][0]
            self.fixed.append((source, (items.shape, items.dtype, offset, items.strides)))

    def run(self, values: list, check: bool) -> None:
        result = np.empty(self.shape, self.buffer.dtype)
        if self.fixed is not None:
            for source, (shape, item, offset, strides) in self.fixed:
                np.ndarray(shape, item, result, offset, strides)[...] = source
            values[self.value] = result
            return
        for piece in self.blocks:
            assign(piece.host(result, writeable=True), self.buffer.read(piece.region, self.site, check))
        if self.runs:
            ordered = result.reshape(-1) if self.order is None else np.empty(result.size, result.dtype)
            for start, end, region in self.runs:
                assign(ordered[start:end].reshape(-1, region.count), self.buffer.read(region, self.site, check))
            if self.order is not None:
                result.reshape(-1)[self.order] = ordered
        values[self.value] = result
