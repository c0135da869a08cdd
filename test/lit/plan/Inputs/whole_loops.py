"""A test plugin: `linalg.generic` and `ipu.matmul` records that keep whole the loops an op
lists in `test.whole_loops` (as a softmax's record keeps its row whole), so the lit tests of
test/lit/plan/admits-whole-loops.mlir can show each path of ipu-plan honouring a record's
`splittable`. Loaded with `ipu-opt --load-pass-plugin`."""

from __future__ import annotations

import dataclasses

from mlir import ir

from ipu_mlir.dialects.ops import REGISTRY

ATTR = "test.whole_loops"


def _keeping_whole(record_class: type) -> type:
    class Record(record_class):
        def space(self, op: ir.OpView):
            space = super().space(op)
            if ATTR not in op.attributes:
                return space
            whole = set(ir.DenseI64ArrayAttr(op.attributes[ATTR]))
            return dataclasses.replace(space, splittable=tuple(s and d not in whole for d, s in enumerate(space.splittable)))

        def rebuild(self, op: ir.OpView, operands: list[ir.Value], cut, units: int) -> ir.OpView:
            piece = super().rebuild(op, operands, cut, units)  # a serial piece keeps the same loops whole
            if ATTR in op.attributes:
                piece.operation.attributes[ATTR] = op.attributes[ATTR]
            return piece

    Record.__name__ = Record.__qualname__ = f"Whole{record_class.__name__}"
    return Record


for name in ("linalg.generic", "ipu.matmul"):  # replaces the built-in records (register_op refuses a second one)
    if not type(REGISTRY[name]).__name__.startswith("Whole"):
        REGISTRY[name] = _keeping_whole(type(REGISTRY[name]))()
