"""`ipu.scatter`: row scatters, `result[positions[n], :] (+)= updates[n, :]` (index_put,
scatter, scatter_add, index_add).

Loops (r, d, n): the result's rows and columns, and the updates, folded. Planned like
`ipu.gather` with the roles turned round: a tile holding rows `[lo, hi)` (it knows `lo` from
its piece of `rows`, an iota cut with the result) folds each of its updates whose position is
in that range into its rows, in the order of n, and pieces cut along n are combined by the
scheduler's second stage. Each tile's work is linear in its updates, where the generic
`ipu-convert-tm-tensor` used to build compared every update with every position. The fold is
`ufunc.at` in update order: the same bytes on every run.
"""

from __future__ import annotations

import math

import numpy as np
from mlir import ir

from ipu_mlir.target import Target, cost_model
from ipu_mlir.target.diagnostics import op_error
from ipu_mlir.target.element_types import identity_value, mlir_name

from .gather import piece_codelet
from .registry import ComputeOp, Example, Kernel, Piece, dtype_of, register_op, shape_text, static_tensor
from .space import COMBINERS, Access, Space, shape

# The combiners a scatter folds with, as numpy ufuncs (`ufunc.at` folds in index order).
# `arith.maximumf` / `minimumf` propagate NaN, as np.maximum does; the `num` forms skip it.
UFUNCS = {
    "arith.addf": np.add,
    "arith.addi": np.add,
    "arith.mulf": np.multiply,
    "arith.muli": np.multiply,
    "arith.maximumf": np.maximum,
    "arith.minimumf": np.minimum,
    "arith.maxnumf": np.fmax,
    "arith.minnumf": np.fmin,
    "arith.maxsi": np.maximum,
    "arith.minsi": np.minimum,
}


def scatter(updates: ir.Value, positions: ir.Value, rows: ir.Value, combiner: str) -> ir.Value:
    """`ipu.scatter` at the current insertion point and location: `R x D` for `R` rows."""
    updates_type = ir.RankedTensorType(updates.type)
    result = ir.RankedTensorType.get([ir.RankedTensorType(rows.type).shape[0], updates_type.shape[1]], updates_type.element_type)
    return ir.Operation.create(
        "ipu.scatter", results=[result], operands=[updates, positions, rows], attributes={"combiner": ir.StringAttr.get(combiner)}
    ).result


def combiner_of(op: ir.OpView) -> str:
    return ir.StringAttr(op.attributes["combiner"]).value


def identity(combiner: str, dtype: np.dtype):
    """The identity of `combiner` in `dtype` (COMBINERS' "min" / "max": the integer's extremes)."""
    value = COMBINERS[combiner]
    if value in ("min", "max"):
        return dtype.type(getattr(np.iinfo(dtype), value))
    return dtype.type(identity_value(mlir_name(dtype) or "", value))  # -inf: -448 in f8E4M3FN


@register_op
class Scatter(ComputeOp):
    name = "ipu.scatter"

    def verify(self, op: ir.OpView) -> None:
        updates = static_tensor(op, op.operands[0].type, "updates")
        positions = static_tensor(op, op.operands[1].type, "positions")
        rows = static_tensor(op, op.operands[2].type, "rows")
        result = static_tensor(op, op.results[0].type, "result")
        if updates.rank != 2:
            raise op_error(op, f"expects updates of rank 2, got {updates}")
        if not isinstance(positions.element_type, ir.IntegerType) or rows.element_type != positions.element_type:
            raise op_error(op, f"expects integer positions and rows of one type, got {positions.element_type} and {rows.element_type}")
        if list(positions.shape) != [updates.shape[0]] or rows.rank != 1:
            raise op_error(op, f"expects one position per update ({updates.shape[0]}) and rows of rank 1, got {positions} and {rows}")
        expected = [rows.shape[0], updates.shape[1]]
        if list(result.shape) != expected or result.element_type != updates.element_type:
            raise op_error(op, f"expects result tensor<{shape_text(expected)}x{updates.element_type}>, got {result}")
        combiner = combiner_of(op)
        floats = isinstance(updates.element_type, ir.FloatType)
        if combiner not in UFUNCS or combiner.endswith("f") != floats:
            raise op_error(op, f"expects a combiner of {updates.element_type} among {', '.join(sorted(UFUNCS))}, got '{combiner}'")

    def extents(self, op: ir.OpView) -> tuple[int, ...]:
        count, columns = shape(op.operands[0])
        return (shape(op.operands[2])[0], columns, count)

    def space(self, op: ir.OpView) -> Space:
        rows, columns, count = self.extents(op)
        return Space(
            op,
            (rows, columns, count),
            reductions=(2,),
            splittable=(True,) * 3,
            operands=(
                (Access("dim", count, 2), Access("dim", columns, 1)),
                (Access("dim", count, 2),),
                (Access("dim", rows, 0),),
            ),
            result=(0, 1),
            element_type=ir.RankedTensorType(op.results[0].type).element_type,
            combiner=combiner_of(op),
        )

    def examples(self) -> list[Example]:
        """torch-mlir's scatters (tm_tensor.scatter, generic form) folding with several combiners,
        odd row counts, duplicate positions among the updates."""
        cases = {"add-f32": ("f32", "arith.addf"), "add-i32": ("i32", "arith.addi"), "max-i32": ("i32", "arith.maxsi"),
                 "min-f16": ("f16", "arith.minimumf"), "mul-f32": ("f32", "arith.mulf")}  # fmt: skip
        return [Example(name, _SCATTER.format(t=t, combine=combine), bounds=((1, 7),)) for name, (t, combine) in cases.items()]

    def codelet(self, op: ir.OpView, name: str, piece: Piece, ip: ir.InsertionPoint, loc: ir.Location) -> None:
        piece_codelet(op, name, piece, ip, loc, lambda *arguments: scatter(*arguments, combiner_of(op)))

    def kernel(self, op: ir.OpView, batch: int) -> Kernel:
        dtype = dtype_of(op, op.results[0])
        fold, start = UFUNCS[combiner_of(op)], identity(combiner_of(op), dtype)

        def scatter_rows(updates: np.ndarray, positions: np.ndarray, rows: np.ndarray) -> np.ndarray:
            tiles = np.broadcast_shapes(updates.shape[:batch], positions.shape[:batch], rows.shape[:batch])
            count, columns = updates.shape[batch:]
            held_rows, tile_count = rows.shape[-1], math.prod(tiles)
            first = np.broadcast_to(rows[..., :1], (*tiles, 1)).reshape(tile_count, 1).astype(np.int64)  # rows hold lo, lo+1, ...
            local = np.broadcast_to(positions, (*tiles, count)).reshape(tile_count, count).astype(np.int64) - first
            held = (local >= 0) & (local < held_rows)
            # Tile t's rows are t * held_rows + local in one flat result; the mask keeps each
            # tile's updates in their order, so ufunc.at folds them as the loop would.
            flat = (local + np.arange(tile_count, dtype=np.int64)[:, None] * held_rows)[held]
            values = np.broadcast_to(updates, (*tiles, count, columns)).reshape(tile_count, count, columns)[held]
            result = np.full((tile_count * held_rows, columns), start, dtype)
            fold.at(result, flat, values.astype(dtype, copy=False))
            return result.reshape(*tiles, held_rows, columns)

        return scatter_rows

    def work(self, op: ir.OpView, extents: tuple[int, ...], target: Target) -> int:
        """Assumption: the box's result filled with the identity, a range test per update (two
        compares), then each of its elements loaded, combined and stored (three instructions)
        at the element-wise rate: a row of columns is contiguous at its computed address."""
        rows, columns, count = extents
        element = ir.RankedTensorType(op.results[0].type).element_type
        index = ir.RankedTensorType(op.operands[1].type).element_type
        return (
            cost_model.elementwise_work(rows * columns, 1, element, target)
            + cost_model.elementwise_work(count, 2, index, target)
            + cost_model.elementwise_work(count * columns, 3, element, target)
        )


# The conformance examples (test/python/test_conformance.py): 9 rows of 5 updates into 7 rows.
_SCATTER = """
func.func @main(%x: tensor<7x5x{t}>, %rows: tensor<9xi64>, %values: tensor<9x5x{t}>) -> tensor<7x5x{t}> {{
  %r = "tensor.expand_shape"(%rows) <{{reassociation = [[0, 1]], static_output_shape = array<i64: 9, 1>}}>
         : (tensor<9xi64>) -> tensor<9x1xi64>
  %v = "tensor.expand_shape"(%values) <{{reassociation = [[0], [1, 2]], static_output_shape = array<i64: 9, 1, 5>}}>
         : (tensor<9x5x{t}>) -> tensor<9x1x5x{t}>
  %s = "tm_tensor.scatter"(%v, %r, %x)
         <{{dimension_map = array<i64: 0>, operandSegmentSizes = array<i32: 2, 1>, unique_indices = false}}> ({{
  ^bb0(%u: {t}, %o: {t}):
    %c = "{combine}"(%o, %u) : ({t}, {t}) -> {t}
    "tm_tensor.yield"(%c) : ({t}) -> ()
  }}) : (tensor<9x1x5x{t}>, tensor<9x1xi64>, tensor<7x5x{t}>) -> tensor<7x5x{t}>
  return %s : tensor<7x5x{t}>
}}
"""
