"""Serial splits: contractions too big for one pass over the tiles, computed in pieces.

When no cut of an `ipu.matmul` or `ipu.conv` over the tiles keeps each tile's working set
within the planner's budget, poplin splits it serially; `ipu-plan` does the same before it
plans: the op becomes pieces along one output dimension (a matmul's rows or columns, a
convolution's output channels, in whole groups for a grouped one, or images), each small
enough for a one-pass plan, joined by `tensor.concat`. The fewest pieces that fit win; among
cuts with that many, the one the cost model prices lowest (pieces of sizes differing by one at
most). The pieces are ordinary ops: planned, scheduled and laid out in memory like any other,
so IR grows with the number of pieces, not with tiles.

Before (gc200, memory-fraction 0.6):

    %c = "ipu.matmul"(%a, %b) : (tensor<2048x2048xf32>, tensor<2048x2048xf32>) -> tensor<2048x2048xf32>

After (two pieces of rows; two of columns cost the same, and ties go to the outer dimension):

    %a0 = tensor.extract_slice %a[0, 0] [1024, 2048] [1, 1] : tensor<2048x2048xf32> to tensor<1024x2048xf32>
    %c0 = "ipu.matmul"(%a0, %b) : (tensor<1024x2048xf32>, tensor<2048x2048xf32>) -> tensor<1024x2048xf32>
    %a1 = tensor.extract_slice %a[1024, 0] [1024, 2048] [1, 1] : tensor<2048x2048xf32> to tensor<1024x2048xf32>
    %c1 = "ipu.matmul"(%a1, %b) : (tensor<1024x2048xf32>, tensor<2048x2048xf32>) -> tensor<1024x2048xf32>
    %c = tensor.concat dim(0) %c0, %c1 : (tensor<1024x2048xf32>, tensor<1024x2048xf32>) -> tensor<2048x2048xf32>
"""

from __future__ import annotations

import functools
from collections.abc import Callable

from mlir import ir
from mlir.dialects import tensor

from ipu_mlir.dialects.ops import SerialCut, record_of, space_of
from ipu_mlir.dialects.ops.space import Space
from ipu_mlir.target.diagnostics import op_error

Fits = Callable[[Space], "tuple[int, tuple[int, ...]] | None"]  # cycles and blocks, None: no cut fits


def split_oversized(function: ir.OpView, fits: Fits, budget: int) -> None:
    """Splits every compute op of `function` with serial cuts (its record's `serial_cuts`: matmuls
    and convolutions) that `fits` finds no cut over the tiles for within `budget` bytes per tile."""
    for op in list(function.regions[0].blocks[0].operations):
        if record_of(op) and record_of(op).serial_cuts(op) and fits(space_of(op)) is None:
            _split(op, fits, budget)


def _split(op: ir.OpView, fits: Fits, budget: int) -> None:
    cuts = [cut for cut in record_of(op).serial_cuts(op) if cut.extent > 1 and _admitted(space_of(op), cut)]
    options = [(*found, cut.result_dim, cut) for cut in cuts if (found := _fewest_pieces(op, cut, fits))]
    if not options:
        raise op_error(
            op,
            f"does not fit in {budget} bytes per tile however it is cut, even computed serially in pieces of one row, "
            f"column, channel or group (see ipu-plan memory-fraction)",
        )
    pieces, _, _, cut = min(options, key=lambda option: option[:3])
    _rewrite(op, cut, pieces)


def _admitted(space: Space, cut: SerialCut) -> bool:
    """Whether the op's space admits cutting the loop of `cut`'s result dimension into
    pieces of one unit (then of any number of units): a serial piece is a cut of that loop, and
    a loop the record keeps whole stays whole here too."""
    loop = space.result[cut.result_dim]
    return space.block_refusal(loop, space.extents[loop] // cut.extent) is None


def _fewest_pieces(op: ir.OpView, cut: SerialCut, fits: Fits) -> tuple[int, int] | None:
    """The fewest pieces along `cut` whose largest fits, and the cycles of all of them: pieces
    double until one count fits, then a bisection finds the fewest (smaller pieces fit if
    larger ones do)."""

    @functools.cache  # the bisection ends on a count it has already tried
    def cycles(pieces: int) -> int | None:
        trial = _piece(op, cut, 0, -(-cut.extent // pieces))
        estimate = fits(space_of(trial))
        _erase_piece(trial, cut)
        return None if estimate is None else estimate[0] * pieces

    low, high = 1, 2  # low: known not to fit
    while cycles(min(high, cut.extent)) is None:
        if high >= cut.extent:
            return None
        low, high = high, 2 * high
    high = min(high, cut.extent)
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (low, middle) if cycles(middle) is not None else (middle, high)
    return high, cycles(high)


def _piece(op: ir.OpView, cut: SerialCut, start: int, size: int) -> ir.OpView:
    """The op on units [start, start + size) of `cut`'s dimension, built before `op`."""
    with ir.InsertionPoint(op), op.location:
        operands = list(op.operation.operands)
        for operand, dim, unit in cut.slices:
            source = ir.RankedTensorType(operands[operand].type)
            offsets, sizes = [0] * source.rank, list(source.shape)
            offsets[dim], sizes[dim] = start * unit, size * unit
            sliced = ir.RankedTensorType.get(sizes, source.element_type)
            operands[operand] = tensor.ExtractSliceOp(
                sliced,
                operands[operand],
                [],
                [],
                [],
                ir.DenseI64ArrayAttr.get(offsets),
                ir.DenseI64ArrayAttr.get(sizes),
                ir.DenseI64ArrayAttr.get([1] * source.rank),
            ).result
        return record_of(op).rebuild(op, operands, cut, size)


def _erase_piece(piece: ir.OpView, cut: SerialCut) -> None:
    slices = [piece.operation.operands[operand].owner for operand, _, _ in cut.slices]  # its tensor.extract_slice ops
    piece.operation.erase()
    for sliced in slices:
        sliced.operation.erase()


def _rewrite(op: ir.OpView, cut: SerialCut, pieces: int) -> None:
    bounds = [cut.extent * i // pieces for i in range(pieces + 1)]  # sizes differ by one at most
    results = [_piece(op, cut, start, end - start).result for start, end in zip(bounds, bounds[1:])]
    with ir.InsertionPoint(op), op.location:
        joined = tensor.ConcatOp(op.results[0].type, cut.result_dim, results).result
    op.results[0].replace_all_uses_with(joined)
    op.operation.erase()
