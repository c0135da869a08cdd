"""`ipu-import-tosa`: TOSA to linalg on tensors (L0), with upstream's own passes.

The pass's docstring (`ipu-opt --help-pass ipu-import-tosa`) explains it, with a before/after
example. Use it in front of the conversion:

    ipu-opt model.tosa.mlir -p 'builtin.module(ipu-import-tosa,ipu-convert-to-ipu)'
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from mlir import ir

from ipu_mlir.target.diagnostics import IpuError

from .convert_to_ipu import run_upstream
from .pass_registry import ModulePass, register_pass

# The passes of upstream's `tosa-to-linalg-pipeline` (mlir::tosa::addTosaToLinalgPasses, which
# mlir-opt 22 does not register as a pipeline), then the conversions of what tosa-to-linalg
# leaves: constants (tosa-to-arith) and reshape, slice, pad, concat (tosa-to-tensor).
TOSA_TO_LINALG = (
    "builtin.module("
    "func.func(tosa-optional-decompositions),canonicalize,"
    "func.func(tosa-infer-shapes,tosa-make-broadcastable,tosa-to-linalg-named),canonicalize,"
    "func.func(tosa-layerwise-constant-fold,tosa-make-broadcastable),"
    "tosa-validate,"
    "func.func(tosa-to-linalg,tosa-to-arith,tosa-to-tensor),"
    "canonicalize)"
)
_NOT_LEGALIZED = re.compile(r"failed to legalize operation '([\w.]+)'")


@register_pass
@dataclass
class ImportTosa(ModulePass):
    """Lower TOSA to linalg, tensor and arith on tensors (L0), with upstream's passes.

    Runs the passes of upstream's `tosa-to-linalg-pipeline` (decompositions, shape inference,
    broadcasting, `tosa-to-linalg-named`, `tosa-to-linalg`), then `tosa-to-arith` and
    `tosa-to-tensor`. Convolutions come out as `linalg.conv_2d_nhwc_fhwc` after a `tensor.pad`,
    matmuls as `linalg.batch_matmul`, pools as `linalg.pooling_nhwc_*`. A TOSA op upstream
    cannot lower stops with `'tosa.op' is not supported by ipu-import-tosa`. A module without
    TOSA ops is left as it is.

    Before:

        %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
        %y = tosa.matmul %a, %b, %zp, %zp : (tensor<1x4x8xf32>, tensor<1x8x16xf32>,
            tensor<1xf32>, tensor<1xf32>) -> tensor<1x4x16xf32>

    After:

        %cst = arith.constant 0.000000e+00 : f32
        %0 = tensor.empty() : tensor<1x4x16xf32>
        %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<1x4x16xf32>) -> tensor<1x4x16xf32>
        %2 = linalg.batch_matmul ins(%a, %b : tensor<1x4x8xf32>, tensor<1x8x16xf32>)
            outs(%1 : tensor<1x4x16xf32>) -> tensor<1x4x16xf32>
    """

    name = "ipu-import-tosa"

    def run(self, module: ir.Operation) -> None:
        if not _has_tosa(module):
            return  # nothing to import: leave the module exactly as it is
        try:
            run_upstream(module, TOSA_TO_LINALG)
        except* IpuError as failure:
            raise ExceptionGroup("TOSA import failed", [_reword(error) for error in _leaves(failure)]) from None


def _has_tosa(module: ir.Operation) -> bool:
    found = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        if op.name.startswith("tosa."):
            found.append(op)
            return ir.WalkResult.INTERRUPT
        return ir.WalkResult.ADVANCE

    module.walk(visit)
    return bool(found)


def _reword(error: IpuError) -> IpuError:
    """Upstream's "failed to legalize operation 'tosa.x'" in the words of the other passes."""
    match = _NOT_LEGALIZED.search(error.message)
    if match is None:
        return error
    return IpuError(f"'{match.group(1)}' is not supported by {ImportTosa.name}", error.location)


def _leaves(group: BaseExceptionGroup) -> list[IpuError]:
    return [leaf for error in group.exceptions for leaf in (_leaves(error) if isinstance(error, BaseExceptionGroup) else [error])]
