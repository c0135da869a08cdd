"""A pass plugin for ipu-opt: `ipu-opt --load-pass-plugin=check_tensor_sizes.py ...`."""

from __future__ import annotations

from dataclasses import dataclass, field

from mlir import ir

from ipu_mlir.lowering import ModulePass, register_pass
from ipu_mlir.target import target_of
from ipu_mlir.target.diagnostics import IpuError, op_error


@register_pass
@dataclass
class CheckTensorSizes(ModulePass):
    """Reject tensors too big for the target's memory; record each function's largest one.

    Before, with `example-check-tensor-sizes` on the tiny target (16 tiles of 64 KiB):

        func.func @scale(%x: tensor<256x256xf32>) -> tensor<256x256xf32> { ... }

    After:

        func.func @scale(%x: tensor<256x256xf32>) -> tensor<256x256xf32>
            attributes {example.largest_tensor_bytes = 262144 : i64} { ... }
    """

    name = "example-check-tensor-sizes"

    fraction: float = field(default=1.0, metadata={"help": "share of the target's memory one tensor may take", "above": 0, "maximum": 1})

    def run(self, module: ir.Operation) -> None:
        target = target_of(module)
        budget = int(target.total_memory_bytes * self.fraction)
        too_big: list[IpuError] = []
        for func in module.regions[0].blocks[0].operations:
            if func.operation.name != "func.func":
                continue
            largest = 0

            def check(op: ir.Operation) -> ir.WalkResult:
                # Collect rather than raise: an exception raised inside a walk callback
                # reaches run() as a bare RuntimeError.
                nonlocal largest
                for result in op.results:
                    size = _bytes(result.type)
                    largest = max(largest, size)
                    if size > budget:
                        too_big.append(
                            op_error(op, f"result of {size} bytes exceeds {self.fraction} of {target.name}'s memory ({budget} bytes)")
                        )
                return ir.WalkResult.ADVANCE

            func.operation.walk(check)
            i64 = ir.IntegerType.get_signless(64)
            func.operation.attributes["example.largest_tensor_bytes"] = ir.IntegerAttr.get(i64, largest)
        if too_big:
            raise ExceptionGroup("tensors too big for the target", too_big)


def _bytes(type_: ir.Type) -> int:
    """Bytes of a statically shaped tensor; 0 for anything else."""
    if not isinstance(type_, ir.RankedTensorType) or not type_.has_static_shape:
        return 0
    count = 1
    for size in type_.shape:
        count *= size
    return count * type_.element_type.width // 8
