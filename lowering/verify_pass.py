"""`ipu-verify`: check `ipu` IR in the middle of a pipeline."""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir

from ipu_mlir.dialects import verifier
from ipu_mlir.target import target_of

from .pass_registry import ModulePass, register_pass


@register_pass
@dataclass
class VerifyIpu(ModulePass):
    """Run the Python verifier of the ipu dialect on the module, for the module's target.

    IRDL checks each op's own operands and attributes; this pass adds what IRDL cannot express
    (shapes, tile indices within the target, mappings, symbol references). It changes nothing
    and fails with every error found, each at its op's location. ipu-opt already verifies its
    input and output; put `ipu-verify` between passes to find the pass that broke the IR.

    Before, with `ipu-set-target{target=tiny},ipu-verify` (valid for gc200's 1472 tiles):

        module {
          func.func @f(%a: tensor<64xf32>) -> tensor<64xf32> {
            %b = "ipu.exchange"(%a) {mapping = {kind = "linear", grain = 1 : i64,
                                                tiles = array<i64: 8, 16, 1>}} : ...
            return %b : tensor<64xf32>
          }
        }

    After: unchanged, and the pipeline fails with

        input.mlir:3:10: error: 'ipu.exchange' op 'mapping': tile grid reaches tiles 8..23,
        outside the target's 16 tiles
    """

    name = "ipu-verify"

    def run(self, module: ir.Operation) -> None:
        errors = verifier.verify(module, target_of(module))
        if errors:
            raise ExceptionGroup(f"{len(errors)} ipu verifier error(s)", errors)
