"""`linalg.pack` / `linalg.unpack` rewritten into the plain ops they stand for, by upstream's
own transforms (`transform.structured.lower_pack` / `lower_unpack`, run by the transform
interpreter): a pack is a `tensor.pad` to whole tiles, an `expand_shape` and a
`linalg.transpose`; an unpack the transpose back, a `collapse_shape` and an `extract_slice`.
Used by `ipu-convert-to-ipu` before it converts, and by the ExecutionEngine reference, which
cannot lower them either (upstream has no pass that does).
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects.transform import interpreter

from ipu_mlir.target.diagnostics import IpuError

_LOWER = {
    "linalg.pack": 'transform.structured.lower_pack %ops : (!transform.op<"linalg.pack">) -> '
    '(!transform.op<"tensor.pad">, !transform.op<"tensor.expand_shape">, !transform.op<"linalg.transpose">)',
    "linalg.unpack": 'transform.structured.lower_unpack %ops : (!transform.op<"linalg.unpack">) -> '
    '(!transform.op<"tensor.empty">, !transform.op<"linalg.transpose">, !transform.op<"tensor.collapse_shape">, '
    '!transform.op<"tensor.extract_slice">)',
}
_SCRIPT = """
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %ops = transform.structured.match ops{["OP_NAME"]} in %root : (!transform.any_op) -> !transform.op<"OP_NAME">
    LOWER
    transform.yield
  }
}
"""


def lower_packs(module: ir.Operation) -> None:
    """Every pack and unpack of `module` lowered; one that cannot be (dynamic sizes) is an
    IpuError at its location."""
    found: dict[str, ir.Location] = {}

    def visit(op: ir.Operation) -> ir.WalkResult:
        if op.name in _LOWER:
            found.setdefault(op.name, op.location)
        return ir.WalkResult.ADVANCE

    module.walk(visit)
    for name, location in found.items():
        script = ir.Module.parse(_SCRIPT.replace("LOWER", _LOWER[name]).replace("OP_NAME", name), module.context)
        try:
            interpreter.apply_named_sequence(module, script.body.operations[0], script)
        except (ir.MLIRError, ValueError):  # the bindings raise ValueError for a failed transform
            raise IpuError(f"'{name}' cannot be lowered by upstream's transform.structured.lower_{name[7:]}", location) from None
