"""Builders of L1 IR for the conversion passes: `linalg.generic`s that transpose, broadcast,
cast or add, and the `tensor` reshapes and slices around ipu ops.

Each builds at the current insertion point and location, and returns the new value:

    with ir.InsertionPoint(op), op.location:
        x = relayout(nhwc, "nhwc", "nchw", f32, unsigned=False)    # a transposing generic
        x = unsqueeze(x, {1})                                       # tensor.expand_shape
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Sequence

from mlir import ir
from mlir.dialects import linalg, tensor

_ITERATOR = "#linalg.iterator_type<{}>"


def generic(
    inputs: Sequence[ir.Value], init: ir.Value, maps: Sequence[ir.AffineMap], body: Callable[..., ir.Value], reductions: Sequence[int] = ()
) -> ir.Value:
    """A `linalg.generic` at the current insertion point; `body(*scalars)` builds the value it
    yields from the block arguments (inputs, then the init)."""
    loops = maps[-1].n_dims
    iterators = [ir.Attribute.parse(_ITERATOR.format("reduction" if d in reductions else "parallel")) for d in range(loops)]
    op = linalg.GenericOp(
        [init.type], list(inputs), [init], ir.ArrayAttr.get([ir.AffineMapAttr.get(m) for m in maps]), ir.ArrayAttr.get(iterators)
    )
    block = op.regions[0].blocks.append(*[ir.RankedTensorType(v.type).element_type for v in (*inputs, init)])
    with ir.InsertionPoint(block):
        linalg.YieldOp([body(*block.arguments)])
    return op.results[0]


def relayout(
    value: ir.Value,
    value_dims: Sequence[Hashable],
    target_dims: Sequence[Hashable],
    element_type: ir.Type,
    unsigned: bool,
    extents: dict | None = None,
) -> ir.Value:
    """`value`, whose axes are the loops `value_dims`, with axes `target_dims` instead
    (transposed, and broadcast along loops it lacks, of sizes `extents`), its elements cast to
    `element_type`; `value` itself when nothing changes."""
    source = ir.RankedTensorType(value.type)
    if list(value_dims) == list(target_dims) and source.element_type == element_type:
        return value
    sizes = {**(extents or {}), **dict(zip(value_dims, source.shape))}
    target = list(target_dims)
    init = tensor.empty([sizes[d] for d in target], element_type)
    read = ir.AffineMap.get(len(target), 0, [ir.AffineDimExpr.get(target.index(d)) for d in value_dims])
    return generic([value], init, [read, ir.AffineMap.get_identity(len(target))], lambda x, _: cast(x, element_type, unsigned))


def cast(value: ir.Value, to: ir.Type, unsigned: bool) -> ir.Value:
    """A scalar converted as linalg's `cast_signed` / `cast_unsigned` do."""
    source = value.type
    if source == to:
        return value
    if isinstance(source, ir.FloatType) and isinstance(to, ir.FloatType):
        name = "arith.extf" if to.width > source.width else "arith.truncf"
    elif isinstance(source, ir.FloatType):
        name = "arith.fptoui" if unsigned else "arith.fptosi"
    elif isinstance(to, ir.FloatType):
        name = "arith.uitofp" if unsigned else "arith.sitofp"
    elif to.width > source.width:
        name = "arith.extui" if unsigned else "arith.extsi"
    else:
        name = "arith.trunci"
    return ir.Operation.create(name, results=[to], operands=[value]).result


def elementwise_add(a: ir.Value, b: ir.Value) -> ir.Value:
    """`a + b` for tensors of one type, as a `linalg.generic`."""
    result = ir.RankedTensorType(a.type)
    add = "arith.addf" if isinstance(result.element_type, ir.FloatType) else "arith.addi"
    identity = ir.AffineMap.get_identity(result.rank)
    empty = tensor.empty(result.shape, result.element_type)
    return generic([a, b], empty, [identity] * 3, lambda x, y, _: ir.Operation.create(add, results=[x.type], operands=[x, y]).result)


def zero_attr(element_type: ir.Type) -> ir.Attribute:
    """0 (or 0.0) of a scalar type."""
    return ir.FloatAttr.get(element_type, 0.0) if isinstance(element_type, ir.FloatType) else ir.IntegerAttr.get(element_type, 0)


def reassociation(groups: Sequence[Sequence[int]]) -> ir.ArrayAttr:
    i64 = ir.IntegerType.get_signless(64)
    return ir.ArrayAttr.get([ir.ArrayAttr.get([ir.IntegerAttr.get(i64, d) for d in group]) for group in groups])


def collapse(value: ir.Value, groups: Sequence[Sequence[int]]) -> ir.Value:
    source = ir.RankedTensorType(value.type)
    shape = [math.prod(source.shape[d] for d in group) for group in groups]
    result = ir.RankedTensorType.get(shape, source.element_type)
    return tensor.CollapseShapeOp(result, value, reassociation(groups)).result


def expand(value: ir.Value, groups: Sequence[Sequence[int]], shape: Sequence[int]) -> ir.Value:
    result = ir.RankedTensorType.get(list(shape), ir.RankedTensorType(value.type).element_type)
    return tensor.ExpandShapeOp(result, value, reassociation(groups), [], ir.DenseI64ArrayAttr.get(list(shape))).result


def unit_groups(rank: int, units: set[int]) -> list[list[int]]:
    """Reassociation putting each unit dim with its neighbour: the kept dim before it, or the
    first kept one; [] when no dim is kept (a rank-0 tensor)."""
    groups: list[list[int]] = []
    leading: list[int] = []
    for d in range(rank):
        if d not in units:
            groups.append(leading + [d])
            leading = []
        elif groups:
            groups[-1].append(d)
        else:
            leading.append(d)
    return groups


def squeeze(value: ir.Value, units: set[int]) -> ir.Value:
    """`value` without its unit dims `units`."""
    if not units:
        return value
    return collapse(value, unit_groups(ir.RankedTensorType(value.type).rank, units))


def unsqueeze(value: ir.Value, units: set[int]) -> ir.Value:
    """`value` with unit dims inserted so that they are at positions `units` of the result."""
    shape = list(ir.RankedTensorType(value.type).shape)
    for d in sorted(units):
        shape.insert(d, 1)
    return expand(value, unit_groups(len(shape), units), shape)


def leading_slice(value: ir.Value, sizes: Sequence[int]) -> ir.Value:
    """The leading `sizes` block of `value`."""
    source = ir.RankedTensorType(value.type)
    result = ir.RankedTensorType.get(list(sizes), source.element_type)
    rank = len(sizes)
    return tensor.ExtractSliceOp(
        result,
        value,
        [],
        [],
        [],
        ir.DenseI64ArrayAttr.get([0] * rank),
        ir.DenseI64ArrayAttr.get(list(sizes)),
        ir.DenseI64ArrayAttr.get([1] * rank),
    ).result
