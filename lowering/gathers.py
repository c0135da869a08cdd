"""Embedding lookups as torch-mlir exports them, rewritten to `ipu.gather` (part of
`ipu-convert-to-ipu`).

`nn.Embedding` (and `index_select` on rows) becomes a generic over (n.., d) whose body reads a
table captured from outside:

    %r = linalg.generic {maps = [(n.., d) -> (n..), (n.., d) -> (n.., d)]} ins(%ids) outs(%e) {
    ^bb0(%id: i64, %out: f32):
      %row = arith.index_cast %id : i64 to index
      %col = linalg.index k : index            (or an iota input, after ipu-index-to-iota)
      cf.assert ..., "index must be smaller than dim size"
      %x = tensor.extract %table[%row, %col] : tensor<VxDxf32>
      linalg.yield %x : f32
    }

It becomes `ipu.gather(%table, %checked, %rows)`: `%checked` is a generic over the indices
keeping the body's bounds checks (the simulator runs them) and yielding the index; `%rows` is
the iota of table rows.

Any other `tensor.extract %t[%i, %j, ..]` from a tensor captured from outside, at coordinates
the body computes from its inputs (torch-mlir's interpolate, adaptive pooling with
non-dividing sizes, GroupNorm's per-channel parameters), is a gather at computed coordinates.
The generic is split in three: a generic over the same loops (all of them, parallel) computes
the flat coordinate `((i * d1) + j) * d2 + ..` of every point from the same inputs; an
`ipu.gather` reads `%t`, seen as a one-column table `tensor<N x 1>`, at those coordinates (so
it is planned and cut like any lookup: each tile reads the table rows it holds); the generic
itself reads the gathered values as an input instead of extracting. Coordinates that depend on
an accumulator (a reduction's `outs`) stay in the body, which ipu-convert-to-ipu refuses.
"""

from __future__ import annotations

import numpy as np
from mlir import ir

from ipu_mlir.dialects import ipu
from ipu_mlir.dialects.ops import tensor_builders as tb
from ipu_mlir.dialects.ops.space import loop_extents

from .affine_reads import with_inputs


def rewrite_embedding_lookups(block: ir.Block) -> None:
    for op in list(block.operations):
        if op.operation.name == "linalg.generic":
            match = _match(op)
            if match is not None:
                _rewrite(op, *match)


def rewrite_computed_gathers(block: ir.Block) -> None:
    for op in list(block.operations):
        if op.operation.name == "linalg.generic":
            extracts = [inner for inner in op.regions[0].blocks[0].operations if _computed_extract(inner, op)]
            if extracts:
                _split_gathers(op, extracts)


def _computed_extract(inner: ir.OpView, generic: ir.OpView) -> bool:
    """A `tensor.extract` from a tensor captured from outside at coordinates computed from the
    inputs (and scalar constants) only."""
    if inner.operation.name != "tensor.extract" or _inside(inner.operands[0], generic):
        return False
    return _coordinate_ops(generic, list(inner.operands)[1:]) is not None


def _coordinate_ops(generic: ir.OpView, values: list[ir.Value]) -> list[ir.OpView] | None:
    """The body ops `values` are computed from, in body order, or None if they read an output's
    block argument or a value from outside that is not a scalar constant."""
    block = generic.regions[0].blocks[0]
    num_inputs = len(generic.operands) - len(generic.results)
    needed: set = set()
    pending = list(values)
    while pending:
        value = pending.pop()
        owner = value.owner
        if isinstance(owner, ir.Block):
            if owner != block or value.arg_number >= num_inputs:
                return None
            continue
        if owner.operation.parent != generic.operation:
            if owner.name != "arith.constant" or isinstance(owner.results[0].type, ir.ShapedType):
                return None
            continue
        if owner not in needed:
            needed.add(owner)
            pending.extend(owner.operands)
    return [op for op in block.operations if op.operation in needed]


def _split_gathers(generic: ir.OpView, extracts: list[ir.OpView]) -> None:
    extents = loop_extents(generic)
    loops = len(extents)
    column = ir.AffineMap.get(loops, 0, [ir.AffineDimExpr.get(d) for d in range(loops)] + [ir.AffineConstantExpr.get(0)])
    with generic.location, ir.InsertionPoint(generic):
        gathered = [_gather(generic, extract, extents) for extract in extracts]
    _, arguments = with_inputs(generic, gathered, [column] * len(gathered))
    for extract, argument in zip(extracts, arguments):
        extract.results[0].replace_all_uses_with(argument)
        extract.operation.erase()  # the coordinate ops left in the body are dead: canonicalize erases them


def _gather(generic: ir.OpView, extract: ir.OpView, extents: tuple[int, ...]) -> ir.Value:
    """`extract`'s values at every point of the loops, as `tensor<extents.. x 1>`."""
    source, *coordinates = extract.operands
    source_type = ir.RankedTensorType(source.type)
    size = int(np.prod(source_type.shape))
    flat = ir.IntegerType.get_signless(32 if size < 2**31 else 64)
    rank = source_type.rank
    table = tb.unsqueeze(source, {0, 1} if rank == 0 else {rank})
    if rank > 1:
        table = tb.collapse(table, [list(range(rank)), [rank]])
    row_type = ir.RankedTensorType.get([size], flat)
    iota = ir.DenseElementsAttr.get(np.arange(size, dtype=np.dtype(f"i{flat.width // 8}")), type=row_type)
    rows = ir.Operation.create("arith.constant", results=[row_type], attributes={"value": iota}).results[0]
    return ipu.gather(table, _flat_coordinates(generic, coordinates, source_type.shape, flat, extents), rows).result


def _flat_coordinates(generic: ir.OpView, coordinates: list[ir.Value], sizes: list[int], flat: ir.Type, extents) -> ir.Value:
    """A generic over `generic`'s loops computing `coordinates` from its inputs, flattened
    row-major over `sizes`, as `flat` integers."""
    num_inputs = len(generic.operands) - len(generic.results)
    inputs = list(generic.operands)[:num_inputs]
    maps = [ir.AffineMapAttr(m).value for m in ir.ArrayAttr(generic.attributes["indexing_maps"])][:num_inputs]
    ops = _coordinate_ops(generic, coordinates)
    old = generic.regions[0].blocks[0]

    def body(*arguments: ir.Value) -> ir.Value:
        mapping = dict(zip(list(old.arguments)[:num_inputs], arguments))
        for op in ops:
            clone = op.operation.clone()
            for position, operand in enumerate(clone.operands):
                clone.operands[position] = mapping.get(operand, operand)
            mapping.update(zip(op.results, clone.results))
        index = ir.IndexType.get()
        total = _index_constant(0)
        for coordinate, size in zip(coordinates, sizes):
            scaled = ir.Operation.create("arith.muli", results=[index], operands=[total, _index_constant(size)]).results[0]
            total = ir.Operation.create("arith.addi", results=[index], operands=[scaled, mapping.get(coordinate, coordinate)]).results[0]
        return ir.Operation.create("arith.index_cast", results=[flat], operands=[total]).results[0]

    init = ir.Operation.create("tensor.empty", results=[ir.RankedTensorType.get(list(extents), flat)]).results[0]
    return tb.generic(inputs, init, [*maps, ir.AffineMap.get_identity(len(extents))], body)


def _index_constant(value: int) -> ir.Value:
    return ir.Operation.create(
        "arith.constant", results=[ir.IndexType.get()], attributes={"value": ir.IntegerAttr.get(ir.IndexType.get(), value)}
    ).results[0]


def _match(generic: ir.OpView) -> tuple[ir.Value, int, ir.Value] | None:
    """(the table, the input holding the indices, the body's row number before its cast to
    index) if `generic` is an embedding lookup."""
    if len(generic.results) != 1 or any("parallel" not in str(k) for k in ir.ArrayAttr(generic.attributes["iterator_types"])):
        return None
    block = generic.regions[0].blocks[0]
    yielded = block.operations[len(block.operations) - 1].operands[0]
    extract = yielded.owner
    if isinstance(extract, ir.Block) or extract.operation.name != "tensor.extract" or len(extract.operands) != 3:
        return None
    table, row, column = extract.operands
    if _inside(table, generic) or not isinstance(table.type, ir.RankedTensorType) or ir.RankedTensorType(table.type).rank != 2:
        return None
    maps = [ir.AffineMapAttr(m).value for m in ir.ArrayAttr(generic.attributes["indexing_maps"])]
    loops = maps[0].n_dims
    if maps[-1] != ir.AffineMap.get_identity(loops):
        return None
    found = _row_of_argument(row, block, generic)
    if found is None or _column_loop(column, block, generic, maps) != loops - 1:
        return None
    ids, row_value = found
    if maps[ids] != ir.AffineMap.get(loops, 0, [ir.AffineDimExpr.get(i) for i in range(loops - 1)]):
        return None  # the indices must be read at (n..) of the loops (n.., d)
    if not isinstance(ir.RankedTensorType(generic.operands[ids].type).element_type, ir.IntegerType):
        return None
    if not isinstance(row_value.type, ir.IntegerType):
        return None
    return table, ids, row_value


def _inside(value: ir.Value, generic: ir.OpView) -> bool:
    owner = value.owner
    if isinstance(owner, ir.Block):
        return owner == generic.regions[0].blocks[0]
    return owner.operation.parent == generic.operation


def _cast_of_argument(value: ir.Value, block: ir.Block) -> int | None:
    """The input number whose block argument `value` is an `index_cast` of, else None."""
    cast = value.owner
    if isinstance(cast, ir.Block) or cast.operation.name != "arith.index_cast":
        return None
    source = cast.operands[0]
    if not isinstance(source, ir.BlockArgument) or source.owner != block:
        return None
    return source.arg_number


def _row_of_argument(value: ir.Value, block: ir.Block, generic: ir.OpView) -> tuple[int, ir.Value] | None:
    """(the input, the integer row) when `value` is an `index_cast` of the input's block argument
    or of a value the body computes from that argument and scalar constants alone: torch-mlir's
    `x[idx]` wraps a negative index first (`select(idx < 0, idx + rows, idx)`)."""
    cast = value.owner
    if isinstance(cast, ir.Block) or cast.operation.name != "arith.index_cast":
        return None
    row = cast.operands[0]
    direct = _cast_of_argument(value, block)
    if direct is not None:
        return direct, row
    ops = _coordinate_ops(generic, [row])
    if ops is None:
        return None
    arguments = {
        operand.arg_number for op in ops for operand in op.operands if isinstance(operand.owner, ir.Block) and operand.owner == block
    }
    return (arguments.pop(), row) if len(arguments) == 1 else None


def _column_loop(value: ir.Value, block: ir.Block, generic: ir.OpView, maps: list[ir.AffineMap]) -> int | None:
    """The loop `value` is the index of: `linalg.index L`, or an index_cast of an iota input
    read through `(..) -> (dL)` (what ipu-index-to-iota leaves)."""
    owner = value.owner
    if not isinstance(owner, ir.Block) and owner.operation.name == "linalg.index":
        return ir.IntegerAttr(owner.attributes["dim"]).value
    argument = _cast_of_argument(value, block)
    if argument is None or len(maps[argument].results) != 1 or not isinstance(maps[argument].results[0], ir.AffineDimExpr):
        return None
    constant = generic.operands[argument].owner
    if isinstance(constant, ir.Block) or constant.operation.name != "arith.constant":
        return None
    attr = constant.attributes["value"]
    if not isinstance(attr, ir.DenseElementsAttr) or attr.is_splat:
        return None
    values = np.array(attr)
    return maps[argument].results[0].position if np.array_equal(values, np.arange(values.size)) else None


def _rewrite(generic: ir.OpView, table: ir.Value, ids: int, row_value: ir.Value) -> None:
    block = generic.regions[0].blocks[0]
    indices = generic.operands[ids]
    element = ir.IntegerType(row_value.type)
    rows = ir.RankedTensorType(table.type).shape[0]
    with generic.location, ir.InsertionPoint(generic):
        checked = _row_numbers(generic, block, ids, indices, row_value)
        row_type = ir.RankedTensorType.get([rows], element)
        iota = ir.DenseElementsAttr.get(np.arange(rows, dtype=np.dtype(f"i{element.width // 8}")), type=row_type)
        row_numbers = ir.Operation.create("arith.constant", results=[row_type], attributes={"value": iota}).results[0]
        lookup = ipu.gather(table, checked, row_numbers)
    generic.results[0].replace_all_uses_with(lookup.result)
    generic.operation.erase()


def _row_numbers(generic: ir.OpView, block: ir.Block, ids: int, indices: ir.Value, row_value: ir.Value) -> ir.Value:
    """The row each index reads: the indices through a generic running what the body computes
    from the index before it extracts (a negative index's wrap) and its `cf.assert`s on them
    (the simulator runs them), or the indices themselves if the body does neither."""
    asserts = [op for op in block.operations if op.operation.name == "cf.assert"]
    needed: set = set()
    pending = [row_value]
    checked = True
    for check in asserts:  # a check on other operands is not a bounds check of the lookup
        reads = _coordinate_ops(generic, list(check.operands))
        if reads is None or any(isinstance(v.owner, ir.Block) and v.arg_number != ids for op in reads for v in op.operands):
            checked = False
    if checked:
        pending += [v for a in asserts for v in a.operands]
    while pending:
        value = pending.pop()
        owner = value.owner
        if isinstance(owner, ir.Block) or owner.operation.parent != generic.operation or owner.operation in needed:
            continue
        needed.add(owner.operation)
        pending.extend(owner.operands)
    if not needed and not (checked and asserts):
        return indices
    index_type = ir.RankedTensorType(indices.type)
    rank = index_type.rank
    result_type = ir.RankedTensorType.get(index_type.shape, row_value.type)
    identity = ir.AffineMapAttr.get(ir.AffineMap.get_identity(rank))
    empty = ir.Operation.create("tensor.empty", results=[result_type], operands=[]).results[0]
    rows = ir.Operation.create(
        "linalg.generic",
        results=[result_type],
        operands=[indices, empty],
        attributes={
            "indexing_maps": ir.ArrayAttr.get([identity, identity]),
            "iterator_types": ir.ArrayAttr.get([ir.Attribute.parse("#linalg.iterator_type<parallel>")] * rank),
            "operandSegmentSizes": ir.DenseI32ArrayAttr.get([1, 1]),
        },
        regions=1,
    )
    body = rows.regions[0].blocks.append(index_type.element_type, row_value.type, arg_locs=[generic.location] * 2)
    mapping = {block.arguments[ids]: body.arguments[0]}
    for op in block.operations:
        if op.operation in needed or (checked and op.operation.name == "cf.assert"):
            clone = op.operation.clone(ip=ir.InsertionPoint(body))
            for index, operand in enumerate(clone.operands):
                if operand in mapping:
                    clone.operands[index] = mapping[operand]
            mapping.update(zip(op.results, clone.results))
    ir.Operation.create("linalg.yield", operands=[mapping.get(row_value, row_value)], ip=ir.InsertionPoint(body))
    return rows.results[0]
