"""`ipu.matmul`: batched matrix products, `(B.., M, K) x (B.., K, N) -> (B.., M, N)`.

Loops (b.., m, n, k), k summed. Converted from linalg's contractions with one summed dimension,
at most one m and one n and any batch dimensions (matmul, batch_matmul, matvec, vecmat, dot,
...), between `linalg.generic` transposes and casts.
"""

from __future__ import annotations

import math

import numpy as np
from mlir import ir
from mlir.dialects import func, linalg

from ipu_mlir.target import Target, cost_model
from ipu_mlir.target.diagnostics import op_error

from .. import ipu
from ..attrs import PARTIALS_ATTR, QUARTER_ATTR, MalformedAttribute, QuarterAttr, decode_partials
from . import tensor_builders as tb
from .convert import add_init, input_type, is_unsigned
from .registry import ComputeOp, Example, Kernel, Piece, SerialCut, dtype_of, register_op, shape_text, static_tensor
from .semantics import accumulation
from .space import SUM, Access, Space, shape


@register_op
class Matmul(ComputeOp):
    name = "ipu.matmul"
    kernel_shared = True  # np.matmul with its operand and result types
    takes_partials_type = True
    converts = frozenset({
        "linalg.matmul", "linalg.batch_matmul", "linalg.matvec", "linalg.vecmat",
        "linalg.batch_matvec", "linalg.batch_vecmat", "linalg.dot",
    })  # fmt: skip

    def convert(self, op: ir.OpView) -> ir.Value | None:
        """`ipu.matmul` for a contraction with one k, at most one m and one n, any batch dims;
        None (left for generalization) otherwise. Operands are transposed / broadcast to
        (batch, m, k) x (batch, k, n) first; a missing m or n becomes a unit dim."""
        dims = linalg.infer_contraction_dimensions(op)
        maps = [_dims_of(ir.AffineMapAttr(m).value) for m in linalg.get_indexing_maps(op)]
        lhs, rhs, init = op.operands
        out_type = ir.RankedTensorType(op.results[0].type)
        if dims is None or None in maps or str(out_type.element_type) == "i1":  # i1 "adds" with ori
            return None
        batch, m, n, k = (list(dims.batch), list(dims.m), list(dims.n), list(dims.k))
        if len(k) != 1 or len(m) > 1 or len(n) > 1 or sorted(maps[2]) != sorted(batch + m + n):
            return None
        if not set(maps[0]) <= set(batch + m + k) or not set(maps[1]) <= set(batch + k + n):
            return None
        extents = {}
        for value, value_dims in zip(op.operands, maps):
            extents.update(zip(value_dims, ir.RankedTensorType(value.type).shape))
        unsigned = is_unsigned(op)
        element_type = input_type(lhs, rhs, out_type.element_type, unsigned)
        if batch and m and n:
            shared = _shared_operand(op, lhs, rhs, maps, batch, m, n, k, element_type, unsigned, extents)
            if shared is not None:
                return add_init(tb.relayout(shared[0], shared[1], maps[2], out_type.element_type, unsigned), init)
        a = tb.relayout(lhs, maps[0], batch + m + k, element_type, unsigned, extents)
        b = tb.relayout(rhs, maps[1], batch + k + n, element_type, unsigned, extents)
        units = len(batch) + 1  # where the missing m (in a) or n (in b) goes
        a = a if m else tb.unsqueeze(a, {units - 1})
        b = b if n else tb.unsqueeze(b, {units})
        product = ipu.matmul(a, b, element_type=out_type.element_type).result
        product = tb.squeeze(product, ({units - 1} if not m else set()) | ({units} if not n else set()))
        return add_init(tb.relayout(product, batch + m + n, maps[2], out_type.element_type, unsigned), init)

    def verify(self, op: ipu.MatmulOp) -> None:
        lhs = static_tensor(op, op.lhs.type, "lhs")
        rhs = static_tensor(op, op.rhs.type, "rhs")
        result = static_tensor(op, op.result.type, "result")
        ranks = (lhs.rank, rhs.rank, result.rank)
        if len(set(ranks)) != 1 or lhs.rank < 2:
            raise op_error(op, f"expects lhs, rhs and result of the same rank, at least 2; got ranks {', '.join(map(str, ranks))}")
        batches = [list(t.shape[:-2]) for t in (lhs, rhs, result)]
        if not batches[0] == batches[1] == batches[2]:
            raise op_error(op, f"expects equal batch dimensions, got {batches[0]}, {batches[1]} and {batches[2]}")
        if lhs.shape[-1] != rhs.shape[-2]:
            raise op_error(op, f"expects the contraction sizes to match, got lhs K = {lhs.shape[-1]} and rhs K = {rhs.shape[-2]}")
        expected = [*lhs.shape[:-1], rhs.shape[-1]]
        if list(result.shape) != expected:
            raise op_error(op, f"expects result shape {shape_text(expected)}, got {shape_text(result.shape)}")
        if lhs.element_type != rhs.element_type:
            raise op_error(op, f"expects lhs and rhs of the same element type, got {lhs.element_type} and {rhs.element_type}")
        verify_metadata(op, lhs.element_type, result.element_type)

    def extents(self, op: ir.OpView) -> tuple[int, ...]:
        lhs, rhs = shape(op.operands[0]), shape(op.operands[1])
        return lhs[:-2] + (lhs[-2], rhs[-1], lhs[-1])

    def space(self, op: ir.OpView) -> Space:
        lhs, rhs = shape(op.operands[0]), shape(op.operands[1])
        batch = len(lhs) - 2
        b = list(range(batch))
        dims = lambda loops, sizes: tuple(Access("dim", s, loop) for loop, s in zip(loops, sizes))  # noqa: E731
        extents = self.extents(op)
        return Space(
            op,
            extents,
            reductions=(batch + 2,),
            splittable=(True,) * len(extents),
            operands=(dims(b + [batch, batch + 2], lhs), dims(b + [batch + 2, batch + 1], rhs)),
            result=tuple(b + [batch, batch + 1]),
            element_type=ir.RankedTensorType(op.results[0].type).element_type,
            combiner=SUM,
        )

    def examples(self) -> list[Example]:
        return [
            Example("matmul-odd", _MATMUL.format(a="7x13", b="13x9", c="7x9", t="f32", op="matmul")),
            Example("batch-matmul-i32", _MATMUL.format(a="3x5x6", b="3x6x7", c="3x5x7", t="i32", op="batch_matmul")),
            Example("matmul-f16", _MATMUL.format(a="6x10", b="10x5", c="6x5", t="f16", op="matmul")),
            Example("matmul-i8-into-i32", _MIXED),
            Example("matvec", _MATMUL.format(a="9x11", b="11", c="9", t="f32", op="matvec")),
            Example("transposed-rhs", _TRANSPOSED_RHS),
            Example("vector-forms", _VECTOR_FORMS),
        ]

    def serial_cuts(self, op: ir.OpView) -> list[SerialCut]:
        """Columns (pieces of rhs), then rows (pieces of lhs)."""
        lhs, rhs = shape(op.operands[0]), shape(op.operands[1])
        return [SerialCut(((1, len(rhs) - 1, 1),), len(lhs) - 1, rhs[-1]), SerialCut(((0, len(lhs) - 2, 1),), len(lhs) - 2, lhs[-2])]

    def rebuild(self, op: ir.OpView, operands: list[ir.Value], cut: SerialCut, units: int) -> ir.OpView:
        return with_metadata(ipu.matmul(*operands, element_type=ir.RankedTensorType(op.results[0].type).element_type), op)

    def codelet(self, op: ir.OpView, name: str, piece: Piece, ip: ir.InsertionPoint, loc: ir.Location) -> None:
        operand_type = ir.RankedTensorType(op.operands[0].type).element_type
        result_type = ir.RankedTensorType(op.results[0].type).element_type
        (lhs, _, _), (rhs, _, _) = piece.inputs
        inputs = [ir.RankedTensorType.get(list(s), operand_type) for s in (lhs, rhs)]
        function = ipu.codelet_function(name, inputs, [ir.RankedTensorType.get(list(piece.box), result_type)], loc=loc, ip=ip)
        block = function.regions[0].blocks[0]
        with ir.InsertionPoint(block), loc:
            product = with_metadata(ipu.matmul(block.arguments[0], block.arguments[1], element_type=result_type), op)
            func.ReturnOp([product.result])

    def kernel(self, op: ir.OpView, batch: int) -> Kernel:
        quarter = quarter_of(op)
        return Product(dtype_of(op, op.operands[0]), dtype_of(op, op.results[0]), quarter.log2_scale if quarter else 0, partials_of(op))

    def work(self, op: ir.OpView, extents: tuple[int, ...], target: Target) -> int:
        """At the operands' rate (FP8's on a target with FP8 arithmetic) and partials type. A
        QUARTER scale adds no cycles: the AMP applies the power of two as it writes the result
        (assumption: no source prices it)."""
        *batch, m, n, k = extents
        operand = ir.ShapedType(op.operands[0].type).element_type
        return cost_model.matmul_work(math.prod(batch), m, n, k, operand, target, partials_of(op))


# The conformance examples (test/python/test_conformance.py): contractions accumulating onto
# their `outs` (an input, so the init is added), odd sizes, integers, f16, a transposing map.
_MATMUL = """
func.func @main(%a: tensor<{a}x{t}>, %b: tensor<{b}x{t}>, %c: tensor<{c}x{t}>) -> tensor<{c}x{t}> {{
  %r = linalg.{op} ins(%a, %b : tensor<{a}x{t}>, tensor<{b}x{t}>) outs(%c : tensor<{c}x{t}>) -> tensor<{c}x{t}>
  return %r : tensor<{c}x{t}>
}}
"""
_TRANSPOSED_RHS = """
func.func @main(%a: tensor<5x12xf32>, %b: tensor<7x12xf32>) -> tensor<5x7xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<5x7xf32>
  %c = linalg.fill ins(%zero : f32) outs(%e : tensor<5x7xf32>) -> tensor<5x7xf32>
  %r = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
         ins(%a, %b : tensor<5x12xf32>, tensor<7x12xf32>) outs(%c : tensor<5x7xf32>) -> tensor<5x7xf32>
  return %r : tensor<5x7xf32>
}
"""

_MIXED = """
func.func @main(%a: tensor<5x9xi8>, %b: tensor<9x6xi8>, %c: tensor<5x6xi32>) -> tensor<5x6xi32> {
  %r = linalg.matmul ins(%a, %b : tensor<5x9xi8>, tensor<9x6xi8>) outs(%c : tensor<5x6xi32>) -> tensor<5x6xi32>
  return %r : tensor<5x6xi32>
}
"""
_VECTOR_FORMS = """
func.func @main(%v: tensor<6xf32>, %m: tensor<6x5xf32>, %bm: tensor<3x4x6xf32>, %bv: tensor<3x6xf32>, %bn: tensor<3x6x5xf32>,
                %i: tensor<5xf32>, %j: tensor<3x4xf32>, %k: tensor<3x5xf32>, %s: tensor<f32>)
    -> (tensor<5xf32>, tensor<3x4xf32>, tensor<3x5xf32>, tensor<f32>) {
  %vm = linalg.vecmat ins(%v, %m : tensor<6xf32>, tensor<6x5xf32>) outs(%i : tensor<5xf32>) -> tensor<5xf32>
  %mv = linalg.batch_matvec ins(%bm, %bv : tensor<3x4x6xf32>, tensor<3x6xf32>) outs(%j : tensor<3x4xf32>) -> tensor<3x4xf32>
  %bvm = linalg.batch_vecmat ins(%bv, %bn : tensor<3x6xf32>, tensor<3x6x5xf32>) outs(%k : tensor<3x5xf32>) -> tensor<3x5xf32>
  %d = linalg.dot ins(%v, %v : tensor<6xf32>, tensor<6xf32>) outs(%s : tensor<f32>) -> tensor<f32>
  return %vm, %mv, %bvm, %d : tensor<5xf32>, tensor<3x4xf32>, tensor<3x5xf32>, tensor<f32>
}
"""


def quarter_of(op: ir.OpView) -> QuarterAttr | None:
    """The QUARTER metadata of a scaled FP8 matmul (verified), None on any other matmul."""
    return QuarterAttr.decode(op.attributes[QUARTER_ATTR]) if QUARTER_ATTR in op.attributes else None


def partials_of(op: ir.OpView) -> str | None:
    """The partials type of an f16 product ("f16" or "f32", verified), None when not chosen."""
    return decode_partials(op.attributes[PARTIALS_ATTR]) if PARTIALS_ATTR in op.attributes else None


def with_metadata(product: ir.OpView, original: ir.OpView) -> ir.OpView:
    """`product`, a piece of `original`, carrying its QUARTER metadata and partials type if it has any."""
    for name in (QUARTER_ATTR, PARTIALS_ATTR):
        if name in original.attributes:
            product.attributes[name] = original.attributes[name]
    return product


def verify_metadata(op: ir.OpView, operand: ir.Type, result: ir.Type) -> None:
    """QUARTER metadata well formed, naming the operands' FP8 format, on a product into f16 or
    f32 (a sum a power of two can scale exactly: PopXL's is into f16, the AMP's f32 partials into
    f32); a partials type f16 or f32, on f16 operands (Poplar's partialsType is for half ones)."""
    if QUARTER_ATTR in op.attributes:
        try:
            quarter = QuarterAttr.decode(op.attributes[QUARTER_ATTR])
        except MalformedAttribute as error:
            raise op_error(op, f"'{QUARTER_ATTR}': {error}") from None
        if QuarterAttr.format_of(operand) != quarter.format:
            raise op_error(op, f"'{QUARTER_ATTR}' format '{quarter.format}' does not match the operands' element type {operand}")
        if str(result) not in ("f16", "f32"):
            raise op_error(op, f"with '{QUARTER_ATTR}' expects an f16 or f32 result, got {result}")
    if PARTIALS_ATTR in op.attributes:
        try:
            decode_partials(op.attributes[PARTIALS_ATTR])
        except MalformedAttribute as error:
            raise op_error(op, f"'{PARTIALS_ATTR}': {error}") from None
        if str(operand) != "f16":
            raise op_error(op, f"'{PARTIALS_ATTR}' is for f16 operands, got {operand}")


# The AMP's chunk of the summed dimension between two updates of the partials: the 16 f16 input
# channels one weight load holds on Mk1 and Mk2 (amp_in_chans_per_group: 32 weight bytes per
# conv unit / 2). Assumption: a chunk's products are summed in f32 inside the unit, and the sum
# is added to the partial in f32 and rounded to the partials type; no source says the adder's width.
HALF_PARTIALS_CHUNK = 16


def sum_in_half_partials(lhs: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    """`lhs @ rhs` (f32 operands, products exact) with f16 partials: each chunk of
    HALF_PARTIALS_CHUNK along the summed dimension summed in f32, then added to the f16 partial
    and rounded to f16, in order (Poplar's partialsType HALF)."""
    partial = None
    for start in range(0, lhs.shape[-1], HALF_PARTIALS_CHUNK):
        chunk = np.matmul(lhs[..., start : start + HALF_PARTIALS_CHUNK], rhs[..., start : start + HALF_PARTIALS_CHUNK, :])
        partial = chunk.astype(np.float16) if partial is None else (partial.astype(np.float32) + chunk).astype(np.float16)
    return partial


class Product:
    """The kernel of `ipu.matmul`: np.matmul over the tiles, operands entering the sum in its
    accumulator type and the sum leaving in the result's (f16 sums in f32, rounded once); a
    scaled FP8 product's sum times 2^log2_scale before it leaves (exact in f32: only an
    exponent moves, the products of two FP8 values being far from f32's range ends); with f16
    partials (`ipu.partials = f16`) the sum kept in f16 chunk by chunk (`sum_in_half_partials`).
    `into` writes the product straight into an output array (a vertex group's view of its
    buffer: for a matmul whose k is cut over tiles that is a partial sum as large as every
    operand together, and copying a new result into it cost BERT-base a tenth of a run)."""

    def __init__(self, operand: np.dtype, result: np.dtype, log2_scale: int = 0, partials: str | None = None):
        self.result = result
        self.enter, self.leave = accumulation(operand, result)
        self.half_partials = partials == "f16"
        self.scale = np.float32(2.0**log2_scale)
        self.exact = operand == result and self.enter(np.zeros(0, operand)).dtype == result  # no cast on either side

    def __call__(self, lhs: np.ndarray, rhs: np.ndarray) -> np.ndarray:
        if self.half_partials:
            return sum_in_half_partials(self.enter(lhs), self.enter(rhs)).astype(self.result)
        product = np.matmul(self.enter(lhs), self.enter(rhs))
        return self.leave(product * self.scale if self.scale != 1 else product)

    def into(self, lhs: np.ndarray, rhs: np.ndarray, out: np.ndarray) -> bool:
        """np.matmul(lhs, rhs, out=out) when that gives the bytes `self(lhs, rhs)` would:
        no cast between, and `out`'s matrices laid out as a new result's (row-major, rows
        dense) — numpy picks BLAS or its own loop, whose sums round differently, by each
        matrix's strides. False, having written nothing, otherwise."""
        dense = (out.shape[-1] * out.itemsize, out.itemsize)
        if not self.exact or out.dtype != self.result or out.strides[-2:] != dense:
            return False
        np.matmul(lhs, rhs, out=out)
        return True


def _shared_operand(op, lhs, rhs, maps, batch, m, n, k, element_type, unsigned, extents) -> tuple[ir.Value, list[int]] | None:
    """A batched product one of whose operands is the same for every batch index (torch-mlir's
    `nn.Linear` on a batch of sequences: `batch_matmul(x, broadcast(W))`) as one matmul on the
    batch folded into the other operand's rows (or columns), so the shared operand exists
    once instead of once per batch index. Returns the product and its loops; None otherwise."""
    rhs_source, rhs_dims = _broadcast_source(rhs, maps[1])
    lhs_source, lhs_dims = _broadcast_source(lhs, maps[0])
    rank = len(batch) + 1
    out_type = ir.RankedTensorType(op.results[0].type).element_type
    if not set(batch) & set(rhs_dims) and set(batch) <= set(maps[0]):  # x @ W: (B*M, K) x (K, N)
        a = tb.collapse(tb.relayout(lhs, maps[0], batch + m + k, element_type, unsigned), [list(range(rank)), [rank]])
        b = tb.relayout(rhs_source, rhs_dims, k + n, element_type, unsigned)
        product = ipu.matmul(a, b, element_type=out_type).result
        shape = [extents[d] for d in batch + m + n]
        return tb.expand(product, [list(range(rank)), [rank]], shape), batch + m + n
    if not set(batch) & set(lhs_dims) and set(batch) <= set(maps[1]):  # W @ x: (M, K) x (K, B*N)
        a = tb.relayout(lhs_source, lhs_dims, m + k, element_type, unsigned)
        b = tb.collapse(tb.relayout(rhs, maps[1], k + batch + n, element_type, unsigned), [[0], list(range(1, rank + 1))])
        product = ipu.matmul(a, b, element_type=out_type).result
        shape = [extents[d] for d in m + batch + n]
        return tb.expand(product, [[0], list(range(1, rank + 1))], shape), m + batch + n
    return None


def _broadcast_source(value: ir.Value, dims: list[int]) -> tuple[ir.Value, list[int]]:
    """The tensor `value` copies along more dimensions (a `linalg.broadcast`, or a
    `linalg.generic` yielding its one input through a projected permutation) and the loops of
    its dimensions given `dims`, the loops of `value`'s; `value` and `dims` if it is no such
    copy."""
    if not isinstance(value, ir.OpResult):
        return value, dims
    op = value.owner
    name = op.operation.name
    if name == "linalg.broadcast":
        added = set(ir.DenseI64ArrayAttr(op.attributes["dimensions"]))
        return op.operands[0], [d for i, d in enumerate(dims) if i not in added]
    if name != "linalg.generic" or len(op.operands) != 2 or len(op.results) != 1:
        return value, dims
    body = list(op.regions[0].blocks[0].operations)
    block = op.regions[0].blocks[0]
    if len(body) != 1 or list(body[0].operands) != [block.arguments[0]]:
        return value, dims
    source_map, result_map = (_dims_of(ir.AffineMapAttr(a).value) for a in ir.ArrayAttr(op.attributes["indexing_maps"]))
    if source_map is None or result_map is None or len(result_map) != len(dims):
        return value, dims
    return op.operands[0], [dims[result_map.index(loop)] for loop in source_map]


def _dims_of(amap: ir.AffineMap) -> list[int] | None:
    """The loop of each result of a projected permutation, or None."""
    dims = [expr.position if isinstance(expr, ir.AffineDimExpr) else None for expr in amap.results]
    return dims if None not in dims and len(set(dims)) == len(dims) else None
