"""Pads by constant amounts made static: `tensor.pad %x low[%c0, %c2] high[...]`, with its
amounts SSA constants (as upstream's tosa-to-linalg writes `tosa.pad`, and as canonicalize
leaves them), becomes `tensor.pad %x low[0, 2] high[...]`, the form ipu-convert-to-ipu
converts. A pad by amounts computed at run time is left as it is, and refused."""

from __future__ import annotations

from mlir import ir
from mlir.dialects import tensor

_SIDES = ("static_low", "static_high")


def make_pads_static(block: ir.Block) -> None:
    """Rewrites every pad of `block` (not of nested blocks) whose amounts are all constants."""
    for op in list(block.operations):
        if op.operation.name != "tensor.pad" or len(op.operands) == 1:
            continue
        amounts = constant_amounts(op)
        source = ir.RankedTensorType(op.operands[0].type)
        if amounts is None or not source.has_static_shape:
            continue
        low, high = amounts
        shape = [size + before + after for size, before, after in zip(source.shape, low, high)]
        with ir.InsertionPoint(op), op.location:
            padded = tensor.PadOp(
                ir.RankedTensorType.get(shape, source.element_type),
                op.operands[0],
                [],
                [],
                low,
                high,
                nofold=True if "nofold" in op.attributes else None,
            )
            op.regions[0].blocks[0].append_to(padded.regions[0])
            result = padded.result
            if result.type != op.result.type:  # a dynamic result type: the static one cast to it
                result = tensor.CastOp(op.result.type, result).result
        op.result.replace_all_uses_with(result)
        op.operation.erase()


def constant_amounts(pad: ir.OpView) -> tuple[list[int], list[int]] | None:
    """The pad's low and high amounts, each a literal or an `arith.constant`; else None."""
    values = iter(pad.operands[1:])
    sides = []
    for side in _SIDES:
        amounts = []
        for amount in ir.DenseI64ArrayAttr(pad.attributes[side]):
            if amount == ir.ShapedType.get_dynamic_size():
                value = next(values)
                if not isinstance(value.owner, ir.OpView) or value.owner.operation.name != "arith.constant":
                    return None
                amount = ir.IntegerAttr(value.owner.attributes["value"]).value
            amounts.append(amount)
        sides.append(amounts)
    return sides[0], sides[1]
