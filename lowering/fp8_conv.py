"""`ipu-fp8-conv` (L0): a convolution of dequantized FP8 tensors as the IPU runs it, one FP8
`ipu.conv` carrying Poplar's QUARTER metadata (`ipu.quarter`, dialects/attrs.py): PopXL's
`conv_pow2scaled`.

PyTorch writes a scaled FP8 convolution as it writes a scaled FP8 linear layer
(lowering/fp8_matmul.py): the input and the filter each widened from FP8 and multiplied by a
power of two, then an f32 convolution. torch-mlir pads the dequantized input (`tensor.pad`),
splits a grouped one's channels (`tensor.expand_shape`) and puts the bias into the `outs`. This
pass runs before `ipu-fold-constants` and makes it

    %y = "ipu.conv"(%xq, %wq) {ipu.quarter = {format = "e4m3fn", log2_scale = -9 : i32}, padding = ...}
           : (tensor<1x3x8x8xf8E4M3FN>, tensor<8x3x3x3xf8E4M3FN>) -> tensor<1x8x8x8xf32>

on the FP8 tensors (the pads and reshapes moved onto them, a pad with FP8 zeros), the two scales
summed into the convolution's log2 scale, the bias added after it as `ipu-convert-to-ipu` adds
any `outs`. It is priced at the target's FP8 rate (target/cost_model.py `conv_work`).

Only what changes no bit is rewritten, by ipu-fp8-matmul's rule: constant power-of-two scales,
every dequantized value exact in its type, an f16 or f32 result, a total scale in [-32, 32). A
convolution is a sum of products as a matmul is (the simulator's im2col product: the same f32
products in the same order, one power of two apart), so the result is the original's bit for
bit. f16 or bf16 tensors widened without a scale give an f16 (bf16) convolution into f32.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from mlir import ir
from mlir.dialects import arith, tensor

from ipu_mlir.dialects import ops_named
from ipu_mlir.dialects.attrs import QuarterAttr
from ipu_mlir.dialects.ops import converter_of
from ipu_mlir.dialects.ops.conv import CONV_FORMS
from ipu_mlir.dialects.ops.convert import pad_value, pair

from .fp8_matmul import dequantized, element_of, erase_unused, owner_of, scaled_pair, transposed
from .pass_registry import ModulePass, register_pass

_VIEWS = ("tensor.pad", "tensor.expand_shape", "tensor.collapse_shape")  # what torch-mlir puts between


@register_pass
@dataclass
class FP8Conv(ModulePass):
    """Rewrite convolutions of power-of-two-scaled FP8 tensors into FP8 `ipu.conv`s with QUARTER metadata.

    A 2-d linalg convolution (any form `ipu-convert-to-ipu` converts: NCHW, NHWC, grouped,
    depthwise) into an f16 or f32 result whose input and filter are each, maybe through zero
    `tensor.pad`s and reshapes, element-wise generics computing `extf(q) * 2^k` (or `/ 2^k`)
    of an FP8 tensor `q` becomes the `ipu.conv` of the FP8 tensors with
    `ipu.quarter = {format, log2_scale = k_input + k_filter}` (plus its `outs`, if not
    zero), bit for bit the same result. The dequantizing generics left unused are erased.

    Before:

        %x = linalg.generic {...} ins(%xq : tensor<1x3x8x8xf8E4M3FN>) ... {extf, mulf by 2^-4}
        %w = linalg.generic {...} ins(%wq : tensor<8x3x3x3xf8E4M3FN>) ... {extf, mulf by 2^-5}
        %p = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {... yield %zero}
        %y = linalg.conv_2d_nchw_fchw ins(%p, %w : ...) outs(%bias : tensor<1x8x8x8xf32>)

    After:

        %c = "ipu.conv"(%xq, %wq) {ipu.quarter = {format = "e4m3fn", log2_scale = -9 : i32},
               padding = array<i64: 1, 1, 1, 1>, ...} : (...) -> tensor<1x8x8x8xf32>
        %y = linalg.generic {...} ins(%c, %bias ...) {addf}
    """

    name = "ipu-fp8-conv"

    def run(self, module: ir.Operation) -> None:
        for conv in ops_named(module, CONV_FORMS):
            _rewrite(conv)


def _rewrite(conv: ir.Operation) -> None:
    input, filter, init = conv.operands
    if str(element_of(init)) not in ("f16", "f32") or "cast" in conv.attributes:
        return
    (x_views, x_base), (w_views, w_base) = _views(input), _views(filter)
    x, w = dequantized(x_base), dequantized(w_base)
    if (scaled := scaled_pair(x, w)) is None:
        return
    log2_scale, fmt = scaled
    replayed: list[ir.Operation] = []  # the views made on the FP8 tensors, innermost first
    with conv.location, ir.InsertionPoint(conv):
        narrow_input = _replayed(transposed(x.narrow, x.permutation), x_views, replayed)
        narrow_filter = _replayed(transposed(w.narrow, w.permutation), w_views, replayed)
        quarter = QuarterAttr(fmt, log2_scale).encode() if fmt is not None else None
        strides, dilations = pair(conv.opview, "strides"), pair(conv.opview, "dilations")
        result = converter_of(conv.name).build(conv.name, narrow_input, narrow_filter, init, strides, dilations, quarter=quarter)
    conv.results[0].replace_all_uses_with(result)
    conv.erase()
    init_owner = [init.owner.operation] if isinstance(init, ir.OpResult) else []  # a zero fill ipu.conv does not read
    erase_unused([*reversed(replayed), *reversed(x_views), *x.ops, *reversed(w_views), *w.ops, *init_owner])


def _views(value: ir.Value) -> tuple[list[ir.Operation], ir.Value]:
    """The zero pads and reshapes between a convolution's operand and the tensor they view,
    outermost first, and that tensor."""
    views = []
    while (owner := owner_of(value)) is not None and owner.name in _VIEWS:
        if owner.name == "tensor.pad" and (len(owner.operands) != 1 or not _is_zero(pad_value(owner.opview))):
            break
        views.append(owner)
        value = owner.operands[0]
    return views, value


def _is_zero(attr: ir.Attribute | None) -> bool:
    """+0.0 only: a pad of -0.0 could change the sign of a zero sum against the FP8 type's +0."""
    return isinstance(attr, ir.FloatAttr) and attr.value == 0.0 and math.copysign(1.0, attr.value) > 0


def _replayed(value: ir.Value, views: list[ir.Operation], made: list[ir.Operation]) -> ir.Value:
    """`views` (outermost first) applied to `value`, a tensor of another element type, each
    new op appended to `made`: a pad fills with that type's zero (a dequantized zero is zero)."""
    element = element_of(value)
    for view in reversed(views):
        shape = ir.RankedTensorType(view.results[0].type).shape
        result_type = ir.RankedTensorType.get(shape, element)
        if view.name == "tensor.pad":
            pad = tensor.PadOp(result_type, value, [], [], view.attributes["static_low"], view.attributes["static_high"])
            block = pad.regions[0].blocks.append(*[ir.IndexType.get()] * len(shape))
            with ir.InsertionPoint(block):
                tensor.YieldOp(arith.constant(element, 0.0))
            value = pad.result
            made.append(pad.operation)
        else:
            attrs = {name: view.attributes[name] for name in ("reassociation", "static_output_shape") if name in view.attributes}
            made.append(ir.Operation.create(view.name, [result_type], [value, *view.operands[1:]], attrs))
            value = made[-1].results[0]
    return value
