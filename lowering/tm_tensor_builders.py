"""Scalar and tensor builders for `ipu-convert-tm-tensor`: each builds at the current insertion
point and location (inside a generic's body for the scalar ones) and returns the new value."""

from __future__ import annotations

from collections.abc import Sequence

from mlir import ir
from mlir.dialects import tensor

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
