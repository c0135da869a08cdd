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

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from mlir import ir

from ipu_mlir.dialects import ipu
from ipu_mlir.dialects.attrs import BlockMapping, MalformedAttribute, PartitionAttr, TileGrid, decode_mapping
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
        """The partition recorded on `op`, checked against its loops (errors name the op)."""
        try:
            found = PartitionAttr.decode(op.attributes)
            if found is None:
                raise MalformedAttribute("has no 'ipu.partition' and 'ipu.tiles'; run ipu-plan first")
            found.check_loops(tuple(space.extents))
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


def shared_loop(space: Space, blocks: tuple[int, ...]) -> int | None:
    """The result loop whose blocks the tiles of a cut reduction share out: the one with the
    largest blocks, so that the shares are whole rows where possible."""
    if not space.result:
        return None
    return max(space.result, key=lambda d: (blocks[d], -space.result.index(d)))


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
    shared = shared_loop(space, partition.blocks)
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
