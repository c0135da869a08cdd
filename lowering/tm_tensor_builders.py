"""Scalar and tensor builders for `ipu-convert-tm-tensor`: each builds at the current insertion
point and location (inside a generic's body for the scalar ones) and returns the new value."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from mlir import ir
from mlir.dialects import tensor

from ipu_mlir.dialects.ops.space import COMBINERS
from ipu_mlir.dialects.ops.tensor_builders import collapse, expand
from ipu_mlir.dialects.tm_tensor import describe
from ipu_mlir.target.diagnostics import IpuError, op_error

# arith.cmpi predicates
EQ, SLT, SLE, SGE = 0, 2, 3, 5


def map(loops: int, dims: Sequence[int]) -> ir.AffineMap:
    return ir.AffineMap.get(loops, 0, [ir.AffineDimExpr.get(d) for d in dims])


def replaced(rank: int, dim: int, loop: int) -> list[int]:
    """The loops 0..rank-1 indexing a tensor, with `dim` read at `loop` instead."""
    return [loop if d == dim else d for d in range(rank)]


def used(value: ir.Value) -> bool:
    return any(True for _ in value.uses)


def op(name: str, a: ir.Value, b: ir.Value) -> ir.Value:
    return ir.Operation.create(name, results=[a.type], operands=[a, b]).result


def select(condition: ir.Value, a: ir.Value, b: ir.Value) -> ir.Value:
    return ir.Operation.create("arith.select", results=[a.type], operands=[condition, a, b]).result


def cmpi(predicate: int, a: ir.Value, b: ir.Value) -> ir.Value:
    i1, i64 = ir.IntegerType.get_signless(1), ir.IntegerType.get_signless(64)
    return ir.Operation.create(
        "arith.cmpi", results=[i1], operands=[a, b], attributes={"predicate": ir.IntegerAttr.get(i64, predicate)}
    ).result


def cmpf(predicate: int, a: ir.Value, b: ir.Value) -> ir.Value:
    i1, i64 = ir.IntegerType.get_signless(1), ir.IntegerType.get_signless(64)
    return ir.Operation.create(
        "arith.cmpf", results=[i1], operands=[a, b], attributes={"predicate": ir.IntegerAttr.get(i64, predicate)}
    ).result


def index(loop: int, integer: ir.Type | None = None) -> ir.Value:
    """The generic's loop index `loop` as an integer (i64 by default)."""
    i64 = ir.IntegerType.get_signless(64)
    index = ir.Operation.create("linalg.index", results=[ir.IndexType.get()], attributes={"dim": ir.IntegerAttr.get(i64, loop)}).result
    return ir.Operation.create("arith.index_cast", results=[integer or i64], operands=[index]).result


def constant(attr: ir.Attribute) -> ir.Value:
    return ir.Operation.create("arith.constant", results=[attr.type], attributes={"value": attr}).result


def slice(value: ir.Value, dim: int, at: int, result: ir.RankedTensorType) -> ir.Value:
    """`value` at position `at` of dimension `dim`, that dimension dropped (`result`)."""
    shape = list(ir.RankedTensorType(value.type).shape)
    offsets, sizes = [0] * len(shape), list(shape)
    offsets[dim], sizes[dim] = at, 1
    return tensor.ExtractSliceOp(
        result,
        value,
        [],
        [],
        [],
        ir.DenseI64ArrayAttr.get(offsets),
        ir.DenseI64ArrayAttr.get(sizes),
        ir.DenseI64ArrayAttr.get([1] * len(shape)),
    ).result


def refusal(op: ir.Operation, why: str) -> IpuError:
    return op_error(op, f"{why} ({describe(op.name)})")


def combiner(block: ir.Block) -> str | None:
    """The combiner name when the region is `yield combine(arg0, arg1)` (either order)."""
    operations = list(block.operations)
    if len(operations) != 2:
        return None
    combine, terminator = operations
    arguments = list(block.arguments)
    if combine.operation.name not in COMBINERS or terminator.operands[0] != combine.results[0]:
        return None
    return combine.operation.name if sorted(position_in(arguments)(value) for value in combine.operands) == [0, 1] else None


def constant_combiner(block: ir.Block) -> tuple[str, ir.Value] | None:
    """(combiner, value) when the region is `yield combine(arg1, c)` (either order) for a scalar
    `c` that is not the update: a constant, inside the region or from outside it. torch-mlir's
    `scatter_reduce(mean)` counts with one (`original + 1.0` at each indexed position)."""
    operations = [op for op in block.operations if op.operation.name != "arith.constant"]
    if len(operations) != 2:
        return None
    combine, terminator = operations
    if combine.operation.name not in COMBINERS or terminator.operands[0] != combine.results[0]:
        return None
    arguments = list(block.arguments)
    lhs, rhs = combine.operands
    for original, other in ((lhs, rhs), (rhs, lhs)):
        owner = other.owner
        outside = not isinstance(owner, ir.Block) and owner.operation.parent != block.owner
        constant_inside = not isinstance(owner, ir.Block) and owner.operation.name == "arith.constant"
        if original == arguments[1] and other not in arguments and (outside or constant_inside):
            return combine.operation.name, other
    return None


def position_in(arguments: list[ir.Value]) -> Callable[[ir.Value], int]:
    return lambda value: arguments.index(value) if value in arguments else -1


def pick(element: ir.Type) -> str:
    """A combiner that, from its identity, gives back the one value selected exactly."""
    if isinstance(element, ir.FloatType):
        return "arith.addf"
    return "arith.ori" if ir.IntegerType(element).width == 1 else "arith.addi"


def iota(count: int, element: ir.IntegerType) -> ir.Value:
    """The constant `0 .. count-1` of `element`."""
    values = np.arange(count, dtype=np.dtype(f"i{ir.IntegerType(element).width // 8}"))
    return constant(ir.DenseElementsAttr.get(values, type=ir.RankedTensorType.get([count], element)))


def reshaped(value: ir.Value, sizes: list[int]) -> ir.Value:
    """`value` with the same elements in the shape `sizes`: one collapse or expand of
    neighbouring dimensions where that does it, else through one dimension (views either way)."""
    shape = list(ir.RankedTensorType(value.type).shape)
    if shape == sizes:
        return value
    if len(sizes) < len(shape) and (groups := groups_of(shape, sizes)):
        return collapse(value, groups)
    if len(sizes) > len(shape) and (groups := groups_of(sizes, shape)):
        return expand(value, groups, sizes)
    flat = collapse(value, [list(range(len(shape)))]) if len(shape) > 1 else value
    return expand(flat, [list(range(len(sizes)))], sizes) if len(sizes) > 1 else flat


def groups_of(long: list[int], short: list[int]) -> list[list[int]] | None:
    """Runs of neighbouring dimensions of `long` whose products are `short`, else None."""
    groups, d = [], 0
    for size in short:
        if d == len(long):
            return None
        group, product = [d], long[d]
        d += 1
        while product < size and d < len(long):
            group.append(d)
            product *= long[d]
            d += 1
        if product != size:
            return None
        groups.append(group)
    if any(size != 1 for size in long[d:]):
        return None
    groups[-1].extend(range(d, len(long)))
    return groups
