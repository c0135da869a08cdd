"""A plugin adding a compute op to ipu-mlir: `example.batch_reduce_matmul`, sum_b lhs[b] @ rhs[b].

docs/extending.md walks through this file. Load it with
`ipu-opt --load-pass-plugin=batch_reduce.py`, or import it before making a context: it
registers the op's IRDL dialect (`example.irdl.mlir`), the op's record (conversion from
`linalg.batch_reduce_matmul`, iteration space, codelet, numpy kernel, cost) and a pass with
options, `example-annotate-cycles`. test/python/test_extending.py runs it end to end.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from mlir import ir
from mlir.dialects import func

from ipu_mlir.dialects import ipu, register_irdl
from ipu_mlir.dialects.ops import REGISTRY, ComputeOp, Example, Piece, register_op
from ipu_mlir.dialects.ops.convert import add_init
from ipu_mlir.dialects.ops.registry import dtype_of, static_tensor
from ipu_mlir.dialects.ops.semantics import accumulation
from ipu_mlir.dialects.ops.space import SUM, Access, Space, shape
from ipu_mlir.lowering import ModulePass, register_pass
from ipu_mlir.target import Target, cost_model, target_of
from ipu_mlir.target.diagnostics import op_error

# 1. The op: its IRDL definition, loaded into every context made from now on.
register_irdl(Path(__file__).with_name("example.irdl.mlir"))

OP_NAME = "example.batch_reduce_matmul"


def batch_reduce_matmul(lhs: ir.Value, rhs: ir.Value, element_type: ir.Type) -> ir.Value:
    """The op, built at the current insertion point and location."""
    m, n = ir.RankedTensorType(lhs.type).shape[1], ir.RankedTensorType(rhs.type).shape[2]
    result = ir.RankedTensorType.get([m, n], element_type)
    return ir.Operation.create(OP_NAME, results=[result], operands=[lhs, rhs]).results[0]


# 2. Its record: everything the compiler and the simulator need to know about it.
@register_op
class BatchReduceMatmul(ComputeOp):
    name = OP_NAME
    converts = frozenset({"linalg.batch_reduce_matmul"})

    def convert(self, op: ir.OpView) -> ir.Value | None:
        """ipu-convert-to-ipu calls this for each `linalg.batch_reduce_matmul`; None leaves it
        to be generalized (operands of two element types: a cast would be needed first)."""
        lhs, rhs, init = op.operands
        if ir.RankedTensorType(lhs.type).element_type != ir.RankedTensorType(rhs.type).element_type:
            return None
        product = batch_reduce_matmul(lhs, rhs, ir.RankedTensorType(init.type).element_type)
        return add_init(product, init)  # linalg accumulates onto its `outs`

    def verify(self, op: ir.OpView) -> None:
        lhs, rhs = static_tensor(op, op.operands[0].type, "lhs"), static_tensor(op, op.operands[1].type, "rhs")
        result = static_tensor(op, op.results[0].type, "result")
        if (lhs.rank, rhs.rank, result.rank) != (3, 3, 2):
            raise op_error(op, f"expects rank-3 lhs and rhs and a rank-2 result, got ranks {lhs.rank}, {rhs.rank}, {result.rank}")
        (b, m, k), (b2, k2, n) = lhs.shape, rhs.shape
        if (b, k) != (b2, k2) or list(result.shape) != [m, n]:
            raise op_error(op, f"expects B x M x K and B x K x N operands giving M x N, got {lhs}, {rhs} and {result}")
        if lhs.element_type != rhs.element_type:
            raise op_error(op, f"expects lhs and rhs of the same element type, got {lhs.element_type} and {rhs.element_type}")

    def extents(self, op: ir.OpView) -> tuple[int, ...]:
        (b, m, k), n = shape(op.operands[0]), shape(op.operands[1])[2]
        return (m, n, b, k)  # loops 0 m, 1 n (the result's), 2 b, 3 k (both summed)

    def space(self, op: ir.OpView) -> Space:
        m, n, b, k = self.extents(op)
        return Space(
            op,
            (m, n, b, k),
            reductions=(2, 3),
            splittable=(True, True, True, True),
            operands=(
                (Access("dim", b, 2), Access("dim", m, 0), Access("dim", k, 3)),  # lhs[b, m, k]
                (Access("dim", b, 2), Access("dim", k, 3), Access("dim", n, 1)),  # rhs[b, k, n]
            ),
            result=(0, 1),
            element_type=ir.RankedTensorType(op.results[0].type).element_type,
            combiner=SUM,  # partial sums of a cut b or k are added in a second superstep
        )

    def codelet(self, op: ir.OpView, name: str, piece: Piece, ip: ir.InsertionPoint, loc: ir.Location) -> None:
        """The op itself, on the pieces a tile holds."""
        operand_type = ir.RankedTensorType(op.operands[0].type).element_type
        result_type = ir.RankedTensorType(op.results[0].type).element_type
        inputs = [ir.RankedTensorType.get(list(s), operand_type) for s in piece.shapes]
        function = ipu.codelet_function(name, inputs, [ir.RankedTensorType.get(list(piece.box), result_type)], loc=loc, ip=ip)
        block = function.regions[0].blocks[0]
        with ir.InsertionPoint(block), loc:
            func.ReturnOp([batch_reduce_matmul(block.arguments[0], block.arguments[1], result_type)])

    def kernel(self, op: ir.OpView, batch: int):
        """Arrays carry `batch` leading tile axes: (*tiles, b, m, k) x (*tiles, b, k, n)."""
        enter, leave = accumulation(dtype_of(op, op.operands[0]), dtype_of(op, op.results[0]))

        def kernel(lhs: np.ndarray, rhs: np.ndarray) -> np.ndarray:
            products = np.matmul(enter(lhs), enter(rhs))
            return leave(products.sum(axis=-3, dtype=products.dtype))  # numpy would widen small integers

        return kernel

    def examples(self) -> list[Example]:
        """Small programs using the op, for test/python/test_conformance.py's checks: sizes that
        divide nothing, an accumulating `outs`, integers."""
        return [
            Example("odd-f32", EXAMPLE.format(b=3, m=5, k=7, n=9, t="f32")),
            Example("i32", EXAMPLE.format(b=2, m=4, k=6, n=3, t="i32")),
        ]

    def work(self, op: ir.OpView, extents: tuple[int, ...], target: Target) -> int:
        """b m n k multiply-adds on the matrix unit; each operand read once, the result
        written once (not b times, as b separate matmuls would)."""
        m, n, b, k = extents
        element_bytes = cost_model.dtype_info(ir.ShapedType(op.operands[0].type).element_type).bytes
        reads, writes = b * (m * k + k * n) * element_bytes, m * n * element_bytes
        # One contraction over b k inputs per output: m positions, n output channels.
        return cost_model.contraction_work(1, m, b * k, n, reads, writes, ir.ShapedType(op.operands[0].type).element_type, target)


EXAMPLE = """
func.func @main(%a: tensor<{b}x{m}x{k}x{t}>, %w: tensor<{b}x{k}x{n}x{t}>, %c: tensor<{m}x{n}x{t}>) -> tensor<{m}x{n}x{t}> {{
  %r = linalg.batch_reduce_matmul ins(%a, %w : tensor<{b}x{m}x{k}x{t}>, tensor<{b}x{k}x{n}x{t}>)
         outs(%c : tensor<{m}x{n}x{t}>) -> tensor<{m}x{n}x{t}>
  return %r : tensor<{m}x{n}x{t}>
}}
"""


# 3. A pass with options: what the cost model thinks of each compute op, ours included.
@register_pass
@dataclass
class AnnotateCycles(ModulePass):
    """Record on every compute op the cycles of computing it on one tile of the target.

    Reads the op registry, so it knows every compute op, a plugin's too.

    Before:

        %0 = "example.batch_reduce_matmul"(%a, %b) : (tensor<4x32x32xf32>, tensor<4x32x32xf32>) -> tensor<32x32xf32>

    After, with `example-annotate-cycles{target=mini.toml}`:

        %0 = "example.batch_reduce_matmul"(%a, %b) {example.cycles = 21896 : i64} : ...
    """

    name = "example-annotate-cycles"

    target: str = field(default="", metadata={"help": "target name or .toml path (default: the module's ipu.target)"})
    overhead: bool = field(default=True, metadata={"help": "include the vertex overhead"})

    def run(self, module: ir.Operation) -> None:
        target = target_of(module, self.target or None)
        i64 = ir.IntegerType.get_signless(64)
        found = []
        module.walk(lambda op: (found.append(op), ir.WalkResult.ADVANCE)[1] if op.name in REGISTRY else ir.WalkResult.ADVANCE)
        for op in found:
            view = op.opview
            record = REGISTRY[op.name]
            cycles = record.work(view, record.extents(view), target)
            cycles += cost_model.VERTEX_OVERHEAD_CYCLES if self.overhead else 0
            op.attributes["example.cycles"] = ir.IntegerAttr.get(i64, cycles)


def reference(lhs: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    """numpy's answer, for the tests."""
    return np.einsum("bmk,bkn->mn", lhs.astype(np.float64), rhs.astype(np.float64))


__all__ = ["OP_NAME", "AnnotateCycles", "BatchReduceMatmul", "batch_reduce_matmul", "reference"]
