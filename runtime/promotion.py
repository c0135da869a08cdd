"""The reference's promotion of narrow floats (docs/precision.md): a program on f16, bf16 or an
FP8 format rewritten to compute in f32, rounding where MLIR's meaning rounds, so that the
ExecutionEngine runs it (it cannot lower FP8 at all) without summing a matmul one rounding per
term in a narrow type. Upstream ops only: `run_reference` owes nothing to the simulator.
"""

from __future__ import annotations

import numpy as np
from mlir import ir
from mlir.dialects import arith, linalg, tensor
from mlir.dialects import func as func_dialect

from ipu_mlir.dialects.resources import dense_array, is_resource
from ipu_mlir.target.element_types import FLOAT_DTYPES


def promoted(module: ir.Module) -> ir.Module | None:
    """A copy of `module` with every narrow float (f16, bf16, FP8: scalars, tensor elements,
    constants) made f32 and the `arith.extf` from them to f32 dropped. The program's own
    conversions into f16 (`truncf`, `sitofp`, `uitofp` from wider values) still round, each
    followed by an `extf` to f32. Every arith / math op giving a bf16 or FP8 value (and every
    named linalg op, whose sum runs in f32) is followed by a rounding into its type, as MLIR
    computes in them (docs/precision.md): bf16 by the JIT's truncf and extf, FP8, which the
    JIT cannot lower at all (no LLVM type), by a call of `_fp8_rounding`'s function, f32
    arithmetic rounding to the format (its own code, not ml_dtypes': the simulator's). None if
    the copy does not verify (an op the retyping cannot carry, such as a bit cast)."""
    copy = ir.Module.parse(module.operation.get_asm(enable_debug_info=True))
    f32 = ir.F32Type.get()

    def narrow(type_: ir.Type) -> str | None:
        element = type_.element_type if isinstance(type_, ir.ShapedType) else type_
        name = str(element)
        return name if name in _NARROW else None

    def wide(type_: ir.Type) -> ir.Type:
        if isinstance(type_, ir.FunctionType):
            return ir.FunctionType.get([wide(t) for t in type_.inputs], [wide(t) for t in type_.results])
        if narrow(type_) is None:
            return type_
        if isinstance(type_, ir.RankedTensorType):
            return ir.RankedTensorType.get(type_.shape, f32, type_.encoding)
        return f32 if not isinstance(type_, ir.ShapedType) else type_

    ops: list[ir.Operation] = []
    copy.operation.walk(lambda op: ops.append(op) or ir.WalkResult.ADVANCE)  # rewritten after the walk
    native = [
        op for op in ops
        if op.name in _INTO_NARROW and narrow(op.results[0].type) == "f16" and narrow(op.operands[0].type) is None
    ]  # fmt: skip
    rounded_ops = [
        (op, narrow(op.results[0].type)) for op in ops
        if len(op.results) == 1 and narrow(op.results[0].type) in _ROUNDED_PER_OP and (
            op.name.split(".")[0] in ("arith", "math") and op.name != "arith.constant" and not _in_named_linalg(op)
            or op.name.startswith("linalg.") and op.name != "linalg.generic"
        )
    ]  # fmt: skip
    for op in ops:
        for region in op.regions:
            for block in region.blocks:
                for argument in block.arguments:
                    argument.set_type(wide(argument.type))
        if not any(op == kept for kept in native):
            for result in op.results:
                result.set_type(wide(result.type))
        if op.name == "func.func":
            op.attributes["function_type"] = ir.TypeAttr.get(wide(ir.TypeAttr(op.attributes["function_type"]).value))
        elif op.name == "arith.constant":
            value = op.attributes["value"]
            if isinstance(value, ir.FloatAttr) and narrow(value.type):
                op.attributes["value"] = ir.FloatAttr.get(f32, value.value)
            elif isinstance(value, ir.DenseFPElementsAttr) and narrow(value.type):
                if value.is_splat:
                    op.attributes["value"] = ir.DenseElementsAttr.get_splat(
                        wide(value.type), ir.FloatAttr.get(f32, value.get_splat_value().value)
                    )
                else:
                    values = dense_array(value, FLOAT_DTYPES[narrow(value.type)]).astype(np.float32)
                    op.attributes["value"] = ir.DenseElementsAttr.get(values, type=f32)
            elif is_resource(value) and narrow(value.type):  # torch-mlir's weights: widened into a dense f32 constant
                values = dense_array(value, FLOAT_DTYPES[narrow(value.type)])
                if values is None:
                    return None
                shape = ir.ShapedType(value.type).shape
                op.attributes["value"] = ir.DenseElementsAttr.get(values.astype(np.float32).reshape(shape), type=f32)
    for op in native:
        with ir.InsertionPoint.after(op), op.location:
            widened = arith.extf(wide(op.results[0].type), op.results[0])
        op.results[0].replace_all_uses_except(widened, widened.owner.operation)
    for format_ in sorted({format_ for _, format_ in rounded_ops if format_ in _FP8_FORMATS}):
        rounding = ir.Module.parse(_fp8_rounding(format_))
        with ir.InsertionPoint(copy.body):
            rounding.body.operations[0].clone()
    for op, format_ in rounded_ops:
        with ir.InsertionPoint.after(op), op.location:
            rounded = _rounded(op.results[0], format_)
        if rounded is None:
            return None
        op.results[0].replace_all_uses_except(rounded, rounded.owner.operation)
    for op in ops:
        if op.name in ("arith.extf", "arith.truncf") and op.operands[0].type == op.results[0].type:
            op.results[0].replace_all_uses_with(op.operands[0])
            op.erase()
    try:
        copy.operation.verify()
    except ir.MLIRError:
        return None
    return copy


def _in_named_linalg(op: ir.Operation) -> bool:
    """Whether `op` is in the implicit body of a named linalg op (a matmul's multiply-add): its
    sum runs in f32 and the op's result is rounded once, as the simulator's."""
    parent = op.parent
    return parent is not None and parent.name.startswith("linalg.") and parent.name != "linalg.generic"


def _round_scalar(value: ir.Value, format_: str) -> ir.Value:
    """f32 `value` rounded to `format_` and widened back: bf16 by the JIT's own truncf, an FP8
    format by its `__round_<format_>` function."""
    f32 = ir.F32Type.get()
    if format_ == "bf16":
        return arith.extf(f32, arith.truncf(ir.BF16Type.get(), value))
    return func_dialect.call([f32], ir.FlatSymbolRefAttr.get(f"__round_{format_}"), [value])


def _rounded(value: ir.Value, format_: str) -> ir.Value | None:
    """Scalar `value` rounded to `format_`, or each element of ranked tensor `value` (a
    linalg.generic); None for anything else."""
    f32 = ir.F32Type.get()
    if value.type == f32:
        return _round_scalar(value, format_)
    if not isinstance(value.type, ir.RankedTensorType):
        return None
    type_ = ir.RankedTensorType(value.type)
    identity = ir.AffineMapAttr.get(ir.AffineMap.get_identity(type_.rank))
    parallel = ir.Attribute.parse("#linalg.iterator_type<parallel>")
    empty = tensor.EmptyOp(type_.shape, f32).result
    generic = linalg.GenericOp([type_], [value], [empty], ir.ArrayAttr.get([identity] * 2), ir.ArrayAttr.get([parallel] * type_.rank))
    block = generic.regions[0].blocks.append(f32, f32)
    with ir.InsertionPoint(block):
        linalg.YieldOp([_round_scalar(block.arguments[0], format_)])
    return generic.results[0]


# Conversions into f16 from other types: the promotion keeps their rounding.
_INTO_NARROW = ("arith.truncf", "arith.sitofp", "arith.uitofp")
_FP8_FORMATS = {
    # name: (mantissa bits, smallest normal exponent, largest finite value, has infinities, has -0)
    "f8E4M3FN": (3, -6, 448.0, False, True),
    "f8E5M2": (2, -14, 57344.0, True, True),
    "f8E4M3FNUZ": (3, -7, 240.0, False, False),
    "f8E5M2FNUZ": (2, -15, 57344.0, False, False),
}
# Rounded after every arith / math op giving them (MLIR's meaning), f16 only where converted into.
_ROUNDED_PER_OP = frozenset(("bf16", *_FP8_FORMATS))
_NARROW = frozenset(("f16", *_ROUNDED_PER_OP))


def _fp8_rounding(format_: str) -> str:
    """func @__round_<format_>(f32) -> f32: x rounded to the nearest value of the FP8 format,
    ties to even, as APFloat converts: a normal by rounding its f32 bits at the format's last
    mantissa bit, a subnormal by (|x| + S) - S with S = 2^(emin - m + 23), which leaves f32 a
    step of exactly the format's smallest subnormal. Past the largest finite value: infinity
    (E5M2) or NaN (the others: no infinity, no saturation); FNUZ has no -0."""
    mantissa, emin, largest, infinities, negative_zero = _FP8_FORMATS[format_]
    cut = 23 - mantissa
    overflow = "0x7F800000" if infinities else "0x7FC00000"
    signed_zero = "%signed" if negative_zero else "%unsigned"
    return f"""
func.func private @__round_{format_}(%x: f32) -> f32 {{
  %a = math.absf %x : f32
  %bits = arith.bitcast %a : f32 to i32
  %c_cut = arith.constant {cut} : i32
  %c_one = arith.constant 1 : i32
  %c_half = arith.constant {(1 << (cut - 1)) - 1} : i32
  %c_mask = arith.constant {~((1 << cut) - 1)} : i32
  %shifted = arith.shrui %bits, %c_cut : i32
  %lsb = arith.andi %shifted, %c_one : i32
  %bias = arith.addi %c_half, %lsb : i32
  %up = arith.addi %bits, %bias : i32
  %kept = arith.andi %up, %c_mask : i32
  %normal = arith.bitcast %kept : i32 to f32
  %s = arith.constant {2.0 ** (emin - mantissa + 23)} : f32
  %plus = arith.addf %a, %s : f32
  %subnormal = arith.subf %plus, %s : f32
  %smallest_normal = arith.constant {2.0**emin} : f32
  %is_subnormal = arith.cmpf olt, %a, %smallest_normal : f32
  %magnitude = arith.select %is_subnormal, %subnormal, %normal : f32
  %largest = arith.constant {largest} : f32
  %too_big = arith.cmpf ogt, %magnitude, %largest : f32
  %beyond = arith.constant {overflow} : f32
  %bounded = arith.select %too_big, %beyond, %magnitude : f32
  %is_nan = arith.cmpf uno, %x, %x : f32
  %nan = arith.constant 0x7FC00000 : f32
  %finite = arith.select %is_nan, %nan, %bounded : f32
  %signed = math.copysign %finite, %x : f32
  %zero = arith.constant 0.0 : f32
  %is_zero = arith.cmpf oeq, %finite, %zero : f32
  %unsigned = arith.select %is_zero, %zero, %signed : f32
  return {signed_zero} : f32
}}"""


def uses_narrow_floats(module: ir.Module) -> bool:
    """Whether a value of `module` (a result, a block argument) has a type made with f16, bf16
    or an FP8 format."""
    found: list[ir.Operation] = []

    def narrow(type_: ir.Type) -> bool:
        return str(type_.element_type if isinstance(type_, ir.ShapedType) else type_) in _NARROW

    def visit(op: ir.Operation) -> ir.WalkResult:
        values = [*op.results, *(a for region in op.regions for block in region.blocks for a in block.arguments)]
        if any(narrow(value.type) for value in values):
            found.append(op)
            return ir.WalkResult.INTERRUPT
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    return bool(found)
