"""Serial splits: contractions too big for one pass over the tiles, computed in pieces.

When no cut of an `ipu.matmul` or `ipu.conv` over the tiles keeps each tile's working set
within the planner's budget, poplin splits it serially; `ipu-plan` does the same before it
plans: the op becomes pieces along one output dimension (a matmul's rows or columns, a
convolution's output channels or images), each small enough for a one-pass plan, joined by
`tensor.concat`. The fewest pieces that fit win; among cuts with that many, the one the cost
model prices lowest (pieces of sizes differing by one at most). The pieces are ordinary ops: planned, scheduled and laid out in memory
like any other, so IR grows with the number of pieces, not with tiles.

Before (gc200, memory-fraction 0.6):

    %c = "ipu.matmul"(%a, %b) : (tensor<2048x2048xf32>, tensor<2048x2048xf32>) -> tensor<2048x2048xf32>

After:

    %b0 = tensor.extract_slice %b[0, 0] [2048, 1024] [1, 1] : tensor<2048x2048xf32> to tensor<2048x1024xf32>
    %c0 = "ipu.matmul"(%a, %b0) : (tensor<2048x2048xf32>, tensor<2048x1024xf32>) -> tensor<2048x1024xf32>
    %b1 = tensor.extract_slice %b[0, 1024] [2048, 1024] [1, 1] : tensor<2048x2048xf32> to tensor<2048x1024xf32>
    %c1 = "ipu.matmul"(%a, %b1) : (tensor<2048x2048xf32>, tensor<2048x1024xf32>) -> tensor<2048x1024xf32>
    %c = tensor.concat dim(1) %c0, %c1 : (tensor<2048x1024xf32>, tensor<2048x1024xf32>) -> tensor<2048x2048xf32>
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from mlir import ir
from mlir.dialects import tensor

from ipu_mlir.dialects import ipu
from ipu_mlir.dialects.diagnostics import op_error

from .iteration import Space, space_of

Fits = Callable[[Space], "tuple[int, tuple[int, ...]] | None"]  # cycles and blocks, None: no cut fits


@dataclass(frozen=True)
class _Cut:
    """Pieces of an op along one dimension: `operand` is sliced along `operand_dim`, the result
    concatenated along `result_dim` (both of extent `extent`)."""

    operand: int
    operand_dim: int
    result_dim: int
    extent: int


def split_oversized(function: ir.OpView, fits: Fits, budget: int) -> None:
    """Splits every matmul and convolution of `function` that `fits` finds no cut for within
    `budget` bytes per tile."""
    for op in list(function.regions[0].blocks[0].operations):
        if isinstance(op, ipu.MatmulOp | ipu.ConvOp) and fits(space_of(op)) is None:
            _split(op, fits, budget)


def _cuts(op: ipu.MatmulOp | ipu.ConvOp) -> list[_Cut]:
    shape = lambda value: list(ir.RankedTensorType(value.type).shape)  # noqa: E731
    if isinstance(op, ipu.MatmulOp):
        lhs, rhs = shape(op.lhs), shape(op.rhs)
        return [_Cut(1, len(rhs) - 1, len(lhs) - 1, rhs[-1]), _Cut(0, len(lhs) - 2, len(lhs) - 2, lhs[-2])]
    (n, *_), (f, *_) = shape(op.input), shape(op.filter)
    cuts = [_Cut(1, 0, 1, f)] if op.groups == 1 else []  # grouped: input channels would follow
    return cuts + [_Cut(0, 0, 0, n)]


def _split(op: ipu.MatmulOp | ipu.ConvOp, fits: Fits, budget: int) -> None:
    options = [(*found, cut.result_dim, cut) for cut in _cuts(op) if cut.extent > 1 and (found := _fewest_pieces(op, cut, fits))]
    if not options:
        raise op_error(op, f"does not fit in {budget} bytes per tile however it is cut, even computed serially in pieces of one row, column or channel (see ipu-plan memory-fraction)")
    pieces, _, _, cut = min(options)
    _rewrite(op, cut, pieces)


def _fewest_pieces(op: ipu.MatmulOp | ipu.ConvOp, cut: _Cut, fits: Fits) -> tuple[int, int] | None:
    """The fewest pieces along `cut` whose largest fits, and the cycles of all of them: pieces
    double until one count fits, then a bisection finds the fewest (smaller pieces fit if
    larger ones do)."""

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


def _piece(op: ipu.MatmulOp | ipu.ConvOp, cut: _Cut, start: int, size: int) -> ir.OpView:
    """The op on elements [start, start + size) of `cut`'s dimension, built before `op`."""
    with ir.InsertionPoint(op), op.location:
        operands = list(op.operation.operands)
        source = ir.RankedTensorType(operands[cut.operand].type)
        offsets, sizes = [0] * source.rank, list(source.shape)
        offsets[cut.operand_dim], sizes[cut.operand_dim] = start, size
        sliced = ir.RankedTensorType.get(sizes, source.element_type)
        operands[cut.operand] = tensor.ExtractSliceOp(
            sliced, operands[cut.operand], [], [], [], ir.DenseI64ArrayAttr.get(offsets), ir.DenseI64ArrayAttr.get(sizes), ir.DenseI64ArrayAttr.get([1] * source.rank)
        ).result
        element_type = ir.RankedTensorType(op.result.type).element_type
        if isinstance(op, ipu.MatmulOp):
            return ipu.matmul(*operands, element_type=element_type)
        return ipu.conv(*operands, strides=op.strides, dilations=op.dilations, padding=op.padding, groups=op.groups, element_type=element_type)


def _erase_piece(piece: ir.OpView, cut: _Cut) -> None:
    sliced = piece.operation.operands[cut.operand].owner  # the piece's tensor.extract_slice
    piece.operation.erase()
    sliced.operation.erase()


def _rewrite(op: ipu.MatmulOp | ipu.ConvOp, cut: _Cut, pieces: int) -> None:
    bounds = [cut.extent * i // pieces for i in range(pieces + 1)]  # sizes differ by one at most
    results = [_piece(op, cut, start, end - start).result for start, end in zip(bounds, bounds[1:])]
    with ir.InsertionPoint(op), op.location:
        joined = tensor.ConcatOp(op.result.type, cut.result_dim, results).result
    op.result.replace_all_uses_with(joined)
    op.operation.erase()
