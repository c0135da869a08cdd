"""Reads at affine coordinates of the loop indices, rewritten into the copy they are (part of
`ipu-index-to-iota`, before the loop indices become iota inputs).

torch-mlir flips a convolution's kernel for the input's gradient (`aten.convolution_backward`,
`ConvTranspose2d`; `aten.flip` and TOSA's `reverse` lower the same way) as a generic reading
the weight captured from outside at `(d1, d0, 2 - d2, 2 - d3)`:

    %r = linalg.generic {maps = [(d0, d1, d2, d3) -> (d0, d1, d2, d3)]} outs(%e) {
      %i = linalg.index 0 ... %l = linalg.index 3
      %h = arith.subi %c2, %k : index
      %w = arith.subi %c2, %l : index
      %x = tensor.extract %weight[%j, %i, %h, %w] : tensor<512x512x3x3xf32>
      linalg.yield %x : f32
    }

Left to ipu-index-to-iota and ipu-convert-to-ipu it becomes a gather through a materialized
index as large as the weight (2,359,296 coordinates for ResNet's 512-channel 3x3 kernels), too
big for any cut. It is a copy: each coordinate is a loop (`d`) or a loop read backwards
(`size - 1 - d`). The dimensions read backwards are reversed first, as the concatenation of
their size-1 slices in reverse order (a kernel's 3 or 7; a dimension longer than
`MAX_REVERSED` is left to the gather, so the IR stays small), then the generic reads the
reversed tensor as an input through the permutation `(d0, d1, d2, d3) -> (d1, d0, d2, d3)`.
Upstream MLIR has no reverse op on tensors below TOSA (whose lowering is this same generic).
On a constant weight (ConvTranspose2d in inference), ipu-fold-constants then computes it.
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import tensor

from .index_to_iota import with_inputs

MAX_REVERSED = 16  # longest dimension reversed by slices; the IR grows by one slice per element

_Coordinate = tuple[int, bool]  # (loop, read backwards)


def rewrite_reversed_reads(module: ir.Operation) -> None:
    generics: list[ir.OpView] = []

    def collect(op: ir.Operation) -> ir.WalkResult:
        if op.name == "linalg.generic":
            generics.append(op.opview)
        return ir.WalkResult.ADVANCE

    module.walk(collect)
    for generic in generics:
        for extract in [op for op in generic.regions[0].blocks[0].operations if op.operation.name == "tensor.extract"]:
            coordinates = _copy_coordinates(extract, generic)
            if coordinates is not None:
                generic = _rewrite(generic, extract, coordinates)


def _copy_coordinates(extract: ir.OpView, generic: ir.OpView) -> list[_Coordinate] | None:
    """Each coordinate of `extract` as (loop, backwards) if it reads a tensor from outside
    `generic` at distinct loops, each forwards (`d`) or backwards over the whole dimension
    (`size - 1 - d`), else None."""
    source, *values = extract.operands
    owner = source.owner
    if (isinstance(owner, ir.Block) and owner == generic.regions[0].blocks[0]) or (
        not isinstance(owner, ir.Block) and owner.operation.parent == generic.operation
    ):
        return None
    sizes = ir.RankedTensorType(source.type).shape
    coordinates = []
    for value, size in zip(values, sizes):
        form = _loop_form(value)
        if form is None:
            return None
        loop, sign, offset = form
        if (sign, offset) == (1, 0):
            coordinates.append((loop, False))
        elif (sign, offset) == (-1, size - 1) and size <= MAX_REVERSED:
            coordinates.append((loop, True))
        else:
            return None
    loops = [loop for loop, _ in coordinates]
    return coordinates if len(set(loops)) == len(loops) else None


def _loop_form(value: ir.Value) -> tuple[int, int, int] | None:
    """`value` as (loop, sign, offset) if it is `sign * linalg.index loop + offset`."""
    owner = value.owner
    if isinstance(owner, ir.Block):
        return None
    name = owner.operation.name
    if name == "linalg.index":
        return ir.IntegerAttr(owner.attributes["dim"]).value, 1, 0
    if name not in ("arith.addi", "arith.subi"):
        return None
    lhs, rhs = owner.operands
    left, right = _constant(lhs), _constant(rhs)
    if left is not None and right is None and (form := _loop_form(rhs)) is not None:
        loop, sign, offset = form
        return (loop, -sign, left - offset) if name == "arith.subi" else (loop, sign, left + offset)
    if right is not None and left is None and (form := _loop_form(lhs)) is not None:
        loop, sign, offset = form
        return loop, sign, offset - right if name == "arith.subi" else offset + right
    return None


def _constant(value: ir.Value) -> int | None:
    owner = value.owner
    if isinstance(owner, ir.Block) or owner.operation.name != "arith.constant" or not isinstance(value.type, ir.IndexType):
        return None
    return ir.IntegerAttr(owner.attributes["value"]).value


def _rewrite(generic: ir.OpView, extract: ir.OpView, coordinates: list[_Coordinate]) -> ir.OpView:
    """`generic` reading `extract`'s source, reversed where `coordinates` say, as an input."""
    n_dims = ir.AffineMapAttr(ir.ArrayAttr(generic.attributes["indexing_maps"])[0]).value.n_dims
    source = extract.operands[0]
    with generic.location, ir.InsertionPoint(generic):
        for dim, (_, backwards) in enumerate(coordinates):
            if backwards:
                source = _reversed(source, dim)
    read = ir.AffineMap.get(n_dims, 0, [ir.AffineDimExpr.get(loop) for loop, _ in coordinates])
    new, (argument,) = with_inputs(generic, [source], [read])  # moves the body, `extract` with it
    extract.results[0].replace_all_uses_with(argument)
    _erase_dead(extract.operation)
    return new.opview


def _reversed(value: ir.Value, dim: int) -> ir.Value:
    """`value` with dimension `dim` in reverse order: its size-1 slices, concatenated last first."""
    value_type = ir.RankedTensorType(value.type)
    shape = list(value_type.shape)
    if shape[dim] == 1:
        return value
    sizes = [*shape[:dim], 1, *shape[dim + 1 :]]
    slice_type = ir.RankedTensorType.get(sizes, value_type.element_type)
    slices = []
    for position in reversed(range(shape[dim])):
        offsets = [0] * len(shape)
        offsets[dim] = position
        slices.append(tensor.ExtractSliceOp(slice_type, value, [], [], [], offsets, sizes, [1] * len(shape)).result)
    return tensor.ConcatOp(value_type, dim, slices).result


def _erase_dead(op: ir.Operation) -> None:
    """`op` and, recursively, the ops computing its operands that are used nowhere else."""
    operands = list(op.operands)
    op.erase()
    for operand in operands:
        owner = operand.owner
        if not isinstance(owner, ir.Block) and not any(True for _ in operand.uses) and owner.name != "arith.constant":
            _erase_dead(owner.operation)
