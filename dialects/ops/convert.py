"""Helpers shared by the records' conversions from linalg (`ComputeOp.convert`): element
types, casts, the init of a named op, zero pads to fold into a convolution.
"""

from __future__ import annotations

from mlir import ir

from . import tensor_builders as tb


def is_unsigned(op: ir.OpView) -> bool:
    return "cast" in op.attributes and "unsigned" in str(op.attributes["cast"])


def input_type(lhs: ir.Value, rhs: ir.Value, out: ir.Type, unsigned: bool) -> ir.Type:
    """The element type the ipu op reads: the operands' own when they agree and widen to `out`
    the way the ipu op does (signed, to a wider type of the same kind); else `out`, after a cast."""
    a, b = ir.RankedTensorType(lhs.type).element_type, ir.RankedTensorType(rhs.type).element_type
    if a != b:
        return out
    if a == out:
        return a
    floats = isinstance(a, ir.FloatType) and isinstance(out, ir.FloatType)
    ints = isinstance(a, ir.IntegerType) and isinstance(out, ir.IntegerType) and not unsigned
    return a if (floats or ints) and a.width < out.width else out


def pair(op: ir.OpView, name: str) -> list[int]:
    if name not in op.attributes:
        return [1, 1]
    return [int(v) for v in ir.DenseIntElementsAttr(op.attributes[name])]


def zero_pad_source(value: ir.Value, spatial: tuple[int, int]) -> tuple[ir.Value, list[int]] | None:
    """(source, [top, left, bottom, right]) when `value` is a static `tensor.pad` with zeros of
    the two `spatial` dims only."""
    pad = value.owner
    if isinstance(pad, ir.Block) or pad.name != "tensor.pad" or len(pad.operands) != 1:
        return None
    low = list(ir.DenseI64ArrayAttr(pad.attributes["static_low"]))
    high = list(ir.DenseI64ArrayAttr(pad.attributes["static_high"]))
    if any((low[d] or high[d]) for d in range(len(low)) if d not in spatial) or not _is_zero(pad_value(pad)):
        return None
    return pad.operands[0], [low[spatial[0]], low[spatial[1]], high[spatial[0]], high[spatial[1]]]


def pad_value(pad: ir.OpView) -> ir.Attribute | None:
    """The constant a `tensor.pad` pads with, or None."""
    yielded = list(pad.regions[0].blocks[0].operations)[-1].operands[0]
    owner = yielded.owner
    if isinstance(owner, ir.Block) or owner.name != "arith.constant":
        return None
    return owner.attributes["value"]


def _is_zero(attr: ir.Attribute | None) -> bool:
    if isinstance(attr, ir.DenseElementsAttr):
        return attr.is_splat and _is_zero(attr.get_splat_value())
    if isinstance(attr, (ir.FloatAttr, ir.IntegerAttr)):
        return attr.value == 0
    return False


def _is_zero_tensor(value: ir.Value) -> bool:
    """True for a zero fill or splat; and for `tensor.empty`, whose contents are undefined."""
    owner = value.owner
    if isinstance(owner, ir.Block):
        return False
    if owner.name == "tensor.empty":
        return True
    if owner.name == "linalg.fill":
        scalar = owner.operands[0].owner
        return not isinstance(scalar, ir.Block) and scalar.name == "arith.constant" and _is_zero(scalar.attributes["value"])
    return owner.name == "arith.constant" and _is_zero(owner.attributes["value"])


def add_init(value: ir.Value, init: ir.Value) -> ir.Value:
    """`value + init` element-wise, or `value` when `init` is zero."""
    return value if _is_zero_tensor(init) else tb.elementwise_add(value, init)
