"""`ipu-convert-tm-tensor` (L0): torch-mlir's TMTensor ops become `linalg.generic`s (and
scatters `ipu.scatter`).

torch-mlir lowers `cumsum` to `tm_tensor.scan`, `sort` / `topk` / `argsort` to `tm_tensor.sort`,
and `index_put` / `scatter` / `scatter_add` / `index_add` to `tm_tensor.scatter`. The MLIR
bindings do not know that dialect, so the front end prints torch-mlir's output in generic form
and the ops arrive unregistered. This pass rewrites each into generics the rest of the
compiler already plans across tiles: reductions over one extra loop whose body compares loop
indices (`linalg.index`, made iota inputs by `ipu-index-to-iota`). That work is quadratic in
the sorted dimension (n^2 per row), fine for sequence lengths; a sort read only through its first k <= `SELECTION_MAX_K` positions (topk)
takes k rounds of selection instead (k x n per row). A scan takes the masked reduction while
it is cheap on the target's tiles, else ceil(log2 n) element-wise steps adding a shifted copy
(Hillis-Steele; `QUADRATIC_SCAN_ELEMENTS_PER_STEP` has the measurements). A scatter whose
indexed dimensions lead (all of torch-mlir's) becomes `ipu.scatter` on rows, work linear in
the updates (`lowering/tm_tensor_scatter.py`); under `linalg-only`, or another form, it becomes
generics comparing every update with every position (updates x positions).

The same rewrite, `linalg-only`, runs in front of the ExecutionEngine reference
(`frontends.api.reference_outputs`): plain linalg, upstream semantics only, and what the
reference then checks is everything after it (planning, scheduling, the simulator), and the
scatter's linear form against its quadratic one. PyTorch itself is the independent check of
the rewrite (`test/python/test_tm_tensor.py`).

Semantics, as torch-mlir's own loop lowering (`TMTensorOps.cpp`, `generateScalarImplementation`)
defines them:

- scan: `out[j] = x[0] (+) ... (+) x[j]` (inclusive) or `init (+) x[0] (+) ... (+) x[j-1]`
  (exclusive, `init` the accumulator operand); the region must be one associative combiner.
- sort: a stable sort by the region's comparator `c(a, b)` (true: `a` may stay before `b`),
  every operand permuted alike. Element `k` lands before element `i` when `c(x_k, x_i)` and not
  `c(x_i, x_k)`, or when both agree (a tie) and `k < i`; the rank of `i` counts those `k`, and
  each output position picks the element of that rank. Selection (topk) finds, k times, the
  first remaining value and the lowest position holding it: the same order. Floats sorted by
  value follow PyTorch's order for NaN (above every value: last ascending, first descending),
  which torch-mlir's comparator (`ole` / `oge`, false on NaN) does not.
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
from collections.abc import Sequence
from dataclasses import dataclass, field

from mlir import ir
from mlir.dialects import tensor

from ipu_mlir.dialects.ops.generic import filled, identity_constant
from ipu_mlir.dialects.ops.tensor_builders import generic
from ipu_mlir.dialects.tm_tensor import DIALECT
from ipu_mlir.target import target_of
from ipu_mlir.target.diagnostics import IpuError

from . import tm_tensor_builders as build
from . import tm_tensor_scatter
from .pass_registry import ModulePass, register_pass

# A scan of n along its dimension is one reduction of (elements x n) points when that is at
# most this many points per tile per log-step (ceil(log2 n)), else ceil(log2 n) element-wise
# shifted combines. Measured (bench/tm_tensor.py, cycles masked / log-step): gc200 8x128 535 /
# 3,574 (89 points per tile, 7 steps), tiny 3x8 326 / 913; gc200 8x1024 9,652 / 4,164 (5.7k
# points, 10 steps), tiny 8x128 13,092 / 3,818 (8k points, 7 steps), tiny 8x1024 791,044 / 16,109.
QUADRATIC_SCAN_ELEMENTS_PER_STEP = 256
# arith.cmpf predicates
_OEQ, _OGE, _OLE, _UNO = 1, 3, 5, 14
# The first k positions of a sort (topk) by k rounds of selection up to this k (each round a few
# reductions over the row: IR grows with k), by ranking every element beyond it.
SELECTION_MAX_K = 16


@register_pass
@dataclass
class ConvertTmTensor(ModulePass):
    """Rewrite torch-mlir's `tm_tensor.scan`, `sort` and `scatter` into `linalg.generic`s and `ipu.scatter`.

    Each becomes reductions over one extra loop comparing loop indices, which ipu-plan cuts
    across tiles like any reduction; a scan too long for that on the target's tiles becomes
    log2(n) element-wise steps adding a shifted copy instead (the module docstring of
    lowering/convert_tm_tensor.py has the semantics). A scatter becomes `ipu.scatter` on rows
    (work linear in the updates), or under `linalg-only` generics too. An op of another unknown dialect, a `tm_tensor` op not converted
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

    linalg_only: bool = field(
        default=False,
        metadata={
            "help": "plain upstream linalg only (the ExecutionEngine reference's form): scatters compare every update with every position"
        },
    )

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
                _convert(op, tiles, self.linalg_only)
            except IpuError as error:
                errors.append(error)
        if len(errors) == 1:
            raise errors[0]
        if errors:
            raise ExceptionGroup(f"{self.name} failed", errors)


def _convert(op: ir.Operation, tiles: int, linalg_only: bool) -> None:
    dialect, _, kind = op.name.partition(".")
    if dialect != DIALECT:
        raise IpuError(f"'{op.name}' is not supported: ipu-mlir does not know the {dialect} dialect", op.location)
    scatter = functools.partial(tm_tensor_scatter.scatter, linalg_only=linalg_only)
    rewrite = {"scan": functools.partial(_scan, tiles=tiles), "sort": _sort, "scatter": scatter}.get(kind)
    if rewrite is None:
        raise build.refusal(op, "is not converted by ipu-convert-tm-tensor")
    for value in [*op.operands, *op.results]:
        if not isinstance(value.type, ir.RankedTensorType) or not value.type.has_static_shape:
            raise build.refusal(op, f"has dynamic shapes ({value.type}), which ipu-mlir does not support")
    with ir.InsertionPoint(op), op.location:
        replacements = rewrite(op)
    for result, value in zip(op.results, replacements):
        if value is not None:
            result.replace_all_uses_with(value)
    op.erase()


# --- scan ----------------------------------------------------------------------------------


def _scan(op: ir.Operation, tiles: int) -> list[ir.Value | None]:
    dim = ir.IntegerAttr(op.attributes["dimension"]).value
    inclusive = ir.BoolAttr(op.attributes["inclusive"]).value
    x, _, accumulator = op.operands
    combine = build.combiner(op.regions[0].blocks[0])
    if combine is None:
        raise build.refusal(op, "has a region that is not one associative combiner of its two arguments (addf, mulf, addi, max, min, ...)")
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
            same = build.map(rank, range(rank))
            scanned = generic(
                [accumulator, shifted],
                tensor.empty(source.shape, element),
                [build.map(rank, outer), same, same],
                lambda a, b, _: build.op(combine, a, b),
            )
    last = None
    if build.used(op.results[1]):  # the accumulator's final value: the last position of the scan
        last = build.slice(scanned, dim, length - 1, ir.RankedTensorType(accumulator.type))
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
            [accumulator],
            tensor.empty(source.shape, element),
            [build.map(rank, outer), build.map(rank, range(rank))],
            lambda value, _: value,
        )

    def body(value: ir.Value, acc: ir.Value) -> ir.Value:
        keep = build.cmpi(build.SLE if inclusive else build.SLT, build.index(rank), build.index(dim))
        return build.op(combine, build.select(keep, value, identity), acc)

    return generic(
        [x], init, [build.map(rank + 1, build.replaced(rank, dim, rank)), build.map(rank + 1, range(rank))], body, reductions=[rank]
    )


def _log_step_scan(x: ir.Value, dim: int, combine: str, identity: ir.Value) -> ir.Value:
    """Hillis-Steele: y (+)= y shifted by 1, 2, 4, ... along `dim` (ceil(log2 n) element-wise steps)."""
    source = ir.RankedTensorType(x.type)
    same = build.map(source.rank, range(source.rank))
    scanned, step = x, 1
    while step < source.shape[dim]:
        shifted = _shifted(scanned, dim, step, identity)
        empty = tensor.empty(source.shape, source.element_type)
        scanned = generic([scanned, shifted], empty, [same] * 3, lambda a, b, _: build.op(combine, a, b))
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


# --- sort ----------------------------------------------------------------------------------


def _sort(op: ir.Operation) -> list[ir.Value | None]:
    dim = ir.IntegerAttr(op.attributes["dimension"]).value
    operands = list(op.operands)
    length = ir.RankedTensorType(operands[0].type).shape[dim]
    # topk: every reader takes the first k positions; those are computed alone, and the slices
    # read them instead (now whole, or still the first k of a larger k).
    used = [m for m, result in enumerate(op.results) if build.used(result)]
    if not used:  # a sort nothing reads (fuzz seed 82): nothing to compute
        return [None] * len(operands)
    leading = {m: _leading_slices(op.results[m], dim) for m in used}
    firsts = None
    if all(leading.values()):
        count = max(ir.RankedTensorType(s.result.type).shape[dim] for slices in leading.values() for s in slices)
        selector = _selector(op.regions[0].blocks[0])
        if selector is not None and count <= SELECTION_MAX_K:
            firsts = _selected(operands, used, dim, count, *selector)
        else:
            ranks = _ranks(op, dim)
            firsts = {m: _permuted(operands[m], ranks, dim, count) for m in used}
        for m in used:
            for slice_op in leading[m]:
                slice_op.operation.operands[0] = firsts[m]
        return [None] * len(operands)
    ranks = _ranks(op, dim)
    return [_permuted(operands[m], ranks, dim, length) if m in used else None for m in range(len(operands))]


def _ranks(op: ir.Operation, dim: int) -> ir.Value:
    """Each element's final position: how many elements land before it."""
    operands = list(op.operands)
    source = ir.RankedTensorType(operands[0].type)
    rank = source.rank
    comparator = op.regions[0].blocks[0]
    arguments = list(comparator.arguments)
    # The operands the comparator reads (torch's: the values, not their positions).
    compared = [m for m in range(len(operands)) if build.used(arguments[2 * m]) or build.used(arguments[2 * m + 1])]
    selector = _selector(comparator)
    by_value = selector[1] if selector is not None and selector[0] == "arith.cmpf" else None
    count = len(compared)
    at_i, at_k = build.map(rank + 1, range(rank)), build.map(rank + 1, build.replaced(rank, dim, rank))
    i64 = ir.IntegerType.get_signless(64)
    true = build.constant(ir.IntegerAttr.get(ir.IntegerType.get_signless(1), 1))
    zero = build.constant(ir.IntegerAttr.get(i64, 0))

    def rank_body(*arguments: ir.Value) -> ir.Value:
        at_position, at_other, acc = arguments[:count], arguments[count : 2 * count], arguments[-1]
        if by_value is not None:  # a float sort: NaN after every value ascending, before descending
            forward, reverse = _by_value(by_value, at_other[0], at_position[0]), _by_value(by_value, at_position[0], at_other[0])
        else:
            forward = _compare(comparator, compared, at_other, at_position)  # c(x_k, x_i)
            reverse = _compare(comparator, compared, at_position, at_other)  # c(x_i, x_k)
        strictly = build.op("arith.andi", forward, build.op("arith.xori", reverse, true))
        tie_before = build.op(
            "arith.andi", build.cmpi(build.EQ, forward, reverse), build.cmpi(build.SLT, build.index(rank), build.index(dim))
        )
        precedes = build.op("arith.ori", strictly, tie_before)
        return build.op("arith.addi", ir.Operation.create("arith.extui", results=[i64], operands=[precedes]).result, acc)

    inputs = [operands[m] for m in compared]
    return generic(inputs + inputs, filled(source.shape, i64, zero), [at_i] * count + [at_k] * count + [at_i], rank_body, [rank])


# arith.cmpf / arith.cmpi predicates of a comparator `c(a, b)` that puts the larger or the
# smaller first, and the reduction finding that one.
_FIRST_OF = {
    ("arith.cmpf", 2): "arith.maximumf",  # ogt
    ("arith.cmpf", 3): "arith.maximumf",  # oge
    ("arith.cmpf", 4): "arith.minimumf",  # olt
    ("arith.cmpf", 5): "arith.minimumf",  # ole
    ("arith.cmpi", 2): "arith.minsi",  # slt
    ("arith.cmpi", 3): "arith.minsi",  # sle
    ("arith.cmpi", 4): "arith.maxsi",  # sgt
    ("arith.cmpi", 5): "arith.maxsi",  # sge
}


def _by_value(reduction: str, a: ir.Value, b: ir.Value) -> ir.Value:
    """Whether `a` may stay before `b` in PyTorch's float order: NaN above every value (and
    equal to NaN), descending when `reduction` takes the largest first."""
    if reduction == "arith.maximumf":
        return build.op("arith.ori", build.cmpf(_OGE, a, b), build.cmpf(_UNO, a, a))
    return build.op("arith.ori", build.cmpf(_OLE, a, b), build.cmpf(_UNO, b, b))


def _selector(comparator: ir.Block) -> tuple[str, str] | None:
    """(compare op, reduction) when the comparator is one comparison `a_0 <op> b_0` of the first
    operand that orders by value (torch's sort and topk)."""
    operations = list(comparator.operations)
    if len(operations) != 2 or operations[-1].operands[0] != operations[0].results[0]:
        return None
    compare = operations[0]
    name = compare.operation.name
    if name not in ("arith.cmpf", "arith.cmpi") or list(compare.operands) != list(comparator.arguments)[:2]:
        return None
    reduction = _FIRST_OF.get((name, ir.IntegerAttr(compare.attributes["predicate"]).value))
    return (name, reduction) if reduction else None


def _selected(operands: list[ir.Value], used: list[int], dim: int, count: int, compare: str, reduction: str) -> dict[int, ir.Value]:
    """The first `count` positions of a stable sort by the first operand's value, by selection:
    `count` rounds each finding the first remaining value (a reduction), the lowest position
    holding it (ties in order), and marking that position taken. Work count x n per row
    instead of n^2 (topk(5) over a vocabulary)."""
    values = operands[0]
    source = ir.RankedTensorType(values.type)
    rank, length, element = source.rank, source.shape[dim], source.element_type
    i1, i64 = ir.IntegerType.get_signless(1), ir.IntegerType.get_signless(64)
    one = list(source.shape)
    one[dim] = 1
    at_k, here = build.map(rank + 1, build.replaced(rank, dim, rank)), build.map(rank + 1, range(rank))
    same = build.map(rank, range(rank))
    taken_at = ir.AffineMap.get(rank, 0, [ir.AffineConstantExpr.get(0) if d == dim else ir.AffineDimExpr.get(d) for d in range(rank)])
    floats = compare == "arith.cmpf"
    if reduction == "arith.minimumf":  # NaN last ascending: the smallest number first (NaN when only NaNs remain)
        reduction = "arith.minnumf"
    excluded = identity_constant(reduction, element)
    beyond = build.constant(ir.IntegerAttr.get(i64, length))
    twice = build.constant(ir.IntegerAttr.get(i64, 2 * length))
    equal = ir.IntegerAttr.get(i64, _OEQ if floats else build.EQ)
    true = build.constant(ir.IntegerAttr.get(i1, 1))
    nan = build.constant(ir.FloatAttr.get(element, float("nan"))) if floats else None
    taken = filled(source.shape, i1, build.constant(ir.IntegerAttr.get(i1, 0)))
    rounds: dict[int, list[ir.Value]] = {m: [] for m in used}
    for _ in range(count):
        best = generic(
            [values, taken],
            filled(one, element, excluded),
            [at_k, at_k, here],
            lambda value, gone, acc: build.op(reduction, build.select(gone, excluded, value), acc),
            [rank],
        )

        def lowest(value: ir.Value, gone: ir.Value, first: ir.Value, acc: ir.Value) -> ir.Value:
            """The lowest remaining position holding `first`; among floats, else the lowest NaN
            (NaN is above every value) as n + its position."""
            same_value = ir.Operation.create(compare, results=[i1], operands=[value, first], attributes={"predicate": equal}).result
            remaining = build.op("arith.xori", gone, true)
            key = build.select(build.op("arith.andi", same_value, remaining), build.index(rank), twice if floats else beyond)
            if floats:
                nan_left = build.op("arith.andi", build.cmpf(_UNO, value, value), remaining)
                key = build.select(nan_left, build.op("arith.minsi", key, build.op("arith.addi", build.index(rank), beyond)), key)
            return build.op("arith.minsi", key, acc)

        position = generic([values, taken, best], filled(one, i64, twice if floats else beyond), [at_k, at_k, here, here], lowest, [rank])
        if floats:  # a NaN chosen: n + its position
            fallback = generic(
                [position, best],
                tensor.empty(one, element),
                [same] * 3,
                lambda key, value, _: build.select(build.cmpi(build.SGE, key, beyond), nan, value),
            )
            position = generic(
                [position],
                tensor.empty(one, i64),
                [same] * 2,
                lambda key, _: build.select(build.cmpi(build.SGE, key, beyond), build.op("arith.subi", key, beyond), key),
            )
            best = fallback
        taken = generic(
            [taken, position],
            tensor.empty(source.shape, i1),
            [same, taken_at, same],
            lambda gone, chosen, _: build.op("arith.ori", gone, build.cmpi(build.EQ, build.index(dim), chosen)),
        )
        for m in used:
            if m == 0:
                rounds[m].append(best)
                continue
            element_m = ir.RankedTensorType(operands[m].type).element_type
            pick = build.pick(element_m)
            zero = identity_constant(pick, element_m)
            rounds[m].append(
                generic(
                    [operands[m], position],
                    filled(one, element_m, zero),
                    [at_k, here, here],
                    lambda value, chosen, acc, zero=zero, pick=pick: build.op(
                        pick, build.select(build.cmpi(build.EQ, build.index(rank), chosen), value, zero), acc
                    ),
                    [rank],
                )
            )
    result_shape = list(source.shape)
    result_shape[dim] = count
    firsts = {}
    for m, parts in rounds.items():
        element_m = ir.RankedTensorType(operands[m].type).element_type
        firsts[m] = parts[0] if count == 1 else tensor.ConcatOp(ir.RankedTensorType.get(result_shape, element_m), dim, parts).result
    return firsts


def _leading_slices(value: ir.Value, dim: int) -> list[ir.OpView] | None:
    """The uses of `value` when every one is a unit-stride slice of its first positions along
    `dim`, whole along the other dimensions; else None."""
    full = list(ir.RankedTensorType(value.type).shape)
    uses = [use.owner for use in value.uses]
    for user in uses:
        if user.operation.name != "tensor.extract_slice" or len(user.operands) != 1:
            return None
        sizes = list(ir.DenseI64ArrayAttr(user.attributes["static_sizes"]))
        offsets = list(ir.DenseI64ArrayAttr(user.attributes["static_offsets"]))
        strides = list(ir.DenseI64ArrayAttr(user.attributes["static_strides"]))
        whole = [size == extent for d, (size, extent) in enumerate(zip(sizes, full)) if d != dim]
        if any(offsets) or any(stride != 1 for stride in strides) or not all(whole) or len(sizes) != len(full):
            return None
    return uses or None


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


def _permuted(values: ir.Value, ranks: ir.Value, dim: int, positions: int) -> ir.Value:
    """out[.., p, ..] = values[.., k, ..] for the k whose rank is p (one k per p), for the
    first `positions` p."""
    source = ir.RankedTensorType(values.type)
    rank, element = source.rank, source.element_type
    shape = list(source.shape)
    shape[dim] = positions
    combine = build.pick(element)
    identity = identity_constant(combine, element)

    def body(position_rank: ir.Value, value: ir.Value, acc: ir.Value) -> ir.Value:
        here = build.cmpi(build.EQ, position_rank, build.index(dim))
        return build.op(combine, build.select(here, value, identity), acc)

    at_k = build.map(rank + 1, build.replaced(rank, dim, rank))
    init = filled(shape, element, identity)
    return generic([ranks, values], init, [at_k, at_k, build.map(rank + 1, range(rank))], body, reductions=[rank])
