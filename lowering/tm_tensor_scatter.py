"""`tm_tensor.scatter` (index_put, scatter, scatter_add, index_add) for `ipu-convert-tm-tensor`.

The indexed dimensions of the original leading (torch-mlir's exports), the scatter becomes
`ipu.scatter` on rows (`dialects/ops/scatter.py`): each update's row computed once, then folded
into the rows, work linear in the updates. Otherwise, and always under `linalg-only` (the
ExecutionEngine reference runs upstream linalg only), it becomes generics comparing every
update with every position (updates x positions). The semantics are in the docstring of
lowering/convert_tm_tensor.py.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from mlir import ir
from mlir.dialects import tensor

from ipu_mlir.dialects import ipu
from ipu_mlir.dialects.ops import scatter as scatter_op
from ipu_mlir.dialects.ops.generic import filled, identity_constant
from ipu_mlir.dialects.ops.tensor_builders import generic

from . import tm_tensor_builders as build


def scatter(op: ir.Operation, linalg_only: bool) -> list[ir.Value]:
    updates, indices, original = op.operands
    dimension_map = list(ir.DenseI64ArrayAttr(op.attributes["dimension_map"]))
    block = op.regions[0].blocks[0]
    yielded = list(block.operations)[-1].operands[0]
    combine = build.combiner(block)
    counted = build.constant_combiner(block) if combine is None and yielded != block.arguments[0] else None
    if counted is not None:  # combine(original, c): the scatter of c at every update
        combine, value = counted
        if value.owner.operation.parent == block.owner:  # a constant inside the region: made again outside
            value = ir.Operation.create(
                "arith.constant", results=[value.type], attributes={"value": value.owner.attributes["value"]}
            ).result
        updates = filled(ir.RankedTensorType(updates.type).shape, value.type, value)
    if yielded != block.arguments[0] and combine is None:
        raise build.refusal(
            op, "has a region that neither yields the update nor combines it (or a constant) with the original by one associative op"
        )
    update_type, target = ir.RankedTensorType(updates.type), ir.RankedTensorType(original.type)
    rank, element = target.rank, target.element_type
    offset = rank - (update_type.rank - 1)  # update dims 1.. run along the original's trailing dims
    count = update_type.shape[0]
    update_exprs = [ir.AffineDimExpr.get(rank)]
    for d in range(rank):
        if d < offset and d not in dimension_map:
            raise build.refusal(op, f"leaves dimension {d} of the original neither indexed nor updated")
        if d < offset:
            continue
        size = update_type.shape[1 + d - offset]
        if d in dimension_map and size == 1:
            update_exprs.append(ir.AffineConstantExpr.get(0))
        elif d not in dimension_map and size == target.shape[d]:
            update_exprs.append(ir.AffineDimExpr.get(d))
        else:
            raise build.refusal(
                op,
                f"writes windows of size {size} along dimension {d} of the original "
                "(only whole dimensions or single indexed positions are converted)",
            )
    index_type = ir.RankedTensorType(indices.type).element_type
    columns = [build.slice(indices, 1, c, ir.RankedTensorType.get([count], index_type)) for c in range(len(dimension_map))]
    if not linalg_only and sorted(dimension_map) == list(range(len(dimension_map))) and (combine is None or combine in scatter_op.UFUNCS):
        return [_row_scatter(updates, columns, original, dimension_map, combine)]
    update_map = ir.AffineMap.get(rank + 1, 0, update_exprs)
    column_maps = [build.map(rank + 1, [rank])] * len(columns)
    at_position = build.map(rank + 1, range(rank))

    sizes = [build.constant(ir.IntegerAttr.get(index_type, target.shape[d])) for d in dimension_map]

    def matches(column_values: Sequence[ir.Value]) -> ir.Value:
        """Whether the update's index row names this position; a negative index counts from
        the end, as in PyTorch (torch-mlir passes it through unchanged)."""
        match = None
        for value, d, size in zip(column_values, dimension_map, sizes):
            position = build.index(d, index_type)
            condition = build.op(
                "arith.ori", build.cmpi(build.EQ, value, position), build.cmpi(build.EQ, build.op("arith.addi", value, size), position)
            )
            match = condition if match is None else build.op("arith.andi", match, condition)
        return match

    same = build.map(rank, range(rank))
    if combine is not None:  # the updates folded from the identity, then into the original
        identity = identity_constant(combine, element)

        def fold(update: ir.Value, *rest: ir.Value) -> ir.Value:
            return build.op(combine, build.select(matches(rest[:-1]), update, identity), rest[-1])

        folded = generic(
            [updates, *columns], filled(target.shape, element, identity), [update_map, *column_maps, at_position], fold, [rank]
        )
        empty = tensor.empty(target.shape, element)
        return [generic([original, folded], empty, [same] * 3, lambda old, new, _: build.op(combine, old, new))]

    # Overwrite: the last update naming a position wins (-1: none does), then is picked.
    i64 = ir.IntegerType.get_signless(64)
    none = build.constant(ir.IntegerAttr.get(i64, -1))

    def last(*arguments: ir.Value) -> ir.Value:
        return build.op("arith.maxsi", build.select(matches(arguments[:-1]), build.index(rank), none), arguments[-1])

    winners = generic(columns, filled(target.shape, i64, none), [*column_maps, at_position], last, reductions=[rank])
    pick = build.pick(element)
    identity = identity_constant(pick, element)

    def chosen(update: ir.Value, winner: ir.Value, acc: ir.Value) -> ir.Value:
        return build.op(pick, build.select(build.cmpi(build.EQ, build.index(rank), winner), update, identity), acc)

    picked = generic([updates, winners], filled(target.shape, element, identity), [update_map, at_position, at_position], chosen, [rank])
    zero = build.constant(ir.IntegerAttr.get(i64, 0))
    return [
        generic(
            [winners, picked, original],
            tensor.empty(target.shape, element),
            [same] * 4,
            lambda winner, new, old, _: build.select(build.cmpi(build.SGE, winner, zero), new, old),
        )
    ]


def _row_scatter(updates: ir.Value, columns: list[ir.Value], original: ir.Value, dimension_map: list[int], combine: str | None) -> ir.Value:
    """The scatter as `ipu.scatter` on rows (work linear in the updates): the indexed dimensions,
    leading, flattened into R rows and the others into D columns. Each update's row is computed
    once (-1, which no row holds, for an index out of range). A combining scatter folds the
    updates from the identity, then combines that with the original; an overwrite scatters
    each update's number with `maxsi` (the last one naming a row wins), gathers the winners'
    rows, and keeps the original where none did."""
    target = ir.RankedTensorType(original.type)
    element, index_type = target.element_type, ir.RankedTensorType(columns[0].type).element_type
    indexed = len(dimension_map)
    rows, width = math.prod(target.shape[:indexed]), math.prod(target.shape[indexed:])
    count = ir.RankedTensorType(columns[0].type).shape[0]
    strides = {d: math.prod(target.shape[d + 1 : indexed]) for d in dimension_map}
    zero, none = (build.constant(ir.IntegerAttr.get(index_type, v)) for v in (0, -1))
    sizes = {d: build.constant(ir.IntegerAttr.get(index_type, target.shape[d])) for d in dimension_map}
    steps = {d: build.constant(ir.IntegerAttr.get(index_type, strides[d])) for d in dimension_map if strides[d] > 1}

    def position(*arguments: ir.Value) -> ir.Value:
        """Row-major over the indexed dimensions, a negative index counting from the end."""
        at = valid = None
        for value, d in zip(arguments[:-1], dimension_map):
            wrapped = build.select(build.cmpi(build.SLT, value, zero), build.op("arith.addi", value, sizes[d]), value)
            inside = build.op("arith.andi", build.cmpi(build.SGE, wrapped, zero), build.cmpi(build.SLT, wrapped, sizes[d]))
            valid = inside if valid is None else build.op("arith.andi", valid, inside)
            term = build.op("arith.muli", wrapped, steps[d]) if d in steps else wrapped
            at = term if at is None else build.op("arith.addi", at, term)
        return build.select(valid, at, none)

    vector = build.map(1, [0])
    positions = generic(columns, tensor.empty([count], index_type), [vector] * (len(columns) + 1), position)
    table = build.reshaped(updates, [count, width])
    if combine is not None:
        folded = build.reshaped(scatter_op.scatter(table, positions, build.iota(rows, index_type), combine), list(target.shape))
        same = build.map(target.rank, range(target.rank))
        return generic([original, folded], tensor.empty(target.shape, element), [same] * 3, lambda old, new, _: build.op(combine, old, new))
    i64 = ir.IntegerType.get_signless(64)
    numbers = build.reshaped(build.iota(count, i64), [count, 1])
    winners = build.reshaped(scatter_op.scatter(numbers, positions, build.iota(rows, index_type), "arith.maxsi"), [rows])
    picked = ipu.gather(table, winners, build.iota(count, i64)).result  # zeros where no update won
    lowest = build.constant(ir.IntegerAttr.get(i64, 0))
    kept = generic(
        [winners, picked, build.reshaped(original, [rows, width])],
        tensor.empty([rows, width], element),
        [build.map(2, [0]), build.map(2, [0, 1]), build.map(2, [0, 1]), build.map(2, [0, 1])],
        lambda winner, new, old, _: build.select(build.cmpi(build.SGE, winner, lowest), new, old),
    )
    return build.reshaped(kept, list(target.shape))
