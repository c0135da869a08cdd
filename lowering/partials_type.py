"""`ipu-partials-type` (L1): the type f16 matmuls and convolutions keep their partial sums in,
Poplar's `partialsType` option (PopTorch's `opts.Precision.setPartialsType`)."""

from __future__ import annotations

from dataclasses import dataclass, field

from mlir import ir

from ipu_mlir.dialects.attrs import PARTIALS_ATTR, PARTIALS_TYPES, MalformedAttribute, decode_partials, encode_partials
from ipu_mlir.dialects.ops import record_of
from ipu_mlir.target.diagnostics import IpuError

from .pass_registry import ModulePass, register_pass


@register_pass
@dataclass
class PartialsType(ModulePass):
    """Choose the partials type (f16 or f32) of every f16 `ipu.matmul` and `ipu.conv`.

    Poplar keeps a product's partial sums in its `partialsType`: float by default (poplin's
    MatMulOptions and ConvOptions), half on request, which drives twice the conv units on Mk2 and
    rounds each chunk's sum into f16 (docs/precision.md). Each f16 product (an op whose record
    `takes_partials_type`) gets `ipu.partials = f16` (or `f32`): its kernel keeps the sum in
    that type and the cost model prices it at that type's rate. Without the option the module's `ipu.partials` attribute (a
    front end's choice) decides; with neither, nothing is marked.

    Before, with `ipu-partials-type{type=f16}`:

        %p = "ipu.matmul"(%a, %b) : (tensor<64x256xf16>, tensor<256x64xf16>) -> tensor<64x64xf16>

    After:

        %p = "ipu.matmul"(%a, %b) {ipu.partials = f16} : (tensor<64x256xf16>, tensor<256x64xf16>) -> tensor<64x64xf16>
    """

    name = "ipu-partials-type"

    type: str = field(default="", metadata={"help": "f16 or f32 (default: the module's ipu.partials, else leave products unmarked)"})

    def run(self, module: ir.Operation) -> None:
        partials = self.type or self._of_module(module)
        if partials is None:
            return
        if partials not in PARTIALS_TYPES:
            raise IpuError(f"ipu-partials-type: type must be f16 or f32, got '{partials}'")
        attr = encode_partials(partials)

        def mark(op: ir.Operation) -> ir.WalkResult:
            record = record_of(op)
            if record is not None and record.takes_partials_type and str(ir.ShapedType(op.operands[0].type).element_type) == "f16":
                op.attributes[PARTIALS_ATTR] = attr
            return ir.WalkResult.ADVANCE

        module.walk(mark)

    @staticmethod
    def _of_module(module: ir.Operation) -> str | None:
        if PARTIALS_ATTR not in module.attributes:
            return None
        try:
            return decode_partials(module.attributes[PARTIALS_ATTR])
        except MalformedAttribute as error:
            raise IpuError(f"module attribute '{PARTIALS_ATTR}': {error}", module.location) from None
