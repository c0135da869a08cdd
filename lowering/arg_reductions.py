"""Arg-reductions (max / min with the index), as torch-mlir exports them, rewritten to three
single-result generics ipu-plan can cut across tiles (part of `ipu-convert-to-ipu`).

`torch.argmax`, `torch.max(x, dim)` (and the min forms) become one generic with two results
over one reduction loop `r`, whose index result reads the value result's accumulator:

    ^bb0(%x: f32, %iota: i64, %best: f32, %at: i64):          (%iota: ipu-index-to-iota's input)
      %v = arith.maximumf %x, %best : f32
      %better = arith.cmpf ogt, %x, %best : f32                 (strictly better: ties keep the first)
      %i = arith.select %better, %e(%iota), %at : i64
      linalg.yield %v, %i : f32, i64

The index is the first `r` at which the running maximum is beaten for the last time: the first
position holding the final maximum `V`, if `V` beats the init (else the index's init). So:

1. `V`: the value result alone, a reduction with its own combiner;
2. `first`: `min over r of (x == V ? e : n)`, a reduction with `minsi` (`e` increases with `r`,
   `n` is the loop's extent), so a reduction cut across tiles keeps the first index on ties;
3. the index: `better(V, init) ? first : init`, element-wise.

This is exact when `x` holds no NaN (a NaN makes `V` NaN and the source's index stop at the
prefix before it; here the index is then the init's or `n`).
"""

from __future__ import annotations

import math

import numpy as np
from mlir import ir

from ipu_mlir.dialects.ops import tensor_builders as tb
from ipu_mlir.dialects.ops.space import loop_extents

# A combiner, the predicates saying "x strictly beats acc" as cmp(x, acc) and as cmp(acc, x).
_BETTER = {
    "arith.maximumf": ({"ogt", "ugt"}, {"olt", "ult"}),
    "arith.maxnumf": ({"ogt", "ugt"}, {"olt", "ult"}),
    "arith.minimumf": ({"olt", "ult"}, {"ogt", "ugt"}),
    "arith.minnumf": ({"olt", "ult"}, {"ogt", "ugt"}),
    "arith.maxsi": ({"sgt"}, {"slt"}),
    "arith.minsi": ({"slt"}, {"sgt"}),
    "arith.maxui": ({"ugt"}, {"ult"}),
    "arith.minui": ({"ult"}, {"ugt"}),
}
_CASTS = frozenset({"arith.index_cast", "arith.index_castui", "arith.extsi", "arith.extui"})


def rewrite_arg_reductions(block: ir.Block) -> None:
    for op in list(block.operations):
        if op.operation.name == "linalg.generic":
            match = _match(op)
            if match is not None:
                _rewrite(op, *match)


def _rewrite(generic: ir.OpView, value: int, index: int, x: ir.Value, predicate: str, e: ir.Value) -> None:
    block = generic.regions[0].blocks[0]
    num_inputs = len(generic.operands) - 2
    inputs = list(generic.operands)[:num_inputs]
    maps = [ir.AffineMapAttr(m).value for m in ir.ArrayAttr(generic.attributes["indexing_maps"])]
    in_maps, out_map = maps[:num_inputs], maps[num_inputs + value]
    reduction = _reduction_loops(generic)[0]
    value_init, index_init = generic.operands[num_inputs + value], generic.operands[num_inputs + index]
    combine = block.operations[len(block.operations) - 1].operands[value].owner
    index_type = ir.RankedTensorType(generic.results[index].type)
    with generic.location, ir.InsertionPoint(generic):
        read = _inputs_of(block, [x], num_inputs)  # the iota the index reads is no input of the value

        def best(*arguments: ir.Value) -> ir.Value:
            mapped = _clone_slice(block, [x], dict(zip([block.arguments[k] for k in read], arguments)))
            return _create(combine.operation.name, [mapped[x], arguments[-1]])

        v = tb.generic([inputs[k] for k in read], value_init, [*(in_maps[k] for k in read), out_map], best, reductions=(reduction,))
        extent = _extent(generic, reduction)
        splat = ir.DenseElementsAttr.get_splat(index_type, ir.IntegerAttr.get(index_type.element_type, extent))
        past_end = ir.Operation.create("arith.constant", results=[index_type], attributes={"value": splat}).results[0]
        scalar_end = ir.Operation.create(
            "arith.constant", results=[index_type.element_type], attributes={"value": ir.IntegerAttr.get(index_type.element_type, extent)}
        ).results[0]

        both = _inputs_of(block, [x, e], num_inputs)

        def first(*arguments: ir.Value) -> ir.Value:
            mapped = _clone_slice(block, [x, e], dict(zip([block.arguments[k] for k in both], arguments)))
            equal = _compare(mapped[x], arguments[len(both)], "oeq" if isinstance(x.type, ir.FloatType) else "eq")
            candidate = _create("arith.select", [equal, mapped[e], scalar_end])
            return _create("arith.minsi", [candidate, arguments[-1]])

        both_maps = [in_maps[k] for k in both]
        found = tb.generic([*(inputs[k] for k in both), v], past_end, [*both_maps, out_map, out_map], first, reductions=(reduction,))
        identity = ir.AffineMap.get_identity(index_type.rank)
        empty = ir.Operation.create("tensor.empty", results=[index_type]).results[0]

        def pick(best_value: ir.Value, start: ir.Value, position: ir.Value, start_position: ir.Value, _: ir.Value) -> ir.Value:
            return _create("arith.select", [_compare(best_value, start, predicate), position, start_position])

        chosen = tb.generic([v, value_init, found, index_init], empty, [identity] * 5, pick)
    generic.results[value].replace_all_uses_with(v)
    generic.results[index].replace_all_uses_with(chosen)
    generic.operation.erase()


def _match(generic: ir.OpView) -> tuple[int, int, ir.Value, str, ir.Value] | None:
    """(value result, index result, x, the strict predicate, e) of an arg-reduction."""
    if len(generic.results) != 2 or len(_reduction_loops(generic)) != 1:
        return None
    maps = [ir.AffineMapAttr(m).value for m in ir.ArrayAttr(generic.attributes["indexing_maps"])]
    if maps[-1] != maps[-2]:
        return None
    block = generic.regions[0].blocks[0]
    num_inputs = len(generic.operands) - 2
    yielded = list(block.operations[len(block.operations) - 1].operands)
    for value, index in ((0, 1), (1, 0)):
        best, at = block.arguments[num_inputs + value], block.arguments[num_inputs + index]
        combine, select = _owner(yielded[value]), _owner(yielded[index])
        if combine is None or select is None or combine.name not in _BETTER or select.name != "arith.select":
            continue
        if best not in list(combine.operands) or select.operands[2] != at or len(list(at.uses)) != 1:
            continue
        x = combine.operands[0] if combine.operands[1] == best else combine.operands[1]
        compare = _owner(select.operands[0])
        if compare is None or compare.name not in ("arith.cmpf", "arith.cmpi") or len(list(best.uses)) != 2:
            continue
        predicate = _PREDICATES[compare.name][ir.IntegerAttr(compare.attributes["predicate"]).value]
        forward, backward = _BETTER[combine.name]
        operands = list(compare.operands)
        if not ((operands == [x, best] and predicate in forward) or (operands == [best, x] and predicate in backward)):
            continue
        strict = predicate if operands == [x, best] else next(iter(forward))
        if _depends_on(x, block, num_inputs) and _is_position(select.operands[1], generic, block, num_inputs):
            return value, index, x, strict, select.operands[1]
    return None


# arith's predicate enums (the attribute is an i64).
_PREDICATES = {
    "arith.cmpf": ["false", "oeq", "ogt", "oge", "olt", "ole", "one", "ord", "ueq", "ugt", "uge", "ult", "ule", "une", "uno", "true"],
    "arith.cmpi": ["eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge"],
}


def _owner(value: ir.Value) -> ir.OpView | None:
    return None if isinstance(value.owner, ir.Block) else value.owner


def _depends_on(value: ir.Value, block: ir.Block, num_inputs: int) -> bool:
    """True if `value` is computed from the inputs (and constants) only, not the outputs."""
    pending, seen = [value], set()
    while pending:
        current = pending.pop()
        owner = current.owner
        if isinstance(owner, ir.Block):
            if owner == block and current.arg_number >= num_inputs:
                return False
            continue
        if owner.operation.parent == block.owner and owner.operation not in seen:
            seen.add(owner.operation)
            pending.extend(owner.operands)
    return True


def _is_position(value: ir.Value, generic: ir.OpView, block: ir.Block, num_inputs: int) -> bool:
    """`value` is casts of an iota input (0, 1, ..) read along the reduction loop: it increases
    with the loop, so the smallest candidate is the first position."""
    while not isinstance(value.owner, ir.Block) and value.owner.name in _CASTS:
        value = value.owner.operands[0]
    if not isinstance(value.owner, ir.Block) and value.owner.name == "arith.constant":  # a loop of one folded (fuzz seed 2297)
        extent = loop_extents(generic)[_reduction_loops(generic)[0]]
        return (
            extent == 1
            and isinstance(value.owner.attributes["value"], ir.IntegerAttr)
            and ir.IntegerAttr(value.owner.attributes["value"]).value == 0
        )
    if not isinstance(value.owner, ir.Block) or value.owner != block or value.arg_number >= num_inputs:
        return False
    amap = ir.AffineMapAttr(ir.ArrayAttr(generic.attributes["indexing_maps"])[value.arg_number]).value
    if [str(r) for r in amap.results] != [f"d{_reduction_loops(generic)[0]}"]:
        return False
    constant = _owner(generic.operands[value.arg_number])
    if constant is None or constant.name != "arith.constant" or not isinstance(constant.attributes["value"], ir.DenseElementsAttr):
        return False
    attr = ir.DenseElementsAttr(constant.attributes["value"])
    if attr.is_splat:  # an iota of one element, [0], is a splat (fuzz seed 46)
        return math.prod(ir.ShapedType(attr.type).shape) == 1 and ir.IntegerAttr(attr.get_splat_value()).value == 0
    return np.array_equal(np.array(attr), np.arange(len(attr)))


def _reduction_loops(generic: ir.OpView) -> list[int]:
    return [d for d, kind in enumerate(ir.ArrayAttr(generic.attributes["iterator_types"])) if "reduction" in str(kind)]


def _extent(generic: ir.OpView, loop: int) -> int:
    maps = [ir.AffineMapAttr(m).value for m in ir.ArrayAttr(generic.attributes["indexing_maps"])]
    for value, amap in zip(generic.operands, maps):
        for axis, result in enumerate(amap.results):
            if str(result) == f"d{loop}":
                return ir.RankedTensorType(value.type).shape[axis]
    raise AssertionError("a reduction loop no operand is indexed by")  # the linalg verifier rules it out


def _slice(block: ir.Block, values: list[ir.Value]) -> tuple[set, set]:
    """The body ops `values` are computed from, and the block arguments they read."""
    needed: set = set()
    arguments: set = set()
    pending = list(values)
    while pending:
        value = pending.pop()
        owner = _owner(value)
        if owner is None:
            arguments.add(value.arg_number)
        elif owner.operation.parent == block.owner and owner.operation not in needed:
            needed.add(owner.operation)
            pending.extend(owner.operands)
    return needed, arguments


def _inputs_of(block: ir.Block, values: list[ir.Value], num_inputs: int) -> list[int]:
    return sorted(k for k in _slice(block, values)[1] if k < num_inputs)


def _clone_slice(block: ir.Block, values: list[ir.Value], mapped: dict) -> dict:
    """The body ops computing `values`, cloned at the insertion point with block arguments
    replaced as `mapped` says; old value -> new value."""
    needed = _slice(block, values)[0]
    for op in block.operations:
        if op.operation in needed:
            clone = op.operation.clone()
            for position, operand in enumerate(clone.operands):
                clone.operands[position] = mapped.get(operand, operand)
            mapped.update(zip(op.results, clone.results))
    for value in values:
        mapped.setdefault(value, value)
    return mapped


def _compare(a: ir.Value, b: ir.Value, predicate: str) -> ir.Value:
    name = "arith.cmpf" if isinstance(a.type, ir.FloatType) else "arith.cmpi"
    attribute = ir.IntegerAttr.get(ir.IntegerType.get_signless(64), _PREDICATES[name].index(predicate))
    return ir.Operation.create(
        name, results=[ir.IntegerType.get_signless(1)], operands=[a, b], attributes={"predicate": attribute}
    ).results[0]


def _create(name: str, operands: list[ir.Value]) -> ir.Value:
    return ir.Operation.create(name, results=[operands[-1].type], operands=operands).results[0]
