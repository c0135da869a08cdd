"""Where the pieces of a tensor live: per-dimension parts on a tile grid.

A `Layout` cuts each dimension of a tensor into parts (half-open intervals) and puts the box
made of one part per dimension on tile `first + sum(j_d * stride_d)`. Each tile holds its box
row-major at the start of a buffer sized for the largest box (docs/contracts.md, L3), so a
tile's local offset of an element follows from the extents of *its* box.

Two kinds are used:

- a **block layout** (`Layout.blocks`): the parts of each dimension are disjoint and cover
  it; it is the `block` tile mapping of L2 and how every computed tensor is stored;
- an **operand layout** (`Layout.operand`): what a compute op's parts read. Parts may overlap
  (convolution halos), and `replicate` adds grid dimensions over which the same boxes are
  needed on several tiles (the `n` parts of a matmul all read the same piece of `lhs`).

Everything here is per dimension, so sizes scale with the parts per dimension, never with
their product (the number of tiles).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np

from ipu_mlir.dialects.attrs import BlockMapping, LinearMapping, TileGrid


@dataclass(frozen=True)
class Parts:
    """One dimension: the interval of each part, and the tile-id step between parts."""

    intervals: tuple[tuple[int, int], ...]
    stride: int

    @staticmethod
    @functools.lru_cache(maxsize=4096)  # immutable, asked 75,517 times compiling ResNet-50's training step
    def blocks(size: int, block: int, stride: int) -> Parts:
        return Parts(tuple((lo, min(lo + block, size)) for lo in range(0, size, block)), stride)

    @property
    def count(self) -> int:
        return len(self.intervals)

    @property
    def max_extent(self) -> int:
        return max(hi - lo for lo, hi in self.intervals)

    def is_block_split(self, size: int) -> bool:
        """Disjoint equal parts (the last may be smaller) covering [0, size)."""
        first = self.intervals[0][1] - self.intervals[0][0]
        if first <= 0:  # a part reading nothing (a window over padding only) is not a block
            return False
        return self.intervals == Parts.blocks(size, first, self.stride).intervals


@dataclass(frozen=True)
class Layout:
    shape: tuple[int, ...]
    first_tile: int
    dims: tuple[Parts, ...]
    replicate: tuple[tuple[int, int], ...] = ()  # (count, tile stride) per extra grid dimension

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Layout) and self._placement() == other._placement()

    def __hash__(self) -> int:
        return hash(self._placement())

    def _placement(self) -> tuple:
        """What decides where each element lives: the tile stride of a dimension in one part
        moves no element, so two layouts differing only there are the same (a reshape's view
        of a layout and back need not restore such strides)."""
        dims = tuple((d.intervals, d.stride if d.count > 1 else 0) for d in self.dims)
        return self.shape, self.first_tile, dims, self.replicate

    @staticmethod
    def blocks(shape: tuple[int, ...], block: tuple[int, ...], first_tile: int, strides: tuple[int, ...]) -> Layout:
        return Layout(tuple(shape), first_tile, tuple(Parts.blocks(s, b, st) for s, b, st in zip(shape, block, strides)))

    @staticmethod
    def from_mapping(shape: tuple[int, ...], mapping: BlockMapping | LinearMapping) -> Layout:
        grid = mapping.tiles
        if not shape:  # a scalar: one element on one tile, a linear mapping (blocks need a rank)
            return Layout((), grid.first, ())
        return Layout.blocks(shape, mapping.block, grid.first, tuple(grid.strides))

    @property
    def buffer_shape(self) -> tuple[int, ...]:
        return tuple(d.max_extent for d in self.dims)

    @property
    def is_block(self) -> bool:
        return not self.replicate and all(d.is_block_split(s) for d, s in zip(self.dims, self.shape))

    def mapping(self) -> BlockMapping | LinearMapping:
        assert self.is_block
        if not self.shape:
            return LinearMapping(1, TileGrid(self.first_tile, (1,), (1,)))
        return BlockMapping(
            tuple(d.intervals[0][1] - d.intervals[0][0] for d in self.dims),
            TileGrid(self.first_tile, tuple(d.count for d in self.dims), tuple(d.stride for d in self.dims)),
        )

    def grid(self) -> TileGrid:
        """Every tile of the layout (parts, then replicas), row-major."""
        counts = tuple(d.count for d in self.dims) + tuple(c for c, _ in self.replicate)
        strides = tuple(d.stride for d in self.dims) + tuple(s for _, s in self.replicate)
        return TileGrid(self.first_tile, counts or (1,), strides or (0,))

    @property
    def num_tiles(self) -> int:
        return math.prod(d.count for d in self.dims) * math.prod(c for c, _ in self.replicate)

    def classes(self, signatures: list[list] | None = None) -> list[tuple[TileGrid, tuple[int, ...]]]:
        """Tiles grouped into grids of parts that look alike: [(grid, first part index per dim)].

        Parts along a dimension look alike when their `signatures` (default: their extents)
        are equal; equal neighbours form a run, and a class is one run per dimension. So there
        are few classes (the edge parts) whatever the number of tiles."""
        signatures = signatures or [[hi - lo for lo, hi in d.intervals] for d in self.dims]
        per_dim = [_runs(sig) for sig in signatures]
        result = []
        for combo in product(per_dim):
            first = self.first_tile + sum(j0 * d.stride for (j0, _), d in zip(combo, self.dims))
            counts = [n for _, n in combo] + [c for c, _ in self.replicate]
            strides = [d.stride for d in self.dims] + [s for _, s in self.replicate]
            result.append((TileGrid(first, tuple(counts) or (1,), tuple(strides) or (0,)), tuple(j0 for j0, _ in combo)))
        return result


def least_loaded_replica(layout: Layout, load: np.ndarray) -> Layout:
    """One copy of `layout`'s boxes, a block layout: the replica (a choice of index along each
    `replicate` grid dimension) whose tiles hold the fewest bytes in `load` (per tile), the first
    on ties. A weight stored there is as far from its reader's tiles as in any other replica (each
    other replica gets it by exchange), and the layers of a deep model, cut alike, take turns:
    as Poplar's `mapTensorLinearly` starts each tensor at another tile offset, so the weights of
    12 BERT layers do not all sit on the first replica's half of the tiles."""
    block = Layout(layout.shape, layout.first_tile, layout.dims)
    if not layout.replicate:
        return block
    counts = tuple(c for c, _ in layout.replicate)
    heaviest = load[layout.grid().tiles()].reshape(-1, math.prod(counts)).max(axis=0)  # replicas innermost
    chosen = np.unravel_index(int(np.argmin(heaviest)), counts)
    first = layout.first_tile + sum(int(r) * s for r, (_, s) in zip(chosen, layout.replicate))
    return Layout(layout.shape, first, layout.dims)


def _runs(signature: list) -> list[tuple[int, int]]:
    """(first part, count) of each run of equal neighbouring signatures."""
    runs: list[tuple[int, int]] = []
    start = 0
    for j in range(1, len(signature) + 1):
        if j == len(signature) or signature[j] != signature[start]:
            runs.append((start, j - start))
            start = j
    return runs


def product(lists):
    """Every choice of one element per list (itertools.product, yielding tuples lazily)."""
    if not lists:
        yield ()
        return
    for head in lists[0]:
        for tail in product(lists[1:]):
            yield (head,) + tail


def balanced_block(size: int, parts: int, grain: int = 1) -> int:
    """The block size that cuts `size` into at most `parts` parts, a multiple of `grain`."""
    block = -(-size // max(1, parts))
    return min(size, -(-block // grain) * grain) if size else 1
