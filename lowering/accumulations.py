"""A pipelined training step's running gradient sums kept out of element-wise fusion (part of
`ipu-convert-to-ipu`).

The torch front end sums a pipelined step's gradients over its micro-batches in a loop, adding
each micro-batch's gradient into the running sum, PyTorch's order ((g1 + g2) + g3) + ...
(frontends/accumulation_loop.py); the additions' locations name `ACCUMULATION`. Each stays an
op of its own, an addition of the sum and one gradient, which ipu-pipeline puts in that
gradient's cycle. (When the front end unrolled the micro-batches, upstream
`linalg-fuse-elementwise-ops` fused the chain of additions into one generic reading all G
gradients at once: BERT-Large's token embedding at G = 7 read 7 dense 30522 x 1024 gradients and
its momentum in one op, 765 KB a tile.) Upstream fuses generics only, so each marked addition
becomes a named `linalg.add` for the fusion (`keep_accumulations_apart`) and a generic again
after it (`GENERALIZE`).
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import linalg

# The attribute of a pipelined step's loop over its micro-batches (frontends/accumulation_loop.py).
ACCUMULATE_ATTR = "ipu.accumulate"
# The name a location of a running gradient sum's addition carries (frontends/torch.py's importer).
ACCUMULATION = "ipu.accumulate"
# What makes the named additions generics again, after fusion.
GENERALIZE = "builtin.module(func.func(linalg-generalize-named-ops))"


def keep_accumulations_apart(block: ir.Block) -> None:
    for op in list(block.operations):
        if op.operation.name == "linalg.generic" and _is_accumulation(op):
            with ir.InsertionPoint(op), op.location:
                total = linalg.add(op.operands[0], op.operands[1], outs=[op.operands[2]], emit_generic=False)
            op.results[0].replace_all_uses_with(total)
            op.operation.erase()


def _is_accumulation(generic: ir.OpView) -> bool:
    """An addition of two tensors of its result's type (identity maps, its init unread) whose
    location names `ACCUMULATION`."""
    body = generic.regions[0].blocks[0]
    operations = list(body.operations)
    return (
        location_names(generic.location, ACCUMULATION)
        and len(generic.operands) == 3
        and len(operations) == 2
        and operations[0].name == "arith.addf"
        and list(operations[0].operands) == list(body.arguments)[:2]
        and all(m == _identity(generic) for m in ir.ArrayAttr(generic.attributes["indexing_maps"]))
        and all(operand.type == generic.results[0].type for operand in generic.operands)
        and not any(True for _ in body.arguments[2].uses)
    )


def _identity(generic: ir.OpView) -> ir.AffineMapAttr:
    return ir.AffineMapAttr.get(ir.AffineMap.get_identity(ir.RankedTensorType(generic.results[0].type).rank))


def location_names(location: ir.Location, name: str) -> bool:
    if location.is_a_fused():
        return any(location_names(inner, name) for inner in location.locations)
    while location.is_a_name():
        if location.name_str == name:
            return True
        location = location.child_loc
    return False
