"""The L2 layout algebra: from an op's partition to the layouts of its operands and result.

At L2 a compute op carries a partition (`ipu.partition`, `ipu.tiles`: `dialects/attrs.py`
`PartitionAttr`) and every tensor a block mapping (`ipu.mapping`). The planner chooses them;
the scheduler reads them back; both derive the same layouts from them here:

    partition = Partition.of(op, space)                  # checked against the op's loops
    operand_layout(space, partition, space.operands[0])  # the pieces the parts read
    result_layout(space, partition)                      # where the result lives
    mapping_of(value)                                    # a tensor's recorded block layout

`space` is the op's iteration space (loop extents, which loops each operand dimension reads,
the summed loops: `space_of` of the op registry). Reshapes map layouts across
`tensor.collapse_shape` / `tensor.expand_shape` (`collapse_layout`, `expand_layout`).
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from mlir import ir

from ipu_mlir.dialects import ipu
from ipu_mlir.dialects.attrs import BlockMapping, MalformedAttribute, PartitionAttr, TileGrid, decode_mapping
from ipu_mlir.dialects.ops import space_of
from ipu_mlir.dialects.ops.generic import box_elements
from ipu_mlir.dialects.ops.space import Access
from ipu_mlir.target.diagnostics import op_error

from .layout import Layout, Parts, balanced_block

if TYPE_CHECKING:
    from ipu_mlir.dialects.ops.space import Space


@dataclass(frozen=True)
class Partition:
    """Block size of each loop and the tile grid of the parts (one grid dim per loop)."""

    blocks: tuple[int, ...]
    first: int
    strides: tuple[int, ...]

    def parts(self, space: Space) -> tuple[Parts, ...]:
        return tuple(Parts.blocks(e, b, s) for e, b, s in zip(space.extents, self.blocks, self.strides))

    def grid(self, space: Space) -> TileGrid:
        if not space.extents:  # an op on scalars runs on one tile
            return TileGrid(self.first, (1,), (0,))
        return TileGrid(self.first, tuple(-(-e // b) for e, b in zip(space.extents, self.blocks)), self.strides)

    def attr(self, space: Space) -> PartitionAttr:
        """The `ipu.partition` / `ipu.tiles` attributes recording it on the op."""
        return PartitionAttr(self.blocks, self.grid(space))

    @staticmethod
    def of(op: ir.OpView, space: Space) -> Partition:
        """The partition recorded on `op`, checked against its loops and admitted by its space
        (`Space.admits`: a loop it keeps whole, a window's, is never cut, so a part's piece of
        an operand follows from the intervals of the loops its accesses name; errors name the
        op)."""
        try:
            found = PartitionAttr.decode(op.attributes)
            if found is None:
                raise MalformedAttribute("has no 'ipu.partition' and 'ipu.tiles'; run ipu-plan first")
            found.check_loops(tuple(space.extents))
            refusal = space.refusal(found.blocks)
            if refusal is not None:
                raise MalformedAttribute(f"has an 'ipu.partition' that {refusal}; replan with ipu-plan")
        except MalformedAttribute as error:
            raise op_error(op, str(error)) from None
        grid = found.tiles
        return Partition(found.blocks, grid.first, grid.strides[: len(found.blocks)])


def mapping_of(value: ir.Value) -> Layout | None:
    """The block layout recorded for a tensor value at L2 (None for tensor.empty)."""
    shape = tuple(ir.RankedTensorType(value.type).shape)
    if isinstance(value, ir.BlockArgument):
        function = value.owner.owner
        attrs = function.attributes["arg_attrs"] if "arg_attrs" in function.attributes else None
        entry = ir.DictAttr(ir.ArrayAttr(attrs)[value.arg_number]) if attrs is not None else None
        if entry is None or ipu.MAPPING_ATTR not in entry:
            return None
        return Layout.from_mapping(shape, decode_mapping(entry[ipu.MAPPING_ATTR]))
    owner = value.owner
    if ipu.MAPPING_ATTR not in owner.attributes:
        return None
    return Layout.from_mapping(shape, decode_mapping(owner.attributes[ipu.MAPPING_ATTR]))


def result_mapping(op: ir.OpView) -> Layout:
    """The block layout of `op`'s result, which L2 requires (errors name the op)."""
    if ipu.MAPPING_ATTR not in op.attributes:
        raise op_error(op, f"has no '{ipu.MAPPING_ATTR}' on its result; run ipu-plan first")
    if ir.RankedTensorType(op.results[0].type).rank and not isinstance(decode_mapping(op.attributes[ipu.MAPPING_ATTR]), BlockMapping):
        raise op_error(op, f"expects a block '{ipu.MAPPING_ATTR}' on its result (ipu-plan gives every computed tensor one)")
    return mapping_of(op.results[0])


def shared_loop(space: Space, blocks: tuple[int, ...], partition: Partition | None = None) -> int | None:
    """The result loop whose blocks the tiles of a cut reduction share out: the one with the
    largest blocks, so that the shares are whole rows where possible; given the `partition`,
    among the loops whose shares then sit on the consecutive tiles of its partial results (a
    cut read in place, `lowering/tied_tables.py`, has its grid strides from a table's layout,
    not from `_row_major`, which makes the largest such a loop)."""
    if not space.result:
        return None
    candidates = space.result
    if partition is not None:
        parts = partition.parts(space)
        cut = [d for d in space.reductions if parts[d].count > 1]
        if cut:
            step = math.prod(parts[d].count for d in space.reductions) * min(parts[d].stride for d in cut)
            candidates = [d for d in space.result if parts[d].count == 1 or parts[d].stride == step] or space.result
    return max(candidates, key=lambda d: (blocks[d], -space.result.index(d)))


def operand_layout(space: Space, partition: Partition, accesses) -> Layout:
    """The pieces of an operand the parts of `partition` read, replicated over the loops the
    operand does not depend on."""
    parts = partition.parts(space)
    dims = []
    for a in accesses:
        if a.kind == "const" or a.loop is None:
            dims.append(Parts(((0, a.size),), 0))
        else:
            loop = parts[a.loop]
            dims.append(Parts(tuple((r.lo, r.hi) for r in (a.region(lo, hi) for lo, hi in loop.intervals)), loop.stride))
    used = {a.loop for a in accesses if a.kind != "const"}
    shape = tuple(a.size for a in accesses)
    return Layout(shape, partition.first, tuple(dims), replicas(space, partition, used))


def replicas(space: Space, partition: Partition, used) -> tuple[tuple[int, int], ...]:
    """(count, tile stride) of the loops not in `used` that the partition cuts: the grid
    dimensions over which the same piece is needed on several tiles."""
    parts = partition.parts(space)
    return tuple((parts[d].count, parts[d].stride) for d in range(len(parts)) if d not in used and parts[d].count > 1)


def result_layout(space: Space, partition: Partition) -> Layout:
    """Where the op's result lives: its parallel parts; with a cut summed dimension, one result
    dimension (`shared_loop`) is cut further so each partial-result tile owns a share."""
    parts = partition.parts(space)
    shape = tuple(space.extents[d] for d in space.result)
    dims = [parts[d] for d in space.result]
    reduced = math.prod(parts[d].count for d in space.reductions)
    shared = shared_loop(space, partition.blocks, partition)
    if reduced > 1 and shared is not None:
        k = space.result.index(shared)
        inner_step = min(parts[d].stride for d in space.reductions if parts[d].count > 1)
        if dims[k].count > 1 and dims[k].stride != reduced * inner_step:
            raise AssertionError("partial results must sit on consecutive tiles")
        count = dims[k].count * reduced
        dims[k] = Parts.blocks(shape[k], balanced_block(shape[k], count), inner_step)
    return Layout(shape, partition.first, tuple(dims))


def collapse_layout(expanded: Layout, groups: list[list[int]], collapsed_shape: tuple[int, ...]) -> Layout | None:
    """The collapsed-side layout whose buffers are those of `expanded`, or None if a tile's box
    is not one contiguous run of a group. A group may be cut along any of its dimensions as
    long as a box stays contiguous: one dimension `j` cut into blocks, the dimensions before it
    in single indices (row-major on the tile grid), those after it whole; when the dimensions
    before `j` hold more than one index, `j`'s blocks must divide it (equal collapsed blocks)."""
    dims = []
    for group in groups:
        sizes = [expanded.shape[d] for d in group]
        parts = [expanded.dims[d] for d in group]
        if not all(p.is_block_split(n) for p, n in zip(parts, sizes)):
            return None
        cut = [k for k, p in enumerate(parts) if p.count > 1]
        j = cut[-1] if cut else 0
        block = parts[j].intervals[0][1]
        if any(parts[k].max_extent != 1 for k in range(j)) or (math.prod(sizes[:j]) > 1 and sizes[j] % block):
            return None
        step = parts[j].stride * parts[j].count
        for k in reversed(range(j)):
            if sizes[k] > 1 and parts[k].stride != step:
                return None
            step *= sizes[k]
        inner = math.prod(sizes[j + 1 :])
        dims.append(Parts.blocks(math.prod(sizes), block * inner, parts[j].stride))
    return Layout(tuple(collapsed_shape), expanded.first_tile, tuple(dims))


def expand_layout(collapsed: Layout, groups: list[list[int]], expanded_shape: tuple[int, ...]) -> Layout | None:
    """The expanded-side layout whose buffers are those of `collapsed` (the inverse of
    `collapse_layout`), or None if its blocks are not contiguous runs of a group (a block
    neither a multiple of the inner dimensions' extent nor, with several outer rows, a divisor
    of a row)."""
    dims: list[Parts] = [Parts(((0, n),), 0) for n in expanded_shape]
    for group, parts in zip(groups, collapsed.dims):
        sizes = [expanded_shape[d] for d in group]
        if not parts.is_block_split(math.prod(sizes)):
            return None
        if parts.count == 1:
            continue
        block, inner, j = parts.intervals[0][1], 1, 0
        for k in reversed(range(len(group))):  # the innermost dimension the block does not cover whole
            if block < inner * sizes[k]:
                j = k
                break
            inner *= sizes[k]
        if block % inner or (math.prod(sizes[:j]) > 1 and sizes[j] % (block // inner)):
            return None
        dims[group[j]] = Parts.blocks(sizes[j], block // inner, parts.stride)
        step = parts.stride * dims[group[j]].count
        for k in reversed(range(j)):
            dims[group[k]] = Parts.blocks(sizes[k], 1, step)
            step *= sizes[k]
    return Layout(tuple(expanded_shape), collapsed.first_tile, tuple(dims))


# --- Slices read in place ------------------------------------------------------------------------


@dataclass(frozen=True)
class Read:
    """What a compute op reads from one stored tensor: `value` through `accesses`, for its
    inputs `inputs`. A plain input reads itself; the shifted slices of one tensor that a
    generic reads (a stencil's neighbours, `slice_view`) are one read of that tensor, the union
    of their windows, and input `inputs[i]` is its piece at `offsets[i]` (per dimension)."""

    value: ir.Value
    accesses: tuple
    inputs: tuple[int, ...]
    offsets: tuple[tuple[int, ...], ...] | None = None


def slice_view(value: ir.Value) -> tuple[ir.Value, tuple[int, ...]] | None:
    """(source, offsets) if `value` is a window of `source` that is never stored: a static,
    unit-stride `tensor.extract_slice` keeping its rank whose every use is an input of a
    `linalg.generic` indexing each of its dimensions by a loop (the reader reads the window
    in place from its source's piece: no copy, no buffer of its own)."""
    op = value.owner
    if isinstance(op, ir.Block) or op.operation.name != "tensor.extract_slice" or len(op.operands) != 1:
        return None
    attrs = op.attributes
    offsets, sizes, strides = (tuple(ir.DenseI64ArrayAttr(attrs[f"static_{k}"])) for k in ("offsets", "sizes", "strides"))
    if any(s != 1 for s in strides) or sizes != tuple(ir.RankedTensorType(value.type).shape):
        return None
    for use in value.uses:
        user = use.owner
        if user.operation.name != "linalg.generic" or use.operand_number >= len(user.operands) - 1:
            return None
        amap = ir.AffineMapAttr(ir.ArrayAttr(user.attributes["indexing_maps"])[use.operand_number]).value
        if not all(isinstance(expr, ir.AffineDimExpr) for expr in amap.results):
            return None
    return op.operands[0], offsets


def reads(space: Space) -> list[Read]:
    """The stored tensors `space`'s op reads, in the order of its first input reading each:
    its inputs, but the slices `slice_view` finds, which read their source once (one read per
    source and choice of loops per dimension)."""
    result: list[Read] = []
    groups: dict[tuple, list[tuple[int, tuple[int, ...], tuple]]] = {}
    order: list = []
    for k, (value, accesses) in enumerate(zip(space.op.operands, space.operands)):
        view = slice_view(value) if space.op.operation.name == "linalg.generic" else None
        if view is None:
            order.append(Read(value, accesses, (k,)))
            continue
        source, offsets = view
        key = (source, tuple(a.loop for a in accesses))
        if key not in groups:
            groups[key] = []
            order.append(key)
        groups[key].append((k, offsets, accesses))
    for item in order:
        if isinstance(item, Read):
            result.append(item)
            continue
        source, loops = item
        members = groups[item]
        sizes = ir.RankedTensorType(source.type).shape
        low = [min(offsets[d] for _, offsets, _ in members) for d in range(len(sizes))]
        high = [max(offsets[d] for _, offsets, _ in members) for d in range(len(sizes))]
        accesses = tuple(_shifted(size, loop, lo, hi) for size, loop, lo, hi in zip(sizes, loops, low, high))
        locals_ = tuple(tuple(o - lo for o, lo in zip(offsets, low)) for _, offsets, _ in members)
        result.append(Read(source, accesses, tuple(k for k, _, _ in members), locals_))
    return result


@dataclass(frozen=True)
class Halo(Access):
    """A window of the windows of slices read in place: `loop + low` to `loop + high`."""


def _shifted(size: int, loop: int, low: int, high: int) -> Access:
    """Source dimension `size` read at `loop + low` to `loop + high` (the windows of slices
    offset by `low` .. `high`)."""
    if low == high == 0:
        return Access("dim", size, loop)
    return Halo("window", size, loop, window=high - low + 1, pad_low=-low)


def halo_elements(accesses: tuple, blocks: tuple[int, ...]) -> int:
    """The elements of an operand's piece for the box `blocks` outside the part's own block of
    it: none but for the windows of slices read in place, whose source ipu-plan lays out in the
    parts' blocks (`aligned_source`): their halo comes from the neighbouring parts' tiles."""
    if not any(isinstance(a, Halo) for a in accesses):
        return 0
    own = math.prod(min(blocks[a.loop], a.size) for a in accesses if a.kind != "const" and a.loop is not None)
    return box_elements(accesses, blocks) - own


def read_accesses(space: Space) -> tuple[tuple, ...]:
    """The accesses of each stored tensor `space`'s op reads (`reads`): what its pieces take.
    The planner asks for every cut it prices, with the same Space: the last answer is kept."""
    if space.op.operation.name != "linalg.generic":
        return space.operands
    if _last_read[0] is not space:
        _last_read[:] = [space, tuple(read.accesses for read in reads(space))]
    return _last_read[1]


_last_read: list = [None, ()]  # [space, its read accesses]: holding the Space keeps its id unique


def aligned_source(read: Read, partition: Partition, space: Space, num_tiles: int) -> tuple[Layout, Partition] | None:
    """A block layout of a read's source whose blocks are the partition's in the source's
    coordinates, so each part finds its window there but for the few rows its shifts bring
    from the next parts, and the partition (moved, if that layout needs tiles before its
    first); None if there is none. The source may be larger than the loops (a stencil's grid
    around its interior) and so have more blocks than the loop has parts: then block b goes
    on the tile of part b - s, s the blocks between a window's start and its middle (a stencil
    cut one row per tile reads rows j .. j+2 on part j, and finds row j+1 on its tile), the
    extra blocks on tiles beside the partition's grid when they are free; else the source is
    cut into as many blocks as the loop has parts (the windows then drift by up to one element
    per part from them)."""
    parts = partition.parts(space)
    loops = [parts[a.loop] for a in read.accesses]
    shape = tuple(a.size for a in read.accesses)
    blocks = [loop.intervals[0][1] - loop.intervals[0][0] if loop.count > 1 else a.size for a, loop in zip(read.accesses, loops)]
    cuts = [Parts.blocks(a.size, b, loop.stride) for a, b, loop in zip(read.accesses, blocks, loops)]
    middle = [(-2 * a.pad_low + a.window - 1) // 2 if a.kind == "window" else 0 for a in read.accesses]
    extra = [d for d, (cut, loop) in enumerate(zip(cuts, loops)) if cut.count != loop.count]
    span = int(partition.grid(space).tiles().max()) - partition.first
    # Each dimension with extra blocks shifted (the first choices) or drifting; the first
    # combination whose tiles are free and distinct.
    for shifts in sorted(itertools.product((True, False), repeat=len(extra)), key=lambda c: -sum(c)):
        dims, before = list(cuts), 0
        for d, shift in zip(extra, shifts):
            if shift:
                before += middle[d] // blocks[d] * loops[d].stride
            else:
                dims[d] = Parts.blocks(shape[d], -(-shape[d] // loops[d].count), loops[d].stride)
        if any(dims[d].count != loops[d].count for d, shift in zip(extra, shifts) if not shift):
            continue
        moved = dataclasses.replace(partition, first=max(partition.first, before))
        layout = Layout(shape, moved.first - before, tuple(dims))
        if moved.first + span < num_tiles and _distinct_tiles(layout.grid(), num_tiles):
            return layout, moved
    return None


def _distinct_tiles(grid: TileGrid, num_tiles: int) -> bool:
    """Whether a grid's tiles are within the target and none twice."""
    tiles = grid.tiles()
    return bool(tiles.min() >= 0 and tiles.max() < num_tiles and np.unique(tiles).size == tiles.size)


def halo_storage(carried: ir.Value) -> Layout | None:
    """The layout of the pieces a loop body's one reader of the carried tensor `carried` takes,
    when it is a generic reading it only through windows (`reads`), the body's other use of
    it is the insert of its new value, and the pieces, halos included, hold every element:
    the grid is then stored so (overlapping blocks), read in place each step, and the insert's
    copy of the new interior sends each tile the halo it reads. Else None."""
    readers = set()
    for use in carried.uses:
        user = use.owner
        if user.operation.name == "tensor.insert_slice" and use.operand_number == 1:
            continue
        if user.operation.name != "tensor.extract_slice" or slice_view(user.results[0]) is None:
            return None
        readers |= {inner.owner for inner in user.results[0].uses}
    if len(readers) != 1:
        return None
    (reader,) = readers
    space = space_of(reader)
    mine = [read for read in reads(space) if read.value == carried]
    if len(mine) != 1:
        return None
    layout = operand_layout(space, Partition.of(reader, space), mine[0].accesses)
    covers = all(
        d.intervals[0][0] == 0 and d.intervals[-1][1] == size and all(b[0] <= a[1] for a, b in zip(d.intervals, d.intervals[1:]))
        for d, size in zip(layout.dims, layout.shape)
    )
    return layout if covers and not layout.replicate else None
