"""Slices at an offset the device computes (part of `ipu-convert-to-ipu`, from `scalars.py`).

A `tensor.extract_slice` or `tensor.insert_slice` whose offset along one dimension is a scalar
the program computes (an `scf.for`'s induction variable, carried as a 0-d counter, or any
0-d integer tensor) is Poplar's `popops::dynamicSlice` / `dynamicUpdate`
(graphcore/poplibs, include/popops/DynamicSlice.hpp): the offset is known only at run time, so
the tiles holding the result read the selected rows from wherever they live. Both become ops
the compiler already plans, moves and prices:

- `extract_slice`: the rows `[off, off + size)` of the source (its other dimensions sliced
  statically first, the dynamic one moved to the front) are an `ipu.gather` of a
  `tensor<N x R>` table at the indices `off + iota(size)`: planned like an embedding lookup
  (poplibs' `multiSlice`, whose single-offset form dynamicSlice is), each tile reading the
  rows it holds;
- `insert_slice` of full rows along the other dimensions: a generic over the destination
  selecting the update where the row number is in `[off, off + size)`, the update broadcast to
  every tile of the destination (a size-1 slice) or gathered at `row - off` (a larger one), as
  dynamicUpdate writes on every tile holding a region of the base; a partial row is first
  completed from the destination's row (a dynamic extract, a static insert).

Out of range: MLIR leaves a slice beyond its source undefined; poplibs' vertices wrap an offset
`>= numBaseElements` to 0 (lib/popops/codelets/DynamicSlice2d.cpp: `if (baseSlice >=
numBaseElements) baseSlice = 0`). Here the offset is checked on the device instead: the
generic computing the indices (or selecting the rows) carries a `cf.assert` at the slice's
location, which the simulator runs, so an out-of-range offset stops the run with that message.
An offset out of range known when compiling is refused then: by MLIR's verifier of a static
slice, or by ipu-convert-to-ipu's check of a `cf.assert` that always fails.
"""

from __future__ import annotations

import numpy as np
from mlir import ir
from mlir.dialects import tensor

from ipu_mlir.dialects import ipu
from ipu_mlir.dialects.ops import tensor_builders as tb

_DYNAMIC = ir.ShapedType.get_dynamic_size()


def dynamic_dimension(op: ir.OpView) -> int | None:
    """The one dimension whose offset is dynamic, if the slice is otherwise static with a unit
    stride there; else None (the slice stays, and ipu-convert-to-ipu refuses it)."""
    offsets = list(ir.DenseI64ArrayAttr(op.attributes["static_offsets"]))
    sizes = list(ir.DenseI64ArrayAttr(op.attributes["static_sizes"]))
    strides = list(ir.DenseI64ArrayAttr(op.attributes["static_strides"]))
    dynamic = [d for d, o in enumerate(offsets) if o == _DYNAMIC]
    if len(dynamic) != 1 or _DYNAMIC in sizes or _DYNAMIC in strides or strides[dynamic[0]] != 1:
        return None
    return dynamic[0]


def extract(op: ir.OpView, offset: ir.Value) -> ir.Value:
    """The value of the `extract_slice` `op`, its dynamic offset the 0-d integer tensor `offset`."""
    source = op.operands[0]
    k = dynamic_dimension(op)
    sizes = list(ir.DenseI64ArrayAttr(op.attributes["static_sizes"]))
    rows = _rows(source, k, sizes, list(ir.DenseI64ArrayAttr(op.attributes["static_offsets"])), _strides(op), offset, op.location)
    return _to_type(rows, sizes, ir.RankedTensorType(op.results[0].type))


def insert(op: ir.OpView, offset: ir.Value) -> ir.Value:
    """The value of the `insert_slice` `op`, its dynamic offset the 0-d integer tensor `offset`."""
    source, dest = op.operands[0], op.operands[1]
    k = dynamic_dimension(op)
    dest_type = ir.RankedTensorType(dest.type)
    shape = list(dest_type.shape)
    offsets = list(ir.DenseI64ArrayAttr(op.attributes["static_offsets"]))
    sizes = list(ir.DenseI64ArrayAttr(op.attributes["static_sizes"]))
    strides = _strides(op)
    update = _full_rank(source, sizes)
    whole = all(sizes[d] == shape[d] and offsets[d] == 0 and strides[d] == 1 for d in range(len(shape)) if d != k)
    if not whole:  # the destination's rows, the update inserted statically: full rows
        row_sizes = [sizes[k] if d == k else shape[d] for d in range(len(shape))]
        row_offsets = [0] * len(shape)
        row = _rows(dest, k, row_sizes, row_offsets, [1] * len(shape), offset, op.location)
        within = [0 if d == k else offsets[d] for d in range(len(shape))]
        update = tensor.InsertSliceOp(update, row, [], [], [], within, sizes, strides).result
    return _select_rows(dest, update, k, offset, op.location)


def extract_rows(source: ir.Value, offset: ir.Value, size: int, location: ir.Location) -> ir.Value:
    """`source[off : off + size]` along its first dimension (builders' entry: ipu-pipeline's loop)."""
    shape = list(ir.RankedTensorType(source.type).shape)
    rank = len(shape)
    return _rows(source, 0, [size, *shape[1:]], [0] * rank, [1] * rank, offset, location)


def update_rows(dest: ir.Value, update: ir.Value, offset: ir.Value, location: ir.Location) -> ir.Value:
    """`dest` with its rows `[off, off + size)` along the first dimension from `update`."""
    return _select_rows(dest, update, 0, offset, location)


def _strides(op: ir.OpView) -> list[int]:
    return list(ir.DenseI64ArrayAttr(op.attributes["static_strides"]))


def _rows(source, k, sizes, offsets, strides, offset, location) -> ir.Value:
    """`source[.., off : off + sizes[k], ..]` (the other dimensions as `sizes`, `offsets`,
    `strides` say), at full rank: an `ipu.gather` of the rows."""
    shape = list(ir.RankedTensorType(source.type).shape)
    rank = len(shape)
    n = shape[k]
    if any(d != k and (offsets[d], sizes[d], strides[d]) != (0, shape[d], 1) for d in range(rank)):
        static = [n if d == k else sizes[d] for d in range(rank)]
        at = [0 if d == k else offsets[d] for d in range(rank)]
        result = ir.RankedTensorType.get(static, ir.RankedTensorType(source.type).element_type)
        source = tensor.ExtractSliceOp(result, source, [], [], [], at, static, strides).result
        shape = static
    order = [k] + [d for d in range(rank) if d != k]
    front = tb.relayout(source, list(range(rank)), order, ir.RankedTensorType(source.type).element_type, unsigned=False)
    rest = [shape[d] for d in order[1:]]
    table = tb.collapse(front, [[0], list(range(1, rank))]) if rank > 1 else tb.unsqueeze(front, {1})
    size = sizes[k]
    indices = _indices(offset, size, n, location)
    gathered = ipu.gather(table, indices, _iota(n)).result
    return _restore(gathered, order, [size, *rest])


def _restore(gathered: ir.Value, order: list[int], shape: list[int]) -> ir.Value:
    """A gather's `tensor<rows x R>` as the tensor of axes `order` and `shape` it was cut from,
    its axes then put back in order."""
    rank = len(order)
    if rank == 1:
        return tb.collapse(gathered, [[0, 1]])
    moved = tb.expand(gathered, [[0], list(range(1, rank))], shape) if rank > 2 else gathered
    element = ir.RankedTensorType(gathered.type).element_type
    return tb.relayout(moved, order, list(range(rank)), element, unsigned=False)


def _indices(offset: ir.Value, size: int, n: int, location: ir.Location) -> ir.Value:
    """`off + iota(size)` as i64, with the check `0 <= off <= n - size` at `location`."""
    i64 = ir.IntegerType.get_signless(64)
    offset = _as_i64(offset)
    init = tensor.EmptyOp([size], i64).result
    maps = [ir.AffineMap.get(1, 0, []), ir.AffineMap.get_identity(1), ir.AffineMap.get_identity(1)]

    def body(off: ir.Value, position: ir.Value, _: ir.Value) -> ir.Value:
        _check(off, n - size, f"slice offset out of bounds: not in [0, {n - size}]", location)
        return _binary("arith.addi", off, position)

    return tb.generic([offset, _iota(size)], init, maps, body)


def _select_rows(dest: ir.Value, update: ir.Value, k: int, offset: ir.Value, location: ir.Location) -> ir.Value:
    """`dest` with its rows `[off, off + size)` along `k` from `update` (full rows)."""
    dest_type = ir.RankedTensorType(dest.type)
    shape, rank = list(dest_type.shape), dest_type.rank
    n, size = shape[k], ir.RankedTensorType(update.type).shape[k]
    identity = ir.AffineMap.get_identity(rank)
    row_of = ir.AffineMap.get(rank, 0, [ir.AffineDimExpr.get(k)])
    others = ir.AffineMap.get(rank, 0, [ir.AffineDimExpr.get(d) for d in range(rank) if d != k])
    if size == 1:
        rows, rows_map = tb.squeeze(update, {k}), others
    else:  # the update's row `row - off` at every row of the destination (clamped where unused)
        rows = _padded(update, k, n, offset)
        rows_map = identity
    offset = _checked(offset, n - size, location)
    init = tensor.EmptyOp(shape, dest_type.element_type).result
    maps = [identity, rows_map, ir.AffineMap.get(rank, 0, []), row_of, identity]

    def body(old: ir.Value, new: ir.Value, off: ir.Value, row: ir.Value, _: ir.Value) -> ir.Value:
        if size == 1:
            inside = _compare("eq", row, off)
        else:
            i1 = ir.IntegerType.get_signless(1)
            start = _compare("sge", row, off)
            end = _compare("slt", row, _binary("arith.addi", off, _constant(size)))
            inside = ir.Operation.create("arith.andi", results=[i1], operands=[start, end]).results[0]
        return ir.Operation.create("arith.select", results=[old.type], operands=[inside, new, old]).results[0]

    return tb.generic([dest, rows, offset, _iota(n)], init, maps, body)


def _checked(offset: ir.Value, largest: int, location: ir.Location) -> ir.Value:
    """The 0-d `offset` as i64 through a one-element generic checking `0 <= off <= largest`
    (once, not at every element of the destination)."""
    scalar = ir.AffineMap.get(0, 0, [])
    init = tensor.EmptyOp([], ir.IntegerType.get_signless(64)).result

    def body(off: ir.Value, _: ir.Value) -> ir.Value:
        _check(off, largest, f"slice offset out of bounds: not in [0, {largest}]", location)
        return off

    return tb.generic([_as_i64(offset)], init, [scalar, scalar], body)


def _padded(update: ir.Value, k: int, n: int, offset: ir.Value) -> ir.Value:
    """`update` (size rows along `k`) read at `clamp(row - off, 0, size - 1)` for each of `n`
    rows: a gather of its rows at computed indices."""
    update_type = ir.RankedTensorType(update.type)
    rank, size = update_type.rank, update_type.shape[k]
    order = [k] + [d for d in range(rank) if d != k]
    front = tb.relayout(update, list(range(rank)), order, update_type.element_type, unsigned=False)
    rest = [update_type.shape[d] for d in order[1:]]
    table = tb.collapse(front, [[0], list(range(1, rank))]) if rank > 1 else tb.unsqueeze(front, {1})
    i64 = ir.IntegerType.get_signless(64)
    init = tensor.EmptyOp([n], i64).result
    maps = [ir.AffineMap.get(1, 0, []), ir.AffineMap.get_identity(1), ir.AffineMap.get_identity(1)]

    def body(off: ir.Value, row: ir.Value, _: ir.Value) -> ir.Value:
        shifted = _binary("arith.subi", row, off)
        low = _binary("arith.maxsi", shifted, _constant(0))
        return _binary("arith.minsi", low, _constant(size - 1))

    indices = tb.generic([_as_i64(offset), _iota(n)], init, maps, body)
    gathered = ipu.gather(table, indices, _iota(size)).result
    return _restore(gathered, order, [n, *rest])


def _full_rank(value: ir.Value, sizes: list[int]) -> ir.Value:
    """`value` (a slice's tensor, maybe rank-reduced) with the unit dimensions it dropped."""
    shape = list(ir.RankedTensorType(value.type).shape)
    if shape == sizes:
        return value
    return tb.unsqueeze(value, _dropped(sizes, shape))


def _to_type(value: ir.Value, sizes: list[int], result: ir.RankedTensorType) -> ir.Value:
    """`value` (full rank, `sizes`) as the slice's result type (its unit dimensions dropped)."""
    if list(result.shape) == sizes:
        return value
    return tb.squeeze(value, _dropped(sizes, list(result.shape)))


def _dropped(sizes: list[int], kept: list[int]) -> set[int]:
    """The unit dimensions of `sizes` a rank-reduced `kept` leaves out (matched from the left,
    as MLIR infers them)."""
    dropped, j = set(), 0
    for d, size in enumerate(sizes):
        if j < len(kept) and kept[j] == size:
            j += 1
        else:
            dropped.add(d)
    return dropped


def _check(off: ir.Value, largest: int, message: str, location: ir.Location) -> None:
    """`cf.assert 0 <= off <= largest` at `location`."""
    i1 = ir.IntegerType.get_signless(1)
    low = _compare("sge", off, _constant(0))
    high = _compare("sle", off, _constant(largest))
    both = ir.Operation.create("arith.andi", results=[i1], operands=[low, high]).results[0]
    ir.Operation.create("cf.assert", operands=[both], attributes={"msg": ir.StringAttr.get(message)}, loc=location)


_PREDICATES = {"eq": 0, "slt": 2, "sle": 3, "sgt": 4, "sge": 5}


def _compare(predicate: str, a: ir.Value, b: ir.Value) -> ir.Value:
    i1, i64 = ir.IntegerType.get_signless(1), ir.IntegerType.get_signless(64)
    attribute = ir.IntegerAttr.get(i64, _PREDICATES[predicate])
    return ir.Operation.create("arith.cmpi", results=[i1], operands=[a, b], attributes={"predicate": attribute}).results[0]


def _binary(name: str, a: ir.Value, b: ir.Value) -> ir.Value:
    return ir.Operation.create(name, results=[a.type], operands=[a, b]).results[0]


def _constant(value: int) -> ir.Value:
    i64 = ir.IntegerType.get_signless(64)
    return ir.Operation.create("arith.constant", results=[i64], attributes={"value": ir.IntegerAttr.get(i64, value)}).results[0]


def _iota(size: int) -> ir.Value:
    type_ = ir.RankedTensorType.get([size], ir.IntegerType.get_signless(64))
    attribute = ir.DenseElementsAttr.get(np.arange(size, dtype=np.int64), type=type_)
    return ir.Operation.create("arith.constant", results=[type_], attributes={"value": attribute}).results[0]


def _as_i64(offset: ir.Value) -> ir.Value:
    """The 0-d integer tensor `offset` as i64 (sign-extended, as `index_cast` does)."""
    element = ir.IntegerType(ir.RankedTensorType(offset.type).element_type)
    if element.width == 64:
        return offset
    type_ = ir.RankedTensorType.get([], ir.IntegerType.get_signless(64))
    return ir.Operation.create("arith.extsi", results=[type_], operands=[offset]).results[0]
