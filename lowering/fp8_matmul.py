"""`ipu-fp8-matmul` (L0): a matmul of dequantized FP8 tensors as the IPU runs it, one FP8
product carrying Poplar's QUARTER metadata (`ipu.quarter`, dialects/attrs.py).

PyTorch writes a scaled FP8 linear layer as casts around a wide product: each operand widened
(`arith.extf` of an FP8 tensor) and multiplied by its scale, then an f32 (or f16) matmul,
often of a transpose. `ipu-fold-constants` would then fold a constant weight's dequantization
into an f32 weight, and `ipu-convert-to-ipu` fuse the activation's into its producer, so the
matmul would run, and be priced, as an f32 one. This pass runs first and makes it

    %p = "ipu.matmul"(%qa, %qb) {ipu.quarter = {format = "e4m3fn", log2_scale = -11 : i32}}
           : (tensor<4x16xf8E4M3FN>, tensor<16x32xf8E4M3FN>) -> tensor<4x32xf32>

on the FP8 tensors (a transpose moves onto the FP8 one), the two scales summed into the
product's log2 scale: PopXL's `matmul_pow2scaled`, `(A @ B) * 2^s`, priced at the target's FP8
rate (target/cost_model.py).

Only what changes no bit is rewritten. A scale must be a constant power of two: scaling an
FP8 value by 2^k in the widened type is then exact when the format's smallest subnormal and
largest value, times 2^k, stay within that type's (checked), every product of two FP8 values is
exact in f32, and f32 sums of values scaled by one power of two round as the unscaled ones do.
So the product equals the original bit for bit (summed in the same order: the simulator's
np.matmul, and within f32's order tolerance the reference's). Anything else stays: a run-time
or non-power-of-two scale (PyTorch's usual amax / 448), a sum into bf16, a total scale outside
Poplar's [-32, 32), an accumulating `outs`, other contractions and convolutions.

The same pattern without a scale on f16 or bf16 tensors (PyTorch's CPU decomposition of an
f16 `linear` widens both operands to f32) becomes an f16 (bf16) product into f32, with no
metadata: their products are exact in f32 too.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import ml_dtypes
from mlir import ir
from mlir.dialects import linalg, tensor

from ipu_mlir.dialects import ipu, ops_named
from ipu_mlir.dialects.attrs import LOG2_SCALES, QUARTER_ATTR, QUARTER_FORMATS, QuarterAttr
from ipu_mlir.target.element_types import FLOAT_DTYPES

from .pass_registry import ModulePass, register_pass

# Each named product's operand and result loops, as linalg's default indexing maps give them.
_PRODUCTS = {"linalg.matmul": ([0, 2], [2, 1], [0, 1]), "linalg.batch_matmul": ([0, 1, 3], [0, 3, 2], [0, 1, 2])}
_WIDE = ("f16", "bf16", "f32", "f64")  # types a dequantizing multiply may run in
_NARROW = ("f16", "bf16", *QUARTER_FORMATS.values())  # types whose products are exact in f32


@register_pass
@dataclass
class FP8Matmul(ModulePass):
    """Rewrite matmuls of power-of-two-scaled FP8 tensors into FP8 `ipu.matmul`s with QUARTER metadata.

    A `linalg.matmul` or `linalg.batch_matmul` into a zero fill whose two operands are each,
    maybe through a `linalg.transpose`, element-wise generics computing `extf(q) * 2^k` (or
    `/ 2^k`) of an FP8 tensor `q` becomes `ipu.matmul(q_a, q_b)` with
    `ipu.quarter = {format, log2_scale = k_a + k_b}`, bit for bit the same result; f16 or
    bf16 tensors widened without a scale give an f16 (bf16) product into f32. The
    dequantizing generics and transposes left unused are erased.

    Before:

        %a = linalg.generic {...} ins(%qa : tensor<4x16xf8E4M3FN>) outs(%e0 : tensor<4x16xf32>) {
        ^bb0(%in: f8E4M3FN, %out: f32):
          %w = arith.extf %in : f8E4M3FN to f32
          %s = arith.mulf %w, %c2_pow_m6 : f32          // 2^-6
          linalg.yield %s : f32
        } -> tensor<4x16xf32>
        %b = ... the same of %qb : tensor<16x32xf8E4M3FN>, times 2^-5
        %acc = linalg.fill ins(%zero : f32) outs(%e2 : tensor<4x32xf32>) -> tensor<4x32xf32>
        %y = linalg.matmul ins(%a, %b : tensor<4x16xf32>, tensor<16x32xf32>) outs(%acc : tensor<4x32xf32>) -> tensor<4x32xf32>

    After:

        %y = "ipu.matmul"(%qa, %qb) {ipu.quarter = {format = "e4m3fn", log2_scale = -11 : i32}}
               : (tensor<4x16xf8E4M3FN>, tensor<16x32xf8E4M3FN>) -> tensor<4x32xf32>
    """

    name = "ipu-fp8-matmul"

    def run(self, module: ir.Operation) -> None:
        for product in ops_named(module, _PRODUCTS):
            _rewrite(product)


@dataclass
class Dequantized:
    """An operand that is `transpose(q, permutation) * 2^log2_scale`, `q` an FP8 tensor."""

    narrow: ir.Value
    log2_scale: int
    permutation: list[int] | None
    ops: list[ir.Operation]  # the transpose and generics computing the operand from `narrow`


def _rewrite(product: ir.Operation) -> None:
    lhs, rhs, init = product.operands
    result_type = ir.RankedTensorType(product.results[0].type)
    if str(result_type.element_type) not in ("f16", "f32") or not _is_zero_fill(init) or not _default_maps(product):
        return
    a, b = dequantized(lhs), dequantized(rhs)
    if (scaled := scaled_pair(a, b)) is None:
        return
    log2_scale, fmt = scaled
    with product.location, ir.InsertionPoint(product):
        operands = [transposed(x.narrow, x.permutation) for x in (a, b)]
        scaled = ipu.matmul(*operands, element_type=result_type.element_type)
        if fmt is not None:
            scaled.attributes[QUARTER_ATTR] = QuarterAttr(fmt, log2_scale).encode()
    product.results[0].replace_all_uses_with(scaled.result)
    product.erase()
    erase_unused([init.owner.operation, *a.ops, *b.ops])


def scaled_pair(a: Dequantized | None, b: Dequantized | None) -> tuple[int, str | None] | None:
    """(the product's log2 scale, its QUARTER format) of two dequantized operands; None where
    they make no one narrow product: another narrow type each, a scale sum QUARTER cannot
    carry, or a scale on f16 / bf16 operands (they have no metadata to carry one)."""
    if a is None or b is None or element_of(a.narrow) != element_of(b.narrow) or a.log2_scale + b.log2_scale not in LOG2_SCALES:
        return None
    log2_scale = a.log2_scale + b.log2_scale
    fmt = QuarterAttr.format_of(element_of(a.narrow))
    return None if fmt is None and log2_scale != 0 else (log2_scale, fmt)


def dequantized(value: ir.Value) -> Dequantized | None:
    """`value` as a scaled, maybe transposed, widened FP8 (or f16, bf16) tensor, or None."""
    ops: list[ir.Operation] = []
    permutation = None
    owner = owner_of(value)
    if owner is not None and owner.name == "linalg.transpose":
        permutation = list(ir.DenseI64ArrayAttr(owner.attributes["permutation"]))
        ops.append(owner)
        value = owner.operands[0]
    steps: list[tuple[str, ir.Type, int]] = []  # from the operand back to the narrow tensor
    while (owner := owner_of(value)) is not None and (body := _elementwise_steps(owner)) is not None:
        ops.append(owner)
        steps += body
        value = owner.operands[0]
    if str(element_of(value)) not in _NARROW:
        return None
    narrow = ml_dtypes.finfo(FLOAT_DTYPES[str(element_of(value))])
    log2_scale = 0
    for kind, type_, k in reversed(steps):  # from the FP8 tensor on
        log2_scale += k
        if kind == "scale" and (str(type_) not in _WIDE or not _exact(narrow, log2_scale, type_)):
            return None
    widened = any(kind == "extf" for kind, _, _ in steps)
    return Dequantized(value, log2_scale, permutation, ops) if widened else None


def _elementwise_steps(op: ir.Operation) -> list[tuple[str, ir.Type, int]] | None:
    """The steps of a one-input element-wise generic whose body only widens and scales by
    powers of two, from its yield back to its input: ("extf", type, 0) or ("scale", type the
    multiply runs in, k for 2^k); None for any other op."""
    if op.name != "linalg.generic" or len(op.operands) != 2 or len(op.results) != 1:
        return None
    if any(str(t) != "#linalg.iterator_type<parallel>" for t in ir.ArrayAttr(op.attributes["iterator_types"])):
        return None
    maps = [ir.AffineMapAttr(m).value for m in ir.ArrayAttr(op.attributes["indexing_maps"])]
    if any(m != ir.AffineMap.get_identity(m.n_dims) for m in maps):
        return None
    block = op.regions[0].blocks[0]
    body = [o for o in block.operations if o.operation.name != "arith.constant"]
    x = body[-1].operands[0]  # linalg.yield's
    steps: list[tuple[str, ir.Type, int]] = []
    while x != block.arguments[0]:
        step = owner_of(x)
        if step is None or step.parent != op:
            return None
        if step.name == "arith.extf":
            steps.append(("extf", x.type, 0))
            x = step.operands[0]
            continue
        if step.name not in ("arith.mulf", "arith.divf"):
            return None
        k = _log2_constant(step.operands[1])
        if k is None and step.name == "arith.mulf":
            k, x = _log2_constant(step.operands[0]), step.operands[1]
        else:
            x = step.operands[0]
        if k is None:
            return None
        steps.append(("scale", step.results[0].type, k if step.name == "arith.mulf" else -k))
    return steps if len(steps) == len(body) - 1 else None  # nothing else in the body


def _log2_constant(value: ir.Value) -> int | None:
    """k when `value` is a scalar float constant 2^k, else None."""
    owner = owner_of(value)
    if owner is None or owner.name != "arith.constant" or not isinstance(owner.attributes["value"], ir.FloatAttr):
        return None
    mantissa, exponent = math.frexp(ir.FloatAttr(owner.attributes["value"]).value)
    return exponent - 1 if mantissa == 0.5 else None


def _exact(narrow: ml_dtypes.finfo, log2_scale: int, type_: ir.Type) -> bool:
    """Whether every value of the narrow type times 2^log2_scale is exact in `type_`: as many
    mantissa bits, its smallest subnormal on or above the type's, its largest value within
    the type's range."""
    wide = ml_dtypes.finfo(FLOAT_DTYPES[str(type_)])
    scale = 2.0**log2_scale
    in_range = float(narrow.smallest_subnormal) * scale >= float(wide.smallest_subnormal) and float(narrow.max) * scale <= float(wide.max)
    return wide.nmant >= narrow.nmant and in_range


def transposed(value: ir.Value, permutation: list[int] | None) -> ir.Value:
    if permutation is None:
        return value
    source = ir.RankedTensorType(value.type)
    empty = tensor.EmptyOp([source.shape[p] for p in permutation], source.element_type).result
    return linalg.transpose(value, outs=[empty], permutation=permutation).results[0]


def _is_zero_fill(value: ir.Value) -> bool:
    owner = owner_of(value)
    if owner is None or owner.name != "linalg.fill":
        return False
    scalar = owner_of(owner.operands[0])
    return (
        scalar is not None
        and scalar.name == "arith.constant"
        and isinstance(scalar.attributes["value"], ir.FloatAttr)
        and scalar.attributes["value"].value == 0.0
    )


def _default_maps(product: ir.Operation) -> bool:
    maps = [ir.AffineMapAttr(m).value for m in linalg.get_indexing_maps(product.opview)]
    loops = [[e.position if isinstance(e, ir.AffineDimExpr) else None for e in m.results] for m in maps]
    return loops == [list(x) for x in _PRODUCTS[product.name]]


def erase_unused(ops: list[ir.Operation]) -> None:
    """Erase those of `ops` (and the `tensor.empty`s feeding them) whose results nothing uses
    any more, in order: a chain's later op first."""
    for op in ops:
        if any(True for result in op.results for _ in result.uses):
            continue
        inits = [owner_of(v) for v in op.operands]
        op.erase()
        for init in inits:
            if init is not None and init.name == "tensor.empty" and not any(True for _ in init.results[0].uses):
                init.erase()


def owner_of(value: ir.Value) -> ir.Operation | None:
    return value.owner.operation if isinstance(value, ir.OpResult) else None


def element_of(value: ir.Value) -> ir.Type:
    return ir.ShapedType(value.type).element_type
