"""`ipu-convert-tm-tensor` (L0): torch-mlir's TMTensor ops become `linalg.generic`s.

torch-mlir lowers `cumsum` to `tm_tensor.scan`, `sort` / `topk` / `argsort` to `tm_tensor.sort`,
and `index_put` / `scatter` / `scatter_add` / `index_add` to `tm_tensor.scatter`. The MLIR
bindings do not know that dialect, so the front end prints torch-mlir's output in generic form
and the ops arrive unregistered. This pass rewrites each into generics the rest of the
compiler already plans across tiles: reductions over one extra loop whose body compares loop
indices (`linalg.index`, made iota inputs by `ipu-index-to-iota`). That work is quadratic in
the sorted or scattered dimension (sort: n^2 per row; scatter: updates x positions), fine for
sequence lengths and top-k over a few thousand logits. A scan takes the masked reduction while
it is cheap on the target's tiles, else ceil(log2 n) element-wise steps adding a shifted copy
(Hillis-Steele; `QUADRATIC_SCAN_ELEMENTS_PER_STEP` has the measurements).

The same rewrite runs in front of the ExecutionEngine reference (`frontends.api.
reference_outputs`): it is plain linalg, upstream semantics only, and what the reference
then checks is everything after it (planning, scheduling, the simulator). PyTorch itself is
the independent check of the rewrite (`test/python/test_tm_tensor.py`).

Semantics, as torch-mlir's own loop lowering (`TMTensorOps.cpp`, `generateScalarImplementation`)
defines them:

- scan: `out[j] = x[0] (+) ... (+) x[j]` (inclusive) or `init (+) x[0] (+) ... (+) x[j-1]`
  (exclusive, `init` the accumulator operand); the region must be one associative combiner.
- sort: a stable sort by the region's comparator `c(a, b)` (true: `a` may stay before `b`),
  every operand permuted alike. Element `k` lands before element `i` when `c(x_k, x_i)` and not
  `c(x_i, x_k)`, or when both agree (a tie) and `k < i`; the rank of `i` counts those `k`, and
  each output position picks the element of that rank.
- scatter: update `n` goes to the position its index row names (`dimension_map`), the
  update's other dimensions along the original's trailing ones. A combining region
  (`addf(original, update)`: index_put with accumulate, scatter_add, index_add) folds the
  updates of each position from the combiner's identity, then combines that with the original
  (a reduction whose init is a function argument made the ExecutionEngine reference fail to
  link, "Symbols not found: [ ockfile ]"); a region yielding the update overwrites, the last
  update to a position winning, as the sequential loop does (and PyTorch on CPU). A negative index counts from the end, as
  in PyTorch (torch-mlir passes it through, and its loops would write out of bounds); indices
  out of range write nothing (PyTorch raises).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from mlir import ir
from mlir.dialects import tensor

from ipu_mlir.dialects.ops.generic import filled, identity_constant
from ipu_mlir.dialects.ops.space import COMBINERS
from ipu_mlir.dialects.ops.tensor_builders import generic
from ipu_mlir.dialects.tm_tensor import DIALECT, describe
from ipu_mlir.target import target_of
from ipu_mlir.target.diagnostics import IpuError, op_error

from .pass_registry import ModulePass, register_pass

# arith.cmpi predicates
_EQ, _SLT, _SLE, _SGE = 0, 2, 3, 5
# A scan of n along its dimension is one reduction of (elements x n) points when that is at
# most this many points per tile per log-step (ceil(log2 n)), else ceil(log2 n) element-wise
# shifted combines. Measured (bench/tm_tensor.py, cycles masked / log-step): gc200 8x128 535 /
# 3,574 (89 points per tile, 7 steps), tiny 3x8 326 / 913; gc200 8x1024 9,652 / 4,164 (5.7k
# points, 10 steps), tiny 8x128 13,092 / 3,818 (8k points, 7 steps), tiny 8x1024 791,044 / 16,109.
QUADRATIC_SCAN_ELEMENTS_PER_STEP = 256


@register_pass
@dataclass
class ConvertTmTensor(ModulePass):
    """Rewrite torch-mlir's `tm_tensor.scan`, `sort` and `scatter` into `linalg.generic`s.

    Each becomes reductions over one extra loop comparing loop indices, which ipu-plan cuts
    across tiles like any reduction; a scan too long for that on the target's tiles becomes
    log2(n) element-wise steps adding a shifted copy instead (the module docstring of
    lowering/convert_tm_tensor.py has the semantics). An op of another unknown dialect, a `tm_tensor` op not converted
    (`attention`) or a form not converted (a scan region that is not one associative combiner,
    a windowed scatter) is an error at its location naming the ATen ops behind it.

    Before (torch.cumsum(x, dim=1), printed generic by the torch front end):

        %r:2 = "tm_tensor.scan"(%x, %out, %acc) <{dimension = 1 : i64, inclusive = true,
            operandSegmentSizes = array<i32: 1, 2>}> ({
        ^bb0(%a: f32, %b: f32):
          %s = "arith.addf"(%a, %b) : (f32, f32) -> f32
          "tm_tensor.yield"(%s) : (f32) -> ()
        }) : (tensor<3x8xf32>, tensor<3x8xf32>, tensor<3xf32>) -> (tensor<3x8xf32>, tensor<3xf32>)

    After (loop d2 is the summed position k; out[i, j] sums x[i, k] for k <= j):

        %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>,
            affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]}
            ins(%x : tensor<3x8xf32>) outs(%zeros : tensor<3x8xf32>) {
        ^bb0(%in: f32, %acc: f32):
          %j = linalg.index 1 : index
          %k = linalg.index 2 : index
          ... %keep = arith.cmpi sle, %k64, %j64 : i64
          %v = arith.select %keep, %in, %zero : f32
          %s = arith.addf %v, %acc : f32
          linalg.yield %s : f32
        } -> tensor<3x8xf32>
    """

    name = "ipu-convert-tm-tensor"

    def run(self, module: ir.Operation) -> None:
        context = module.context
        found: list[ir.Operation] = []

        def visit(op: ir.Operation) -> ir.WalkResult:
            parent = op.parent
            if not context.is_registered_operation(op.name) and (parent is None or context.is_registered_operation(parent.name)):
                found.append(op)
            return ir.WalkResult.ADVANCE

        module.walk(visit)  # rewritten after the walk: the walk must not see its own edits
        tiles = target_of(module).num_tiles if found else 0
        errors = []
        for op in found:
            try:
                _convert(op, tiles)
            except IpuError as error:
                errors.append(error)
        if len(errors) == 1:
            raise errors[0]
        if errors:
            raise ExceptionGroup(f"{self.name} failed", errors)


def _convert(op: ir.Operation, tiles: int) -> None:
    dialect, _, kind = op.name.partition(".")
    if dialect != DIALECT:
        raise IpuError(f"'{op.name}' is not supported: ipu-mlir does not know the {dialect} dialect", op.location)
    rewrite = {"scan": functools.partial(_scan, tiles=tiles), "sort": _sort, "scatter": _scatter}.get(kind)
    if rewrite is None:
        raise _refusal(op, "is not converted by ipu-convert-tm-tensor")
    for value in [*op.operands, *op.results]:
        if not isinstance(value.type, ir.RankedTensorType) or not value.type.has_static_shape:
            raise _refusal(op, f"has dynamic shapes ({value.type}), which ipu-mlir does not support")
    with ir.InsertionPoint(op), op.location:
        replacements = rewrite(op)
    for result, value in zip(op.results, replacements):
        if value is not None:
            result.replace_all_uses_with(value)
    op.erase()


def _refusal(op: ir.Operation, why: str) -> IpuError:
    return op_error(op, f"{why} ({describe(op.name)})")


# --- scan ----------------------------------------------------------------------------------


def _scan(op: ir.Operation, tiles: int) -> list[ir.Value | None]:
    dim = ir.IntegerAttr(op.attributes["dimension"]).value
    inclusive = ir.BoolAttr(op.attributes["inclusive"]).value
    x, _, accumulator = op.operands
    combine = _combiner(op.regions[0].blocks[0])
    if combine is None:
        raise _refusal(op, "has a region that is not one associative combiner of its two arguments (addf, mulf, addi, max, min, ...)")
    source = ir.RankedTensorType(x.type)
    rank, element, length = source.rank, source.element_type, source.shape[dim]
    identity = identity_constant(combine, element)
    if math.prod(source.shape) * length <= QUADRATIC_SCAN_ELEMENTS_PER_STEP * tiles * max(1, math.ceil(math.log2(length))):
        scanned = _masked_scan(x, dim, inclusive, combine, identity, accumulator)
    else:
        scanned = _log_step_scan(x, dim, combine, identity)
        if not inclusive:  # out[j] = init (+) inclusive[j - 1]
            outer = [d for d in range(rank) if d != dim]
            shifted = _shifted(scanned, dim, 1, identity)
            same = _map(rank, range(rank))
            scanned = generic(
                [accumulator, shifted],
                tensor.empty(source.shape, element),
                [_map(rank, outer), same, same],
                lambda a, b, _: _op(combine, a, b),
            )
    last = None
    if _used(op.results[1]):  # the accumulator's final value: the last position of the scan
        last = _slice(scanned, dim, length - 1, ir.RankedTensorType(accumulator.type))
    return [scanned, last]


def _masked_scan(x: ir.Value, dim: int, inclusive: bool, combine: str, identity: ir.Value, accumulator: ir.Value) -> ir.Value:
    """One reduction over an extra loop k: out[j] folds x[k] for k <= j (k < j from the
    accumulator's initial value when exclusive)."""
    source = ir.RankedTensorType(x.type)
    rank, element = source.rank, source.element_type
    if inclusive:
        init = filled(source.shape, element, identity)
    else:  # out[0] is the accumulator's initial value, broadcast along the scanned dimension
        outer = [d for d in range(rank) if d != dim]
        init = generic(
            [accumulator], tensor.empty(source.shape, element), [_map(rank, outer), _map(rank, range(rank))], lambda value, _: value
        )

    def body(value: ir.Value, acc: ir.Value) -> ir.Value:
        keep = _cmpi(_SLE if inclusive else _SLT, _index(rank), _index(dim))
        return _op(combine, _select(keep, value, identity), acc)

    return generic([x], init, [_map(rank + 1, _replaced(rank, dim, rank)), _map(rank + 1, range(rank))], body, reductions=[rank])


def _log_step_scan(x: ir.Value, dim: int, combine: str, identity: ir.Value) -> ir.Value:
    """Hillis-Steele: y (+)= y shifted by 1, 2, 4, ... along `dim` (ceil(log2 n) element-wise steps)."""
    source = ir.RankedTensorType(x.type)
    same = _map(source.rank, range(source.rank))
    scanned, step = x, 1
    while step < source.shape[dim]:
        shifted = _shifted(scanned, dim, step, identity)
        empty = tensor.empty(source.shape, source.element_type)
        scanned = generic([scanned, shifted], empty, [same] * 3, lambda a, b, _: _op(combine, a, b))
        step *= 2
    return scanned


def _shifted(value: ir.Value, dim: int, step: int, fill: ir.Value) -> ir.Value:
    """`value` moved `step` places up along `dim`, the first `step` filled with `fill`."""
    source = ir.RankedTensorType(value.type)
    head, tail = list(source.shape), list(source.shape)
    head[dim], tail[dim] = step, source.shape[dim] - step
    kept = tensor.ExtractSliceOp(
        ir.RankedTensorType.get(tail, source.element_type),
        value,
        [],
        [],
        [],
        ir.DenseI64ArrayAttr.get([0] * source.rank),
        ir.DenseI64ArrayAttr.get(tail),
        ir.DenseI64ArrayAttr.get([1] * source.rank),
    ).result
    return tensor.ConcatOp(source, dim, [filled(head, source.element_type, fill), kept]).result


def _combiner(block: ir.Block) -> str | None:
    """The combiner name when the region is `yield combine(arg0, arg1)` (either order)."""
    operations = list(block.operations)
    if len(operations) != 2:
        return None
    combine, terminator = operations
    arguments = list(block.arguments)
    if combine.operation.name not in COMBINERS or terminator.operands[0] != combine.results[0]:
        return None
    return combine.operation.name if sorted(map(_position(arguments), combine.operands)) == [0, 1] else None


def _position(arguments: list[ir.Value]) -> Callable[[ir.Value], int]:
    return lambda value: arguments.index(value) if value in arguments else -1


# --- sort ----------------------------------------------------------------------------------


def _sort(op: ir.Operation) -> list[ir.Value | None]:
    dim = ir.IntegerAttr(op.attributes["dimension"]).value
    operands = list(op.operands)
    source = ir.RankedTensorType(operands[0].type)
    rank = source.rank
    comparator = op.regions[0].blocks[0]
    arguments = list(comparator.arguments)
    # The operands the comparator reads (torch's: the values, not their positions).
    compared = [m for m in range(len(operands)) if _used(arguments[2 * m]) or _used(arguments[2 * m + 1])]
    count = len(compared)
    at_i, at_k = _map(rank + 1, range(rank)), _map(rank + 1, _replaced(rank, dim, rank))
    i64 = ir.IntegerType.get_signless(64)
    true = _constant(ir.IntegerAttr.get(ir.IntegerType.get_signless(1), 1))
    zero = _constant(ir.IntegerAttr.get(i64, 0))

    def rank_body(*arguments: ir.Value) -> ir.Value:
        at_position, at_other, acc = arguments[:count], arguments[count : 2 * count], arguments[-1]
        forward = _compare(comparator, compared, at_other, at_position)  # c(x_k, x_i)
        reverse = _compare(comparator, compared, at_position, at_other)  # c(x_i, x_k)
        strictly = _op("arith.andi", forward, _op("arith.xori", reverse, true))
        tie_before = _op("arith.andi", _cmpi(_EQ, forward, reverse), _cmpi(_SLT, _index(rank), _index(dim)))
        precedes = _op("arith.ori", strictly, tie_before)
        return _op("arith.addi", ir.Operation.create("arith.extui", results=[i64], operands=[precedes]).result, acc)

    inputs = [operands[m] for m in compared]
    ranks = generic(inputs + inputs, filled(source.shape, i64, zero), [at_i] * count + [at_k] * count + [at_i], rank_body, [rank])
    results: list[ir.Value | None] = []
    for operand, result in zip(operands, op.results):
        results.append(_permuted(operand, ranks, dim) if _used(result) else None)
    return results


def _compare(comparator: ir.Block, compared: Sequence[int], a: Sequence[ir.Value], b: Sequence[ir.Value]) -> ir.Value:
    """The comparator region inlined at the insertion point, its arguments (a_0, b_0, a_1, b_1,
    ...) of the operands `compared` mapped to `a` and `b`."""
    arguments = list(comparator.arguments)
    mapping = {}
    for m, left, right in zip(compared, a, b):
        mapping[arguments[2 * m]], mapping[arguments[2 * m + 1]] = left, right
    operations = list(comparator.operations)
    for inner in operations[:-1]:
        copy = inner.operation.clone()
        for index, operand in enumerate(inner.operands):
            if operand in mapping:
                copy.operands[index] = mapping[operand]
        mapping.update(zip(inner.results, copy.results))
    condition = operations[-1].operands[0]
    return mapping.get(condition, condition)


def _permuted(values: ir.Value, ranks: ir.Value, dim: int) -> ir.Value:
    """out[.., p, ..] = values[.., k, ..] for the k whose rank is p (one k per p)."""
    source = ir.RankedTensorType(values.type)
    rank, element = source.rank, source.element_type
    combine = _pick(element)
    identity = identity_constant(combine, element)

    def body(position_rank: ir.Value, value: ir.Value, acc: ir.Value) -> ir.Value:
        here = _cmpi(_EQ, position_rank, _index(dim))
        return _op(combine, _select(here, value, identity), acc)

    at_k = _map(rank + 1, _replaced(rank, dim, rank))
    init = filled(source.shape, element, identity_constant(combine, element))
    return generic([ranks, values], init, [at_k, at_k, _map(rank + 1, range(rank))], body, reductions=[rank])


def _pick(element: ir.Type) -> str:
    """A combiner that, from its identity, gives back the one value selected exactly."""
    if isinstance(element, ir.FloatType):
        return "arith.addf"
    return "arith.ori" if ir.IntegerType(element).width == 1 else "arith.addi"


# --- scatter -------------------------------------------------------------------------------


def _scatter(op: ir.Operation) -> list[ir.Value]:
    updates, indices, original = op.operands
    dimension_map = list(ir.DenseI64ArrayAttr(op.attributes["dimension_map"]))
    block = op.regions[0].blocks[0]
    yielded = list(block.operations)[-1].operands[0]
    combine = _combiner(block)
    if yielded != block.arguments[0] and combine is None:
        raise _refusal(op, "has a region that neither yields the update nor combines it with the original by one associative op")
    update_type, target = ir.RankedTensorType(updates.type), ir.RankedTensorType(original.type)
    rank, element = target.rank, target.element_type
    offset = rank - (update_type.rank - 1)  # update dims 1.. run along the original's trailing dims
    count = update_type.shape[0]
    update_exprs = [ir.AffineDimExpr.get(rank)]
    for d in range(rank):
        if d < offset and d not in dimension_map:
            raise _refusal(op, f"leaves dimension {d} of the original neither indexed nor updated")
        if d < offset:
            continue
        size = update_type.shape[1 + d - offset]
        if d in dimension_map and size == 1:
            update_exprs.append(ir.AffineConstantExpr.get(0))
        elif d not in dimension_map and size == target.shape[d]:
            update_exprs.append(ir.AffineDimExpr.get(d))
        else:
            raise _refusal(
                op,
                f"writes windows of size {size} along dimension {d} of the original "
                "(only whole dimensions or single indexed positions are converted)",
            )
    index_type = ir.RankedTensorType(indices.type).element_type
    columns = [_slice(indices, 1, c, ir.RankedTensorType.get([count], index_type)) for c in range(len(dimension_map))]
    update_map = ir.AffineMap.get(rank + 1, 0, update_exprs)
    column_maps = [_map(rank + 1, [rank])] * len(columns)
    at_position = _map(rank + 1, range(rank))

    sizes = [_constant(ir.IntegerAttr.get(index_type, target.shape[d])) for d in dimension_map]

    def matches(column_values: Sequence[ir.Value]) -> ir.Value:
        """Whether the update's index row names this position; a negative index counts from
        the end, as in PyTorch (torch-mlir passes it through unchanged)."""
        match = None
        for value, d, size in zip(column_values, dimension_map, sizes):
            position = _index(d, index_type)
            condition = _op("arith.ori", _cmpi(_EQ, value, position), _cmpi(_EQ, _op("arith.addi", value, size), position))
            match = condition if match is None else _op("arith.andi", match, condition)
        return match

    same = _map(rank, range(rank))
    if combine is not None:  # the updates folded from the identity, then into the original
        identity = identity_constant(combine, element)

        def fold(update: ir.Value, *rest: ir.Value) -> ir.Value:
            return _op(combine, _select(matches(rest[:-1]), update, identity), rest[-1])

        folded = generic(
            [updates, *columns], filled(target.shape, element, identity), [update_map, *column_maps, at_position], fold, [rank]
        )
        empty = tensor.empty(target.shape, element)
        return [generic([original, folded], empty, [same] * 3, lambda old, new, _: _op(combine, old, new))]

    # Overwrite: the last update naming a position wins (-1: none does), then is picked.
    i64 = ir.IntegerType.get_signless(64)
    none = _constant(ir.IntegerAttr.get(i64, -1))

    def last(*arguments: ir.Value) -> ir.Value:
        return _op("arith.maxsi", _select(matches(arguments[:-1]), _index(rank), none), arguments[-1])

    winners = generic(columns, filled(target.shape, i64, none), [*column_maps, at_position], last, reductions=[rank])
    pick = _pick(element)
    identity = identity_constant(pick, element)

    def chosen(update: ir.Value, winner: ir.Value, acc: ir.Value) -> ir.Value:
        return _op(pick, _select(_cmpi(_EQ, _index(rank), winner), update, identity), acc)

    picked = generic([updates, winners], filled(target.shape, element, identity), [update_map, at_position, at_position], chosen, [rank])
    zero = _constant(ir.IntegerAttr.get(i64, 0))
    return [
        generic(
            [winners, picked, original],
            tensor.empty(target.shape, element),
            [same] * 4,
            lambda winner, new, old, _: _select(_cmpi(_SGE, winner, zero), new, old),
        )
    ]


# --- builders ------------------------------------------------------------------------------


def _map(loops: int, dims: Sequence[int]) -> ir.AffineMap:
    return ir.AffineMap.get(loops, 0, [ir.AffineDimExpr.get(d) for d in dims])


def _replaced(rank: int, dim: int, loop: int) -> list[int]:
    """The loops 0..rank-1 indexing a tensor, with `dim` read at `loop` instead."""
    return [loop if d == dim else d for d in range(rank)]


def _used(value: ir.Value) -> bool:
    return any(True for _ in value.uses)


def _op(name: str, a: ir.Value, b: ir.Value) -> ir.Value:
    return ir.Operation.create(name, results=[a.type], operands=[a, b]).result


def _select(condition: ir.Value, a: ir.Value, b: ir.Value) -> ir.Value:
    return ir.Operation.create("arith.select", results=[a.type], operands=[condition, a, b]).result


def _cmpi(predicate: int, a: ir.Value, b: ir.Value) -> ir.Value:
    i1, i64 = ir.IntegerType.get_signless(1), ir.IntegerType.get_signless(64)
    return ir.Operation.create(
        "arith.cmpi", results=[i1], operands=[a, b], attributes={"predicate": ir.IntegerAttr.get(i64, predicate)}
    ).result


def _index(loop: int, integer: ir.Type | None = None) -> ir.Value:
    """The generic's loop index `loop` as an integer (i64 by default)."""
    i64 = ir.IntegerType.get_signless(64)
    index = ir.Operation.create("linalg.index", results=[ir.IndexType.get()], attributes={"dim": ir.IntegerAttr.get(i64, loop)}).result
    return ir.Operation.create("arith.index_cast", results=[integer or i64], operands=[index]).result


def _constant(attr: ir.Attribute) -> ir.Value:
    return ir.Operation.create("arith.constant", results=[attr.type], attributes={"value": attr}).result


def _slice(value: ir.Value, dim: int, at: int, result: ir.RankedTensorType) -> ir.Value:
    """`value` at position `at` of dimension `dim`, that dimension dropped (`result`)."""
    shape = list(ir.RankedTensorType(value.type).shape)
    offsets, sizes = [0] * len(shape), list(shape)
    offsets[dim], sizes[dim] = at, 1
    return tensor.ExtractSliceOp(
        result,
        value,
        [],
        [],
        [],
        ir.DenseI64ArrayAttr.get(offsets),
        ir.DenseI64ArrayAttr.get(sizes),
        ir.DenseI64ArrayAttr.get([1] * len(shape)),
    ).result
