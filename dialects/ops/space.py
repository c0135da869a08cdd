"""Compute ops seen as loops: the iteration space of an L1 compute op, and which piece of each
operand a box of that space reads. Each op's record (`registry.ComputeOp.space`) builds its
`Space`; this module holds what they share.

The planner cuts an iteration space into parts (`ipu.partition`) and the scheduler gives each
tile one box; `Access.region` says which interval of an operand dimension a part needs, so
the scheduler can bring it (exchange) and the codelet can run on it. Convolution windows with
padding read a clipped interval and pad the rest on the tile (`Region.pad_low/high`).

    ipu.matmul  (B.., M, K) x (B.., K, N):  loops (b.., m, n, k), k a sum
    ipu.conv    loops (n, f, oh, ow, c, kh, kw); the input's H is a window over (oh, kh)
    linalg.generic: its own loops and indexing maps (`loop_extents` gives their sizes)
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from mlir import ir

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
    dilation * d[window] - pad_low` with the window loop never cut (its record keeps it whole,
    and `Space.admits` holds every partition to that); "groups": the input channels of the
    groups that output channels `d[loop]` belong to."""

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
        if clipped_hi <= clipped_lo:  # a window over padding only: nothing read, all padding
            edge = min(max(first, 0), self.size)
            return Region(edge, edge, last - first, 0)
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

    def refusal(self, blocks: tuple[int, ...]) -> str | None:
        """Why cutting the loops into `blocks` would compute a wrong result, None if it would
        not (`admits`): every path of ipu-plan goes through this check, and ipu-schedule reads
        no partition it refuses. Loops are judged one by one (`block_refusal`)."""
        if len(blocks) != len(self.extents):
            return f"gives {len(blocks)} block sizes for {len(self.extents)} loops"
        return next((refusal for loop, block in enumerate(blocks) if (refusal := self.block_refusal(loop, block))), None)

    def block_refusal(self, loop: int, block: int) -> str | None:
        """Why cutting `loop` into `block`s would compute a wrong result, None if it would not:
        a loop the record keeps whole (a window's, a softmax's row) stays whole, a summed loop
        is cut only when its partial results have an associative combiner, and a cut loop's
        blocks are multiples of `multiples`."""
        extent = self.extents[loop]
        if block >= extent:
            return None
        if block < 1:
            return f"cuts loop {loop} into blocks of {block}"
        if loop in self.reductions and self.combiner != SUM and self.combiner not in COMBINERS:
            return f"cuts summed loop {loop} into blocks of {block}, but its partial results have no associative combiner"
        if not self.splittable[loop]:
            return f"cuts loop {loop} (extent {extent}) into blocks of {block}, but the op's record keeps it whole"
        if block % self.multiple(loop):
            return f"cuts loop {loop} into blocks of {block}, not a multiple of {self.multiple(loop)}"
        return None

    def admits(self, blocks: tuple[int, ...]) -> bool:
        """Whether cutting the loops into `blocks` computes the op's result (`refusal`)."""
        return self.refusal(blocks) is None

    @property
    def parallel(self) -> tuple[int, ...]:
        return tuple(d for d in range(len(self.extents)) if d not in self.reductions)

    def flops(self) -> int:
        return 2 * math.prod(self.extents)


def shape(value: ir.Value) -> tuple[int, ...]:
    return tuple(ir.RankedTensorType(value.type).shape)


def loop_extents(op: ir.OpView) -> tuple[int, ...]:
    """The extent of each loop of a `linalg.generic`: the size of an operand dimension its
    indexing map indexes by that loop alone (the one place extents are computed: the planner's
    spaces, the codelet interpreter and the cost model read it)."""
    maps = [ir.AffineMapAttr(a).value for a in ir.ArrayAttr(op.attributes["indexing_maps"])]
    extents: list[int | None] = [None] * maps[0].n_dims
    for value, amap in zip(op.operands, maps):
        sizes = tuple(ir.ShapedType(value.type).shape) if isinstance(value.type, ir.ShapedType) else ()
        for expr, size in zip(amap.results, sizes):
            if isinstance(expr, ir.AffineDimExpr) and extents[expr.position] is None:
                extents[expr.position] = size
    if None in extents:
        raise op_error(op, "has a loop whose extent no operand dimension gives")
    return tuple(extents)
