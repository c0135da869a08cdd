"""A test plugin: `linalg.generic` and `ipu.matmul` records that keep whole the loops an op
lists in `test.whole_loops` (as a softmax's record keeps its row whole), and call splittable
those it lists in `test.cut_loops` (a record wrongly claiming a summed loop without a combiner
splittable), so the lit tests of test/lit/plan/admits-whole-loops.mlir can show each path of
ipu-plan honouring `Space.admits`. Loaded with `ipu-opt --load-pass-plugin`."""

from __future__ import annotations

import dataclasses

from mlir import ir

from ipu_mlir.dialects.ops import REGISTRY

WHOLE, CUT = "test.whole_loops", "test.cut_loops"


def _test_record(record_class: type) -> type:
    class Record(record_class):
        def space(self, op: ir.OpView):
            space = super().space(op)
            whole, cut = (set(ir.DenseI64ArrayAttr(op.attributes[a])) if a in op.attributes else set() for a in (WHOLE, CUT))
            return dataclasses.replace(space, splittable=tuple((s or d in cut) and d not in whole for d, s in enumerate(space.splittable)))

        def rebuild(self, op: ir.OpView, operands: list[ir.Value], cut, units: int) -> ir.OpView:
            piece = super().rebuild(op, operands, cut, units)  # a serial piece keeps the same loops whole
            for attr in (WHOLE, CUT):
                if attr in op.attributes:
                    piece.operation.attributes[attr] = op.attributes[attr]
            return piece

    Record.__name__ = Record.__qualname__ = f"Whole{record_class.__name__}"
    return Record


for name in ("linalg.generic", "ipu.matmul"):  # replaces the built-in records (register_op refuses a second one)
    if not type(REGISTRY[name]).__name__.startswith("Whole"):
        REGISTRY[name] = _test_record(type(REGISTRY[name]))()
