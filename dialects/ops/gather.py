"""`ipu.gather`: row gathers, `table[indices[n..], :]` (embedding lookups).

Loops (n.., d, v): the indices' dimensions, the table's columns, and its rows, summed. Planned
like a contraction over the rows, as poplibs' `multiSlice` plans a lookup: a tile holding rows
`[lo, hi)` (it knows `lo` from its piece of `rows`, an iota cut with the table) gives the rows
of the indices in its range and zeros elsewhere, and the pieces' results are summed. A table
larger than a tile is cut by rows; each tile then receives only the indices and sends only its
rows' share of the result. `ipu-convert-to-ipu` builds it from torch-mlir's embedding generic
(`tensor.extract %table[index_cast(%ids), d]` in a generic's body).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from mlir import ir
from mlir.dialects import func

from ipu_mlir.target import Target, cost_model
from ipu_mlir.target.diagnostics import op_error

from .. import ipu
from .compiled import compiled
from .registry import ComputeOp, Example, Kernel, Piece, register_op, shape_text, static_tensor
from .space import SUM, Access, Space, shape


@register_op
class Gather(ComputeOp):
    name = "ipu.gather"

    def verify(self, op: ipu.GatherOp) -> None:
        table = static_tensor(op, op.table.type, "table")
        indices = static_tensor(op, op.indices.type, "indices")
        rows = static_tensor(op, op.rows.type, "rows")
        result = static_tensor(op, op.result.type, "result")
        if table.rank != 2:
            raise op_error(op, f"expects a table of rank 2, got {table}")
        if not isinstance(indices.element_type, ir.IntegerType) or rows.element_type != indices.element_type:
            raise op_error(op, f"expects integer indices and rows of one type, got {indices.element_type} and {rows.element_type}")
        if list(rows.shape) != [table.shape[0]]:
            raise op_error(op, f"expects rows of shape {table.shape[0]} (one per table row), got {shape_text(rows.shape)}")
        expected = [*indices.shape, table.shape[1]]
        if list(result.shape) != expected or result.element_type != table.element_type:
            raise op_error(op, f"expects result tensor<{shape_text(expected)}x{table.element_type}>, got {result}")

    def extents(self, op: ir.OpView) -> tuple[int, ...]:
        rows, columns = shape(op.operands[0])
        return (*shape(op.operands[1]), columns, rows)

    def space(self, op: ir.OpView) -> Space:
        rows, columns = shape(op.operands[0])
        indices = shape(op.operands[1])
        n = len(indices)
        return Space(
            op,
            self.extents(op),
            reductions=(n + 1,),
            splittable=(True,) * (n + 2),
            operands=(
                (Access("dim", rows, n + 1), Access("dim", columns, n)),
                tuple(Access("dim", size, loop) for loop, size in enumerate(indices)),
                (Access("dim", rows, n + 1),),
            ),
            result=tuple(range(n + 1)),
            element_type=ir.RankedTensorType(op.results[0].type).element_type,
            combiner=SUM,
        )

    def examples(self) -> list[Example]:
        """Embedding lookups as torch-mlir writes them (odd table sizes, f16, i32 indices), and a
        gather at coordinates the body computes (a one-column table)."""
        return [
            Example("embedding", _LOOKUP.format(ids="2x3", index="i64", rows=11, columns=5, t="f32", d0="d0, d1", d="d0, d1, d2", n=2,
                                                  parallel='"parallel", "parallel", "parallel"'), bounds=((1, 11),)),
            Example("embedding-f16-i32", _LOOKUP.format(ids="7", index="i32", rows=40, columns=3, t="f16", d0="d0", d="d0, d1", n=1,
                                                          parallel='"parallel", "parallel"'), bounds=((1, 40),)),
            Example("computed", _COMPUTED, bounds=((1, 9),)),
        ]  # fmt: skip

    def codelet(self, op: ir.OpView, name: str, piece: Piece, ip: ir.InsertionPoint, loc: ir.Location) -> None:
        piece_codelet(op, name, piece, ip, loc, lambda *arguments: ipu.gather(*arguments).result)

    def kernel(self, op: ir.OpView, batch: int) -> Kernel:
        def gather(table: np.ndarray, indices: np.ndarray, rows: np.ndarray) -> np.ndarray:
            tiles = np.broadcast_shapes(table.shape[:batch], indices.shape[:batch], rows.shape[:batch])
            count, columns = table.shape[batch:]
            points = indices.shape[batch:]
            # int64 indices copied once, by the reshape of their broadcast, not again by astype
            wanted = np.broadcast_to(indices, tiles + points).reshape(math.prod(tiles), -1).astype(np.int64, copy=False)
            first = np.broadcast_to(rows[..., 0], tiles).reshape(-1).astype(np.int64, copy=False)  # rows hold lo, lo+1, ...
            bits = np.dtype(f"u{table.dtype.itemsize}")  # moved as bits: any element type, its bytes kept
            result = np.empty((*wanted.shape, columns), bits)
            try:  # the table's tiles as one axis, without a copy
                tables = np.reshape(table, (-1, count, columns), copy=False)
            except ValueError:
                tables = np.ascontiguousarray(table).reshape(-1, count, columns)
            which = np.broadcast_to(np.arange(len(tables)).reshape(table.shape[:batch]), tiles).reshape(-1)
            compiled(_lookup)(tables.view(bits), which, wanted, first, result)
            return result.view(table.dtype).reshape(*tiles, *points, columns)

        return gather

    def work(self, op: ir.OpView, extents: tuple[int, ...], target: Target) -> int:
        """Assumption: a range test per index (two compares), then one element moved (or
        zeroed) per result element, at the element-wise rate."""
        *points, columns, _ = extents
        lookups = math.prod(points)
        table_type = ir.RankedTensorType(op.operands[0].type).element_type
        index_type = ir.RankedTensorType(op.operands[1].type).element_type
        return cost_model.elementwise_work(lookups * columns, 1, table_type, target) + cost_model.elementwise_work(
            lookups, 2, index_type, target
        )


def _lookup(tables, which, wanted, first, result):  # pragma: no cover - compiled by numba (dialects/ops/compiled.py)
    """result[t, p] = tables[which[t]][wanted[t, p] - first[t]] where tile t holds that row,
    else zeros: only the rows a tile holds are read (GPT-2's 1,408 tiles hold 1/23 of the
    indices each: take_along_axis on the table broadcast to every tile took 25 ms), in one
    pass (numpy's masks, nonzero and fancy indexing took 1 ms for a 1,280-tile lookup of 64
    indices)."""
    count, columns = tables.shape[1], tables.shape[2]
    for t in range(wanted.shape[0]):
        table = tables[which[t]]
        for p in range(wanted.shape[1]):
            local = wanted[t, p] - first[t]
            if 0 <= local < count:
                for c in range(columns):
                    result[t, p, c] = table[local, c]
            else:
                for c in range(columns):
                    result[t, p, c] = 0


# The conformance examples (test/python/test_conformance.py).
_LOOKUP = """
func.func @main(%table: tensor<{rows}x{columns}x{t}>, %ids: tensor<{ids}x{index}>) -> tensor<{ids}x{columns}x{t}> {{
  %e = tensor.empty() : tensor<{ids}x{columns}x{t}>
  %r = linalg.generic {{indexing_maps = [affine_map<({d}) -> ({d0})>, affine_map<({d}) -> ({d})>], iterator_types = [{parallel}]}}
         ins(%ids : tensor<{ids}x{index}>) outs(%e : tensor<{ids}x{columns}x{t}>) {{
  ^bb0(%id: {index}, %out: {t}):
    %row = arith.index_cast %id : {index} to index
    %col = linalg.index {n} : index
    %x = tensor.extract %table[%row, %col] : tensor<{rows}x{columns}x{t}>
    linalg.yield %x : {t}
  }} -> tensor<{ids}x{columns}x{t}>
  return %r : tensor<{ids}x{columns}x{t}>
}}
"""
_COMPUTED = """
func.func @main(%t: tensor<9x4xf32>, %i: tensor<6xi64>) -> tensor<6x3xf32> {
  %e = tensor.empty() : tensor<6x3xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>],
                       iterator_types = ["parallel", "parallel"]} ins(%i : tensor<6xi64>) outs(%e : tensor<6x3xf32>) {
  ^bb0(%id: i64, %out: f32):
    %row = arith.index_cast %id : i64 to index
    %col = linalg.index 1 : index
    %one = arith.constant 1 : index
    %next = arith.addi %col, %one : index
    %x = tensor.extract %t[%row, %next] : tensor<9x4xf32>
    linalg.yield %x : f32
  } -> tensor<6x3xf32>
  return %r : tensor<6x3xf32>
}
"""


def piece_codelet(op: ir.OpView, name: str, piece: Piece, ip: ir.InsertionPoint, loc: ir.Location, body: Callable[..., ir.Value]) -> None:
    """The codelet `name` of `piece` of a one-result op whose codelet is the op itself on the
    pieces: `body(*arguments)` builds it (ipu.gather, ipu.scatter)."""
    types = [ir.RankedTensorType.get(list(s), ir.RankedTensorType(v.type).element_type) for s, v in zip(piece.shapes, op.operands)]
    result = ir.RankedTensorType.get(list(piece.box), ir.RankedTensorType(op.results[0].type).element_type)
    function = ipu.codelet_function(name, types, [result], loc=loc, ip=ip)
    with ir.InsertionPoint(function.regions[0].blocks[0]), loc:
        func.ReturnOp([body(*function.regions[0].blocks[0].arguments)])
