"""Compute ops seen as loops: the iteration space of `ipu.matmul`, `ipu.conv` and
`linalg.generic`, and which piece of each operand a box of that space reads.

The planner cuts an iteration space into parts (`ipu.partition`) and the scheduler gives each
tile one box; `Access.region` says which interval of an operand dimension a part needs, so
the scheduler can bring it (exchange) and the codelet can run on it. Convolution windows with
padding read a clipped interval and pad the rest on the tile (`Region.pad_low/high`).

    ipu.matmul  (B.., M, K) x (B.., K, N):  loops (b.., m, n, k), k a sum
    ipu.conv    loops (n, f, oh, ow, c, kh, kw); the input's H is a window over (oh, kh)
    linalg.generic: its own loops and indexing maps
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

from mlir import ir

from ipu_mlir.dialects import ipu
from ipu_mlir.target.diagnostics import op_error

# Ops that combine partial results of a reduction cut across tiles (associative and
# commutative), with their identity: floats as Python floats, integers as signed values.
SUM = "sum"  # matmul and convolution partial sums
COMBINERS = {
    "arith.addf": 0.0,
    "arith.mulf": 1.0,
    "arith.maximumf": float("-inf"),
    "arith.minimumf": float("inf"),
    "arith.maxnumf": float("-inf"),
    "arith.minnumf": float("inf"),
    "arith.addi": 0,
    "arith.muli": 1,
    "arith.maxsi": "min",
    "arith.minsi": "max",
    "arith.maxui": 0,
    "arith.minui": -1,
    "arith.andi": -1,
    "arith.ori": 0,
    "arith.xori": 0,
}


@dataclass(frozen=True)
class Region:
    lo: int
    hi: int
    pad_low: int = 0
    pad_high: int = 0


@dataclass(frozen=True)
class Access:
    """How one operand dimension of size `size` is indexed by the loops.

    kind "dim": `x = d[loop]`; "const": `x = 0`; "window": `x = stride * d[loop] +
    dilation * d[window] - pad_low` with the window loop never partitioned; "groups": the input
    channels of the groups that output channels `d[loop]` belong to."""

    kind: str
    size: int
    loop: int | None = None
    stride: int = 1
    dilation: int = 1
    window: int = 1
    pad_low: int = 0
    per_group: tuple[int, int] = (1, 1)  # (output channels, input channels) per group

    def region(self, lo: int, hi: int) -> Region:
        """The interval read by loop values [lo, hi) of `self.loop`."""
        if self.kind == "dim":
            return Region(lo, hi)
        if self.kind == "const":
            return Region(0, self.size)
        if self.kind == "groups":
            out_per_group, in_per_group = self.per_group
            return Region(lo // out_per_group * in_per_group, ((hi - 1) // out_per_group + 1) * in_per_group)
        first = self.stride * lo - self.pad_low
        last = self.stride * (hi - 1) + self.dilation * (self.window - 1) - self.pad_low + 1
        clipped_lo, clipped_hi = max(first, 0), min(last, self.size)
        return Region(clipped_lo, clipped_hi, clipped_lo - first, last - clipped_hi)


@dataclass(frozen=True)
class Space:
    """The loops of a compute op and the accesses of its operands and result."""

    op: ir.OpView
    extents: tuple[int, ...]
    reductions: tuple[int, ...]  # loops summed (or combined) into the result
    splittable: tuple[bool, ...]
    operands: tuple[tuple[Access, ...], ...]  # inputs only (the result's init is separate)
    result: tuple[int, ...]  # the loop of each result dimension
    element_type: ir.Type
    combiner: str | None  # how partial results of split reductions combine, None: never split
    multiples: tuple[int, ...] | None = None  # a cut loop's blocks must be multiples of these

    def multiple(self, loop: int) -> int:
        return self.multiples[loop] if self.multiples else 1

    @property
    def parallel(self) -> tuple[int, ...]:
        return tuple(d for d in range(len(self.extents)) if d not in self.reductions)

    def flops(self) -> int:
        return 2 * math.prod(self.extents)


def space_of(op: ir.OpView) -> Space:
    if isinstance(op, ipu.MatmulOp):
        return _matmul(op)
    if isinstance(op, ipu.ConvOp):
        return _conv(op)
    if op.operation.name == "linalg.generic":
        return _generic(op)
    raise op_error(op, "is not a compute op the planner knows")


def _shape(value: ir.Value) -> tuple[int, ...]:
    return tuple(ir.RankedTensorType(value.type).shape)


def _matmul(op: ipu.MatmulOp) -> Space:
    lhs, rhs = _shape(op.lhs), _shape(op.rhs)
    batch = len(lhs) - 2
    m, k, n = lhs[-2], lhs[-1], rhs[-1]
    extents = lhs[:-2] + (m, n, k)
    b = list(range(batch))
    dims = lambda loops, shape: tuple(Access("dim", s, l) for l, s in zip(loops, shape))  # noqa: E731
    return Space(
        op,
        extents,
        reductions=(batch + 2,),
        splittable=(True,) * len(extents),
        operands=(dims(b + [batch, batch + 2], lhs), dims(b + [batch + 2, batch + 1], rhs)),
        result=tuple(b + [batch, batch + 1]),
        element_type=ir.RankedTensorType(op.result.type).element_type,
        combiner=SUM,
    )


def _conv(op: ipu.ConvOp) -> Space:
    (n, c, h, w), (f, cg, kh, kw) = _shape(op.input), _shape(op.filter)
    oh, ow = _shape(op.result)[2:]
    (sh, sw), (dh, dw), (pt, pl, _, _), groups = op.strides, op.dilations, op.padding, op.groups
    # Loops: 0 n, 1 f, 2 oh, 3 ow, 4 c (within a group), 5 kh, 6 kw.
    if groups == 1:
        channel = Access("dim", c, 4)
    else:
        channel = Access("groups", c, 1, per_group=(f // groups, cg))
    return Space(
        op,
        (n, f, oh, ow, cg, kh, kw),
        reductions=(4, 5, 6),
        splittable=(True, True, True, True, groups == 1, False, False),
        operands=(
            (Access("dim", n, 0), channel, Access("window", h, 2, sh, dh, kh, pt), Access("window", w, 3, sw, dw, kw, pl)),
            (Access("dim", f, 1), Access("dim", cg, 4), Access("dim", kh, 5), Access("dim", kw, 6)),
        ),
        result=(0, 1, 2, 3),
        element_type=ir.RankedTensorType(op.result.type).element_type,
        combiner=SUM,
        # A tile's output channels are whole groups, so it reads whole groups of input channels.
        multiples=(1, f // groups, 1, 1, 1, 1, 1),
    )


def _generic(op: ir.OpView) -> Space:
    maps = [ir.AffineMapAttr(a).value for a in ir.ArrayAttr(op.attributes["indexing_maps"])]
    iterators = [str(a) for a in ir.ArrayAttr(op.attributes["iterator_types"])]
    if len(op.results) != 1:
        raise op_error(op, f"with {len(op.results)} results is not supported by ipu-plan (one result per op; ipu-convert-to-ipu splits generics whose results do not read each other's accumulators, unlike an arg-max)")
    num_inputs = len(op.operands) - 1
    extents = [0] * maps[0].n_dims
    windows: set[int] = set()
    accesses = []
    for value, amap in zip(op.operands, maps):
        shape = _shape(value)
        row = []
        for expr, size in zip(amap.results, shape):
            access = _access(op, expr, size, windows)
            if access.kind == "dim":
                extents[access.loop] = size
            row.append(access)
        accesses.append(tuple(row))
    # A window's extent is that of its window loop, known from the operand indexed by it.
    accesses = [tuple(dataclasses.replace(a, window=extents[a.window_loop]) if isinstance(a, _WindowAccess) else a for a in row) for row in accesses]
    reductions = tuple(d for d, it in enumerate(iterators) if "reduction" in it)
    result_loops = tuple(a.loop for a in accesses[-1])
    if any(a.kind != "dim" for a in accesses[-1]) or set(result_loops) & set(reductions):
        raise op_error(op, "has a result indexing map that is not a projection of its parallel loops; ipu-plan cannot place it")
    combiner = _combiner(op) if reductions else None
    splittable = tuple(d not in windows and (d not in reductions or combiner is not None) for d in range(len(extents)))
    return Space(
        op,
        tuple(extents),
        reductions,
        splittable,
        tuple(accesses[:num_inputs]),
        result_loops,
        ir.RankedTensorType(op.results[0].type).element_type,
        combiner=combiner,
    )


def _combiner(op: ir.OpView) -> str | None:
    """The op folding each value into the accumulator, when the body is
    `yield combine(f(inputs), acc)` with the accumulator used nowhere else: then the
    reduction can be cut across tiles and the partial results combined."""
    block = op.regions[0].blocks[0]
    accumulator = block.arguments[len(block.arguments) - 1]
    terminator = list(block.operations)[-1]
    value = terminator.operands[0]
    if isinstance(value.owner, ir.Block) or value.owner.name not in COMBINERS:
        return None
    uses = [use.owner for use in accumulator.uses]
    if len(uses) != 1 or uses[0] != value.owner or list(value.owner.operands).count(accumulator) != 1:
        return None
    return value.owner.name


@dataclass(frozen=True)
class _WindowAccess(Access):
    window_loop: int = 0


def _access(op: ir.OpView, expr: ir.AffineExpr, size: int, windows: set[int]) -> Access:
    if isinstance(expr, ir.AffineDimExpr):
        return Access("dim", size, expr.position)
    if isinstance(expr, ir.AffineConstantExpr) and expr.value == 0 and size == 1:
        return Access("const", size)
    if isinstance(expr, ir.AffineAddExpr):
        terms = [_scaled_dim(t) for t in (expr.lhs, expr.rhs)]
        if all(terms):
            (stride, out_loop), (dilation, window_loop) = terms
            windows.add(window_loop)
            return _WindowAccess("window", size, out_loop, stride, dilation, 0, 0, window_loop=window_loop)
    raise op_error(op, f"has an indexing expression '{expr}' that ipu-plan cannot place")


def _scaled_dim(expr: ir.AffineExpr) -> tuple[int, int] | None:
    if isinstance(expr, ir.AffineDimExpr):
        return (1, expr.position)
    if isinstance(expr, ir.AffineMulExpr):
        a, b = expr.lhs, expr.rhs
        if isinstance(a, ir.AffineConstantExpr):
            a, b = b, a
        if isinstance(a, ir.AffineDimExpr) and isinstance(b, ir.AffineConstantExpr):
            return (b.value, a.position)
    return None
