"""Tied embedding tables in `ipu-plan`: laid out for their matmuls and read there in place.

A tied table (GPT-2's token embedding, also its output head's weight) is a device variable an
`ipu.gather` reads (the embedding) and `ipu.matmul`s read (the head: `h @ table^T` forward,
`dlogits @ table` backward). Poplar lays a weight out for its matmul (`createMatMulInputRHS`)
and has the matmul read it where it lives; a copy of the table in another layout costs as
much as the table itself (105 KB a tile for GPT-2's 50,257 x 768 f32 on a gc200). Here
(`lay_out_tables`, for `ipu-plan` on one IPU):

- a matmul reading the transposed table, `A @ transpose(table)`, is rewritten
  `transpose(table @ transpose(A))`, which reads the table itself and transposes the smaller
  operand and result instead;
- the table is laid out for its matmuls, not for its first reader (the gather, which
  exchanges only the rows it reads from any layout): in the layout one of their cheapest cuts
  gives it, under which each of them has a cut reading it in place (`in_place_partition`)
  within the planner's budget, the table's own bytes not counted (they are no op's
  temporaries, as Poplar's available memory proportion bounds them);
- each matmul reading it is then so cut.

The table's gradient (the head's weight gradient, a matmul's result in such a cut) and its
optimizer state (laid out by its update, which reads the gradient) share its layout. When no
layout serves every matmul, nothing changes (a small table: GPT-2's reduced configuration).
"""

from __future__ import annotations

from collections.abc import Callable

from mlir import ir

from ipu_mlir.dialects import ipu
from ipu_mlir.dialects.ops import record_of, space_of
from ipu_mlir.dialects.ops import tensor_builders as tb
from ipu_mlir.dialects.ops.gather import Gather
from ipu_mlir.dialects.ops.matmul import Matmul, with_metadata
from ipu_mlir.dialects.ops.space import Space

from .layout import Layout
from .layout_algebra import Partition, operand_layout

IPU_ID = "ipu.ipu_id"  # ipu-shard's attribute (plan.IPU_ID_ATTR; plan imports this module)
Cut = Callable[[Space], Partition | None]  # the cheapest cut of a space, on the chip's first tiles
Fits = Callable[[Space, tuple[int, ...], int], bool]  # whether a cut's pieces but an operand's are within the budget
Price = Callable[[Space, tuple[int, ...]], int]  # a cut's estimated cycles


def gathered_tables(block: ir.Block, variables: set[ir.Value]) -> set[ir.Value]:
    """The device variables of `block` that an `ipu.gather` reads first, all their readers
    compute ops of `block`: the embedding tables."""
    position = {op.operation: k for k, op in enumerate(block.operations)}
    found = set()
    for value in variables:
        readers = [use.owner.operation for use in value.uses]
        if readers and all(reader.parent == block.owner and record_of(reader.opview) for reader in readers):
            if isinstance(record_of(min(readers, key=position.__getitem__)), Gather):
                found.add(value)
    return found


def lay_out_tables(block: ir.Block, variables: set[ir.Value], cut: Cut, fits: Fits, price: Price) -> dict[ir.Value, Layout]:
    """Each embedding table of `block` (`gathered_tables`) that `ipu.matmul`s read, directly
    or transposed, with the layout they all read it in place, if there is one: of the layouts
    their cheapest cuts (`cut`) give it, one under which each has an in-place cut that `fits`,
    the one whose cuts `price` the fewest cycles in all. A transposed read of such a table is
    rewritten to read it directly (`_read_directly`); of the others, left as it was."""
    chosen = {}
    for table in gathered_tables(block, variables):
        rewrites = [_read_directly(product, table) for product in _transposed_reads(table)]
        readers = [(space_of(use.owner), use.operand_number) for use in table.uses if isinstance(record_of(use.owner), Matmul)]
        best = None
        for space, index in readers:
            partition = cut(space)
            if partition is None:
                continue
            layout = operand_layout(space, partition, space.operands[index])
            cuts = [in_place_partition(other, k, layout, fits) for other, k in readers]
            if all(cuts):
                cycles = sum(price(other, c.blocks) for (other, _), c in zip(readers, cuts))
                if best is None or cycles < best[0]:
                    best = (cycles, layout)
        for rewrite in rewrites:
            rewrite(best is not None)
        if best is not None:
            chosen[table] = best[1]
    return chosen


def _transposed_reads(table: ir.Value) -> list[ir.Operation]:
    """The `ipu.matmul`s reading `table` transposed, `A @ transpose(table)`."""
    found = []
    for use in table.uses:
        transpose = use.owner.operation
        if _is_transpose(transpose):
            for read in transpose.results[0].uses:
                product = read.owner.operation
                if isinstance(record_of(product), Matmul) and read.operand_number == 1 and product.operands[0] != product.operands[1]:
                    found.append(product)
    return found


def _read_directly(product: ir.Operation, table: ir.Value) -> Callable[[bool], None]:
    """Builds, before `product` (`A @ transpose(table)`), `transpose(table @ transpose(A))`: the
    same sums in the same order, reading the table itself and transposing the smaller operand
    and result instead. Returns what completes the rewrite: kept (True), the new ops replace
    `product` (and the transpose, if nothing else reads it); else they are erased."""
    lhs, transpose = product.operands[0], product.operands[1].owner
    result_type = ir.RankedTensorType(product.results[0].type)
    with ir.InsertionPoint(product), product.location:
        flipped = tb.relayout(lhs, ("m", "k"), ("k", "m"), ir.RankedTensorType(lhs.type).element_type, unsigned=False)
        inner = with_metadata(ipu.matmul(table, flipped, element_type=result_type.element_type), product.opview)
        back = tb.relayout(inner.result, ("n", "m"), ("m", "n"), result_type.element_type, unsigned=False)
    made = [flipped.owner, inner.operation, back.owner]
    if IPU_ID in product.attributes:  # on the IPU ipu-shard put the product
        for op in made:
            op.attributes[IPU_ID] = product.attributes[IPU_ID]

    def complete(keep: bool) -> None:
        if keep:
            product.results[0].replace_all_uses_with(back)
            product.erase()
            if not list(transpose.results[0].uses):
                transpose.erase()
        else:
            for op in reversed(made):
                op.erase()

    return complete


def _is_transpose(op: ir.Operation) -> bool:
    """Whether `op` is a `linalg.generic` yielding its one 2-D input transposed."""
    if op.name != "linalg.generic" or len(op.operands) != 2 or len(op.results) != 1:
        return False
    maps = [ir.AffineMapAttr(m).value for m in ir.ArrayAttr(op.attributes["indexing_maps"])]
    swapped = ir.AffineMap.get(2, 0, [ir.AffineDimExpr.get(1), ir.AffineDimExpr.get(0)])
    body = list(op.regions[0].blocks[0].operations)
    return (
        maps == [swapped, ir.AffineMap.get_identity(2)]
        and len(body) == 1
        and body[0].operands[0] == op.regions[0].blocks[0].arguments[0]
        and ir.RankedTensorType(op.operands[0].type).element_type == ir.RankedTensorType(op.results[0].type).element_type
    )


def in_place_partition(space: Space, operand: int, layout: Layout, fits: Fits) -> Partition | None:
    """The partition of `space` (a matmul's) cut along operand `operand`'s loops as `layout`
    cuts it and whole along the others, so that each part reads its block where it lives; None
    if `layout` is no block layout, or `space` does not admit the cut, or its pieces but the
    operand's (which it reads where it lives) do not `fit` the planner's budget."""
    if not layout.is_block:
        return None
    blocks, strides = list(space.extents), [0] * len(space.extents)
    for access, parts in zip(space.operands[operand], layout.dims):
        if access.kind != "dim":
            return None
        blocks[access.loop] = parts.intervals[0][1] - parts.intervals[0][0]
        strides[access.loop] = parts.stride
    if not space.admits(tuple(blocks)) or not fits(space, tuple(blocks), operand):
        return None
    return Partition(tuple(blocks), layout.first_tile, tuple(strides))
