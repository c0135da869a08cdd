"""Reads at affine coordinates of the loop indices, rewritten into inputs read through an
indexing map (part of `ipu-index-to-iota`, before the loop indices become iota inputs).

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

A window read the same way (torch-mlir's `max_pool2d_with_indices` finds each window's arg-max
in a generic extracting `%padded[0, c, 2 * oh + kh, 2 * ow + kw]`: a gather as large as the
windows, 636,812 bytes a tile for full-size ResNet-50's first pool) becomes the window map
`(.., oh, ow, kh, kw) -> (0, c, oh * 2 + kh, ow * 2 + kw)` that ipu-plan places like a
convolution's. Upstream MLIR has no reverse op on tensors below TOSA (whose lowering is this same generic).
On a constant weight (ConvTranspose2d in inference), ipu-fold-constants then computes it.
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import tensor

MAX_REVERSED = 16  # longest dimension reversed by slices; the IR grows by one slice per element

_Coordinate = tuple[ir.AffineExpr, bool]  # (its indexing expression, the dimension read backwards)


def rewrite_affine_reads(module: ir.Operation) -> None:
    generics: list[ir.OpView] = []

    def collect(op: ir.Operation) -> ir.WalkResult:
        if op.name == "linalg.generic":
            generics.append(op.opview)
        return ir.WalkResult.ADVANCE

    module.walk(collect)
    for generic in generics:
        for extract in [op for op in generic.regions[0].blocks[0].operations if op.operation.name == "tensor.extract"]:
            coordinates = _read_coordinates(extract, generic)
            if coordinates is not None:
                generic = _rewrite(generic, extract, coordinates)


def _read_coordinates(extract: ir.OpView, generic: ir.OpView) -> list[_Coordinate] | None:
    """Each coordinate of `extract` as (affine expression of the loops, backwards) if it reads
    a tensor from outside `generic` as an indexing map can: a loop `d`, a loop backwards over
    the whole dimension `size - 1 - d` (the expression is then `d`, on the reversed tensor), a
    window `a * d + b * e`, or 0 on a unit dimension; no loop in two coordinates. Else None."""
    source, *values = extract.operands
    owner = source.owner
    if (isinstance(owner, ir.Block) and owner == generic.regions[0].blocks[0]) or (
        not isinstance(owner, ir.Block) and owner.operation.parent == generic.operation
    ):
        return None
    sizes = ir.RankedTensorType(source.type).shape
    coordinates, used = [], []
    for value, size in zip(values, sizes):
        form = _affine_form(value)
        if form is None:
            return None
        terms, offset = form
        terms = {loop: factor for loop, factor in terms.items() if factor}
        used += list(terms)
        if not terms and offset == 0 and size == 1:
            coordinates.append((ir.AffineConstantExpr.get(0), False))
        elif len(terms) == 1 and next(iter(terms.values())) == -1 and offset == size - 1 and size <= MAX_REVERSED:
            coordinates.append((ir.AffineDimExpr.get(next(iter(terms))), True))
        elif 1 <= len(terms) <= 2 and offset == 0 and all(factor > 0 for factor in terms.values()):
            expr = None
            for loop, factor in terms.items():
                term = ir.AffineDimExpr.get(loop) if factor == 1 else ir.AffineDimExpr.get(loop) * factor
                expr = term if expr is None else expr + term
            coordinates.append((expr, False))
        else:
            return None
    return coordinates if len(set(used)) == len(used) else None


def _affine_form(value: ir.Value) -> tuple[dict[int, int], int] | None:
    """`value` as ({loop: factor}, offset) if it is an affine function of `linalg.index`es."""
    owner = value.owner
    if isinstance(owner, ir.Block):
        return None
    name = owner.operation.name
    if name == "linalg.index":
        return {ir.IntegerAttr(owner.attributes["dim"]).value: 1}, 0
    constant = _constant(value)
    if constant is not None:
        return {}, constant
    if name not in ("arith.addi", "arith.subi", "arith.muli"):
        return None
    forms = [_affine_form(operand) for operand in owner.operands]
    if None in forms:
        return None
    (left, left_offset), (right, right_offset) = forms
    if name == "arith.muli":
        if left and right:
            return None  # a product of loops
        (terms, offset), factor = (forms[0], right_offset) if not right else (forms[1], left_offset)
        return {loop: f * factor for loop, f in terms.items()}, offset * factor
    sign = 1 if name == "arith.addi" else -1
    terms = dict(left)
    for loop, factor in right.items():
        terms[loop] = terms.get(loop, 0) + sign * factor
    return terms, left_offset + sign * right_offset


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
    read = ir.AffineMap.get(n_dims, 0, [expr for expr, _ in coordinates])
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


def with_inputs(generic: ir.OpView, values: list[ir.Value], maps: list[ir.AffineMap]) -> tuple[ir.Operation, list[ir.BlockArgument]]:
    """`generic` rebuilt with `values` as extra inputs read through `maps` (after its own
    inputs), its body moved over and its results replaced; the new op and the block arguments
    of the added inputs. `generic` is erased."""
    num_outputs = len(generic.results)
    operands = list(generic.operands)
    inputs, outputs = operands[: len(operands) - num_outputs], operands[len(operands) - num_outputs :]
    old_maps = list(ir.ArrayAttr(generic.attributes["indexing_maps"]))
    attributes = {name: generic.attributes[name] for name in generic.attributes}
    new_maps = old_maps[: len(inputs)] + [ir.AffineMapAttr.get(m) for m in maps] + old_maps[len(inputs) :]
    attributes["indexing_maps"] = ir.ArrayAttr.get(new_maps)
    attributes["operandSegmentSizes"] = ir.DenseI32ArrayAttr.get([len(inputs) + len(values), num_outputs])
    with generic.location, ir.InsertionPoint(generic):
        new = ir.Operation.create(
            "linalg.generic",
            results=[r.type for r in generic.results],
            operands=inputs + values + outputs,
            attributes=attributes,
            regions=1,
        )
    old_block = generic.regions[0].blocks[0]
    old_args = list(old_block.arguments)
    added = [ir.RankedTensorType(v.type).element_type for v in values]
    arg_types = [a.type for a in old_args[: len(inputs)]] + added + [a.type for a in old_args[len(inputs) :]]
    block = new.regions[0].blocks.append(*arg_types, arg_locs=[generic.location] * len(arg_types))
    new_args = list(block.arguments)
    for old, replacement in zip(old_args, new_args[: len(inputs)] + new_args[len(inputs) + len(values) :]):
        old.replace_all_uses_with(replacement)
    for op in list(old_block.operations):
        block.append(op.operation)
    for old, replacement in zip(generic.results, new.results):
        old.replace_all_uses_with(replacement)
    generic.operation.erase()
    return new, new_args[len(inputs) : len(inputs) + len(values)]
