"""The L1 output of `ipu-convert-to-ipu` made placeable (step 5 of convert_to_ipu.py's steps), and
the access rule the planner's indexing maps follow.

Slices inserted into a `tensor.empty` side by side become a `tensor.concat`; other reads of a
`tensor.empty` read a zero splat constant; rank-reducing slices become full-rank slices and
reshapes; each compute op's record normalizes it; a generic with several independent results
becomes one generic per result. Before fusion, keepdim reductions compute the squeezed tensor.
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import linalg, tensor

from ipu_mlir.dialects.ops import record_of
from ipu_mlir.dialects.ops import tensor_builders as tb


def access_ok(expr: ir.AffineExpr, size: int, window_ok: bool) -> bool:
    """A dim, a constant 0 on a unit dim, or (inputs only) a window `s * d_out + k * d_win`."""
    if isinstance(expr, ir.AffineDimExpr):
        return True
    if isinstance(expr, ir.AffineConstantExpr):
        return expr.value == 0 and size == 1
    if window_ok and isinstance(expr, ir.AffineAddExpr):
        return _scaled_dim(expr.lhs) and _scaled_dim(expr.rhs)
    return False


def _scaled_dim(expr: ir.AffineExpr) -> bool:
    if isinstance(expr, ir.AffineDimExpr):
        return True
    if isinstance(expr, ir.AffineMulExpr):
        terms = (expr.lhs, expr.rhs)
        return any(isinstance(t, ir.AffineDimExpr) for t in terms) and any(
            isinstance(t, ir.AffineConstantExpr) and t.value > 0 for t in terms
        )
    return False


def normalize_tensor_ops(block: ir.Block) -> None:
    # First the empties: turning inserts into a concat erases ops later in the block.
    for op in [op for op in block.operations if op.operation.name == "tensor.empty"]:
        with ir.InsertionPoint(op), op.location:
            if not _inserts_to_concat(op):
                _replace_empty_inputs(op)
    for op in list(block.operations):
        name = op.operation.name
        with ir.InsertionPoint(op), op.location:
            record = record_of(op)
            if record is not None:
                record.normalize(op.operation.opview)  # e.g. zero pads joining a convolution's padding
            if name == "tensor.extract_slice" and rank_drop(op) and len(op.operands) == 1:
                full = ir.RankedTensorType.get(_sizes(op), ir.RankedTensorType(op.results[0].type).element_type)
                whole = tensor.ExtractSliceOp(full, op.operands[0], [], [], [], *_static(op)).result
                op.results[0].replace_all_uses_with(tb.squeeze(whole, rank_drop(op)))
                op.operation.erase()
            elif name == "tensor.insert_slice" and rank_drop(op) and len(op.operands) == 2:
                source = tb.unsqueeze(op.operands[0], rank_drop(op))
                whole = tensor.InsertSliceOp(source, op.operands[1], [], [], [], *_static(op)).result
                op.results[0].replace_all_uses_with(whole)
                op.operation.erase()
            elif name == "linalg.generic" and len(op.results) > 1:
                _split_results(op)


def _split_results(generic: ir.OpView) -> None:
    """A generic with several results becomes one generic per result, each computing what its
    yield needs (shared body ops are computed once per result), when no result's value reads
    another result's accumulator (max-with-index does: it stays, and ipu-plan names it). Another
    result's `outs` value indexed by every loop once is no accumulator, only that init tensor's
    value (elementwise fusion makes such generics of a producer that reads its `outs`): the
    result reading it takes it as an input."""
    body = generic.regions[0].blocks[0]
    num_inputs = len(generic.operands) - len(generic.results)
    *ops, terminator = body.operations
    maps = list(ir.ArrayAttr(generic.attributes["indexing_maps"]))
    plans = []
    for index, value in enumerate(terminator.operands):
        needed, pending, extra = set(), [value], []
        while pending:
            current = pending.pop()
            if isinstance(current.owner, ir.Block):
                if current.owner == body and current.arg_number >= num_inputs and current.arg_number != num_inputs + index:
                    if not ir.AffineMapAttr(maps[current.arg_number]).value.is_permutation:
                        return  # reads another result's accumulator
                    extra += [] if current.arg_number in extra else [current.arg_number]
                continue
            owner = current.owner.operation
            if owner.parent == generic.operation and owner not in needed:
                needed.add(owner)
                pending.extend(owner.operands)
        plans.append(([op for op in ops if op.operation in needed], sorted(extra)))
    for index, (result, (needed, extra)) in enumerate(zip(generic.results, plans)):
        inputs, init = list(generic.operands[:num_inputs]) + [generic.operands[k] for k in extra], generic.operands[num_inputs + index]
        in_maps = maps[:num_inputs] + [maps[k] for k in extra]
        single = linalg.GenericOp(
            [result.type], inputs, [init], ir.ArrayAttr.get(in_maps + [maps[num_inputs + index]]), generic.attributes["iterator_types"]
        )
        arguments = [*body.arguments[:num_inputs], *[body.arguments[k] for k in extra], body.arguments[num_inputs + index]]
        block = single.regions[0].blocks.append(*[argument.type for argument in arguments])
        mapped = dict(zip(arguments, block.arguments))
        with ir.InsertionPoint(block):
            for op in needed:
                clone = op.operation.clone()
                for position, operand in enumerate(clone.operands):
                    clone.operands[position] = mapped.get(operand, operand)
                mapped.update(zip(op.results, clone.results))
            linalg.YieldOp([mapped.get(terminator.operands[index], terminator.operands[index])])
        result.replace_all_uses_with(single.results[0])
    generic.operation.erase()


def squeeze_unit_outputs(block: ir.Block) -> None:
    """torch-mlir reduces with keepdim: outputs indexed by a constant 0 on unit dims. The
    planner wants outputs indexed by loops only: the generic computes the squeezed tensor and
    an expand_shape restores the unit dims (fusion then makes the unit dims loops of extent 1)."""
    for op in list(block.operations):
        if op.operation.name == "linalg.generic":
            with ir.InsertionPoint(op), op.location:
                _squeeze_generic_outputs(op)


def _squeeze_generic_outputs(generic: ir.OpView) -> None:
    maps = [ir.AffineMapAttr(m).value for m in ir.ArrayAttr(generic.attributes["indexing_maps"])]
    first = len(generic.operands) - len(generic.results)
    for index, result in enumerate(generic.results):
        amap = maps[first + index]
        units = {d for d, expr in enumerate(amap.results) if isinstance(expr, ir.AffineConstantExpr)}
        if not units or not all(access_ok(amap.results[d], ir.RankedTensorType(result.type).shape[d], False) for d in units):
            continue
        generic.operands[first + index] = tb.squeeze(generic.operands[first + index], units)
        maps[first + index] = ir.AffineMap.get(amap.n_dims, 0, [e for d, e in enumerate(amap.results) if d not in units])
        result.set_type(generic.operands[first + index].type)
        with ir.InsertionPoint.after(generic):
            expanded = tb.unsqueeze(result, units)
        result.replace_all_uses_except(expanded, expanded.owner.operation)
    generic.attributes["indexing_maps"] = ir.ArrayAttr.get([ir.AffineMapAttr.get(m) for m in maps])


def _inserts_to_concat(empty: ir.OpView) -> bool:
    """Slices inserted one after the other into a `tensor.empty`, side by side along one dim
    and covering it (TOSA's concat), become the `tensor.concat` they are."""
    chain, value = [], empty.results[0]
    while len(uses := list(value.uses)) == 1 and uses[0].owner.name == "tensor.insert_slice" and uses[0].operand_number == 1:
        chain.append(uses[0].owner.opview)
        value = chain[-1].results[0]
    shape = ir.RankedTensorType(empty.results[0].type).shape
    if not chain or any(len(op.operands) != 2 or rank_drop(op) for op in chain):
        return False
    pieces = [(list(ir.DenseI64ArrayAttr(op.attributes["static_offsets"])), _sizes(op), op.operands[0]) for op in chain]
    for dim in range(len(shape)):
        others = [k for k in range(len(shape)) if k != dim]
        if any(offsets[k] or sizes[k] != shape[k] for offsets, sizes, _ in pieces for k in others):
            continue
        pieces.sort(key=lambda piece: piece[0][dim])
        ends = [offsets[dim] + sizes[dim] for offsets, sizes, _ in pieces]
        if (
            [offsets[dim] for offsets, _, _ in pieces] != [0, *ends[:-1]]
            or ends[-1] != shape[dim]
            or any(ir.DenseI64ArrayAttr(op.attributes["static_strides"])[dim] != 1 for op in chain)
        ):
            return False
        with ir.InsertionPoint(chain[-1]), chain[-1].location:
            concat = tensor.ConcatOp(value.type, dim, [source for _, _, source in pieces]).result
        value.replace_all_uses_with(concat)
        for op in reversed(chain):
            op.operation.erase()
        empty.operation.erase()
        return True
    return False


def _replace_empty_inputs(empty: ir.OpView) -> None:
    """A `tensor.empty` that a generic reads as an input (pooling's window shape: the body
    never looks at it), or that slices are inserted into or taken from, has no storage for the
    planner to place: read zeros instead. (ATen's circular pad takes a slice of its `empty`
    output, inserts the input into it and fills the rows it left undefined later: fuzz seed
    1267.)"""
    readers = [
        use for use in empty.results[0].uses
        if (use.owner.name == "linalg.generic" and use.operand_number < len(use.owner.operands) - len(use.owner.results))
        or (use.owner.name == "tensor.insert_slice" and use.operand_number == 1)
        or use.owner.name == "tensor.extract_slice"
    ]  # fmt: skip
    if not readers:
        return
    result = ir.RankedTensorType(empty.results[0].type)
    zero = ir.DenseElementsAttr.get_splat(result, tb.zero_attr(result.element_type))
    constant = ir.Operation.create("arith.constant", results=[result], attributes={"value": zero})
    for use in readers:
        use.owner.operands[use.operand_number] = constant.results[0]
    if not list(empty.results[0].uses):
        empty.operation.erase()


def _sizes(op: ir.OpView) -> list[int]:
    return list(ir.DenseI64ArrayAttr(op.attributes["static_sizes"]))


def _static(op: ir.OpView) -> list[ir.DenseI64ArrayAttr]:
    return [ir.DenseI64ArrayAttr(op.attributes[name]) for name in ("static_offsets", "static_sizes", "static_strides")]


def rank_drop(op: ir.OpView) -> set[int]:
    """The unit dims of a slice's sizes that its (rank-reduced) tensor lacks."""
    sizes = _sizes(op)
    sliced = ir.RankedTensorType((op.results[0] if op.operation.name == "tensor.extract_slice" else op.operands[0]).type).shape
    dropped, kept = set(), 0
    for d, size in enumerate(sizes):
        if kept < len(sliced) and sliced[kept] == size:  # only unit dims can be dropped
            kept += 1
        else:
            dropped.add(d)
    return dropped
