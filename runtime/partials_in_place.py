"""Partial sums combined where the products left them, in runs after the checked one.

A reduction cut across tiles (a matmul's k, lowering/schedule.py `combine_partials`) writes
one partial box per tile into `*_partial`, copies each combining tile's share of every box
into `*_partials` (k pieces x its share, contiguous), and sums those with a codelet. In
later runs the copies only feed that sum: here a pure sum's vertex group reads the partials
from the products' buffer through index tables made at load, summing each output run over
the k pieces in order, and the copies go. Same bytes (below), the checked plan's profile and
cycles untouched: only the host's work changes (BERT-base: the copies moved each partial
once more, about 70 MB a layer).

The combine's view over the gathered buffer, composed with the copies' pieces, is no strided
view of the products' buffer (their rows follow several product groups and k's last piece is
narrower: none of BERT's, the MLP's or MobileNetV2's are affine), so the reads go through
tables of run starts (`_sum_runs`). Runs shorter than `SHORT_RUN` are summed element by
element instead, a block of outputs at a time (`_sum_elements`): one run's sum over k is a
chain of dependent adds through memory, each waiting for the last, where a block's are
independent (a GPT-2 block at hidden 128: 15,360 runs of 1 over 16 pieces, 0.50 -> 0.17 ms).

Elided only when proven from the later plan's steps (top level, outside loops):
- the gathered buffer is written by copies from one buffer only, all before one compute
  set, whose vertex groups reading it are pure sums (`_sum_then`: codelets that
  ipu-schedule marked `ipu.combine`, a float sum from +0.0 without init, dialects/combine.py,
  as the verifier checked) reading nothing else, or such sums fused with an epilogue reading
  it only through the sum (`FusedSumInPlace`, marked `epilogue = true`), and no other step
  touches it (no other reader, no result streamed out, no loop);
- no step between the first copy and the sum writes the source (its bytes are the copies');
- the codelet's sum adds each output's k pieces one after the other (runtime/reduce.py's
  `fold` on that view: its compiled rows or its sequential path), as `_sum_runs` does: +0.0,
  then the pieces in order. The codelet's final `+ init` (+0.0) changes no sum that starts
  at +0.0; a sequential one differs from it only in the sign of zeros, which that `+ 0.0`
  makes +0.0.
A fused sum's codelet is compiled without its sum and reads it, its +0.0 init plus the sum
being the sum (never -0.0). The source then lives until the sum (`last_use`, before memory.bind_arrays pools arrays)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from mlir import ir

from ipu_mlir.dialects import ipu
from ipu_mlir.dialects.combine import CombineMark
from ipu_mlir.dialects.ops.compiled import compiled
from ipu_mlir.target.element_types import as_strided

from .codelet import body_key, compile_codelet
from .memory import Buffer
from .reduce import sum_order
from .regions import Grid, Strided
from .steps import Copy, Execute, VertexGroup

_SUMMED = (np.dtype(np.float32), np.dtype(np.float64))
# runs shorter than this are summed element by element (`_sum_elements`): at 4 both ways cost
# the same (GPT-2 block at hidden 128: 4,032 runs of 4 over 11 pieces, 0.14 ms)
SHORT_RUN = 4


@dataclass
class SumInPlace(VertexGroup):
    """A pure sum's vertex group reading the partials in the products' buffer: per output run
    (`length` contiguous elements), the start of each k piece's run in `source`."""

    source: Buffer | None = None
    # flat element index in the source of each k piece of a run: (points x runs, k), or
    # when `length` is 1 (`_sum_elements`) (k, points x box) less `offsets` (k,), one row
    # when the pieces lie at the same offsets from every element's first
    starts: np.ndarray | None = None
    offsets: np.ndarray | None = None
    into: np.ndarray | None = None  # (points x runs,): flat element index in the output
    length: int = 0
    halving: bool = False  # the k pieces summed pairwise (`_in_order`)

    def prepare(self) -> None:
        self.views = ([], [])  # never gathered nor assigned: `run` writes the output

    def run(self, check: bool) -> None:
        self.sum_into(self.outputs[0][0].data.reshape(-1))

    def sum_into(self, output: np.ndarray) -> None:
        source = self.source.data.reshape(-1)
        if self.length == 1:
            compiled(_sum_elements)(source, self.starts, self.offsets, output, self.into, self.halving)
        else:
            compiled(_sum_runs)(source, self.starts, output, self.into, self.length, self.halving)


@dataclass
class FusedSumInPlace(SumInPlace):
    """A sum fused with its epilogue (lowering/fuse.py: `conv_combine_generic_v`): the partials
    summed as `SumInPlace` does into `summed`, a (*grid, *box) array, which the codelet's
    epilogue alone (`_epilogue`) reads in place of its sum: the codelet's value there is its
    +0.0 init plus the sum, the same value (a sum from +0.0 is never -0.0; a NaN passes), so
    its epilogue runs on the same values."""

    summed: np.ndarray | None = None

    def prepare(self) -> None:
        gathered, *rest = self.inputs  # unbound once its copies go: no view of it
        self.inputs = rest
        VertexGroup.prepare(self)
        self.inputs = [gathered, *rest]
        self.views = ([self.summed.view(), *self.views[0]], self.views[1])
        self.views[0][0].flags.writeable = False
        self.write = self.writer()  # with the sum's view among its arguments

    def run(self, check: bool) -> None:
        self.sum_into(self.summed.reshape(-1))
        _run_codelet(self, check)


# bound at import: a profiler wrapping VertexGroup.run (bench/simulator_speed.py --breakdown)
# then times a fused sum once, as itself
_run_codelet = VertexGroup.run


def _sum_runs(source, starts, output, into, length, halving):  # pragma: no cover - compiled by numba (dialects/ops/compiled.py)
    """output[into[i] : into[i] + length] = the runs at source[starts[i, k]] summed over k as
    runtime/reduce.py's `fold` does (no fused multiply-add): +0.0 then each in order (`_rows`),
    or `halving` (`_halving`: x[j] + x[j + half], the odd one out onto the first), then the
    codelet's + 0.0 init. The first halving round reads the runs where they lie, and every
    copy is an element loop: numba's slice assignment costs more than a run of 7 to 14 floats
    (MobileNetV2's halving sums 3x faster than copying the runs into scratch first)."""
    count = starts.shape[1]
    scratch = np.empty((max(count // 2, 1), length), output.dtype)
    for i in range(starts.shape[0]):
        out = output[into[i] : into[i] + length]
        if not halving:
            for e in range(length):
                out[e] = 0
            for k in range(count):
                row = source[starts[i, k] : starts[i, k] + length]
                for e in range(length):
                    out[e] += row[e]
            continue
        if count == 1:
            first = source[starts[i, 0] : starts[i, 0] + length]
            for e in range(length):
                out[e] = first[e] + 0.0
            continue
        half = count // 2
        for j in range(half):
            low = source[starts[i, j] : starts[i, j] + length]
            high = source[starts[i, j + half] : starts[i, j + half] + length]
            row = scratch[j]
            for e in range(length):
                row[e] = low[e] + high[e]
        if count % 2:
            odd, first = source[starts[i, count - 1] : starts[i, count - 1] + length], scratch[0]
            for e in range(length):
                first[e] = first[e] + odd[e]
        n = half
        while n > 1:
            half = n // 2
            for j in range(half):
                for e in range(length):
                    scratch[j, e] = scratch[j, e] + scratch[j + half, e]
            if n % 2:
                for e in range(length):
                    scratch[0, e] = scratch[0, e] + scratch[n - 1, e]
            n = half
        for e in range(length):
            out[e] = scratch[0, e] + 0.0


def _sum_elements(source, starts, offsets, output, into, halving):  # pragma: no cover - compiled by numba (dialects/ops/compiled.py)
    """output[into[i]] = the elements source[starts[k, i] + offsets[k]] (starts[0, i] when
    `starts` has one row) summed over k as `_sum_runs` sums a run of one, a block of outputs at
    a time: each add of a step (a piece, or a halving round) for every output of the block
    before the next step, so the adds of a block are independent (one output's are a chain).
    Every output's adds are `_sum_runs`', in its order."""
    count, total, shared = offsets.shape[0], starts.shape[1], starts.shape[0] == 1
    block = 512  # outputs: the block's scratch stays in the first-level cache
    scratch = np.empty((max(count // 2, 1), block), output.dtype)
    for first in range(0, total, block):
        n = min(block, total - first)
        acc = scratch[0]
        if not halving:
            for b in range(n):
                acc[b] = 0
            for k in range(count):
                pieces, at = starts[0 if shared else k], offsets[k]
                for b in range(n):
                    acc[b] += source[pieces[first + b] + at]
        elif count == 1:
            pieces, at = starts[0], offsets[0]
            for b in range(n):
                acc[b] = source[pieces[first + b] + at] + 0.0
        else:
            half = count // 2
            for j in range(half):
                row, low, high = scratch[j], starts[0 if shared else j], starts[0 if shared else j + half]
                at_low, at_high = offsets[j], offsets[j + half]
                for b in range(n):
                    row[b] = source[low[first + b] + at_low] + source[high[first + b] + at_high]
            if count % 2:
                odd, at = starts[0 if shared else count - 1], offsets[count - 1]
                for b in range(n):
                    acc[b] = acc[b] + source[odd[first + b] + at]
            m = half
            while m > 1:
                half = m // 2
                for j in range(half):
                    low, high = scratch[j], scratch[j + half]
                    for b in range(n):
                        low[b] = low[b] + high[b]
                if m % 2:
                    last = scratch[m - 1]
                    for b in range(n):
                        acc[b] = acc[b] + last[b]
                m = half
            for b in range(n):
                acc[b] = acc[b] + 0.0
        for b in range(n):
            output[into[first + b]] = acc[b]


def elide(planner) -> int:
    """Replaces, in an unchecked `planner`'s top-level steps, each proven copies-then-sum by
    `SumInPlace` groups (module docstring); adjusts `last_use` and forgets the gathered
    buffers' uses. The number of copies elided."""
    steps, positions = planner.steps, planner.positions
    touching: dict[str, list[int]] = {}  # buffer -> the steps (indices into `steps`) touching it
    for index, step in enumerate(steps):
        for name in _touched(step):
            touching.setdefault(name, []).append(index)
    replaced: dict[int, Execute] = {}
    dropped: set[int] = set()
    memo: dict[tuple, object] = {}  # layers of one shape repeat their copies' and sums' layouts: tables made once
    for name, found in touching.items():
        gathered = planner.buffers[name]
        proven = _proven(planner, steps, gathered, found, touching, memo)
        if proven is None:
            continue
        copies, at, groups = proven
        source = steps[copies[0]].source
        execute = replaced.get(at, steps[at])
        replaced[at] = Execute([groups.get(id(group), group) for group in execute.groups])
        dropped.update(copies)
        planner.last_use[source.name] = max(planner.last_use[source.name], positions[at])
        del planner.first_use[name], planner.last_use[name]
    planner.steps[:] = [replaced.get(i, step) for i, step in enumerate(steps) if i not in dropped]
    planner.release[:] = [dead for i, dead in enumerate(planner.release) if i not in dropped]
    planner.positions[:] = [p for i, p in enumerate(positions) if i not in dropped]
    return len(dropped)


def _touched(step) -> set[str]:
    """The buffers a step reads or writes (a loop: all of its body's, so never elided)."""
    if isinstance(step, Copy):
        return {step.source.name, step.dest.name}
    if isinstance(step, Execute):
        return {buffer.name for group in step.groups for buffer, _ in group.inputs + group.outputs}
    if hasattr(step, "steps"):  # a Repeat
        return {name for inner in step.steps for name in _touched(inner)}
    if hasattr(step, "buffers"):  # an all-reduce (runtime/replicated.py)
        return {buffer.name for buffer in step.buffers}
    return {step.buffer.name}  # a host stream


def _proven(planner, steps: list, gathered: Buffer, found: list[int], touching: dict[str, list[int]], memo: dict):
    """(the copies' step indices, the sum's step index, {id(group): its SumInPlace}) if the
    copies into `gathered` may go, else None."""
    if gathered.resident:
        return None
    copies = [i for i in found if isinstance(steps[i], Copy) and steps[i].dest is gathered and steps[i].source is not gathered]
    if not copies or len(copies) != len(found) - 1 or not isinstance(steps[found[-1]], Execute):
        return None  # one compute set after the copies, and nothing else
    at, sources = found[-1], {steps[i].source.name for i in copies}
    if len(sources) != 1:
        return None
    source = steps[copies[0]].source
    if source.resident or source.dtype != gathered.dtype or source.dtype not in _SUMMED:
        return None
    copied = set(copies)
    if any(source.name in _written(steps[i]) for i in touching[source.name] if copies[0] < i <= at and i not in copied):
        return None  # the source overwritten before the sum
    groups = [group for group in steps[at].groups if any(b is gathered for b, _ in group.inputs + group.outputs)]
    orders = [_order(planner, group, gathered, source) for group in groups]
    pieces = [piece for i in copies for piece in steps[i].pieces]
    if None in orders or not all(isinstance(reads, Strided) and isinstance(writes, Strided) for reads, writes in pieces):
        return None
    layout = (gathered.row_count, gathered.elements, *((r.base, r.shape, r.strides, w.base, w.shape, w.strides) for r, w in pieces))
    summed = {}
    for group, (halving, fused) in zip(groups, orders):
        (_, reads), (output, writes) = group.inputs[0], group.outputs[0]
        key = (layout, _grid_key(reads), None if fused else (_grid_key(writes), output.row_count, output.elements))
        if key not in memo:
            if layout not in memo:
                memo[layout] = _origins(pieces, gathered, source)
            shape = (*reads.sizes, *reads.shape[1:])  # fused: the sum its epilogue reads
            placed = np.arange(math.prod(shape)) if fused else writes.view(_numbered(output), False)
            memo[key] = _tables(reads, placed, memo[layout])
        if memo[key] is None:
            return None
        starts, offsets, into, length = memo[key]
        fields = (group.site, group.tiles, group.codelet, group.kernel, group.codelet_error, group.inputs, group.outputs)
        if fused:
            kernel = _epilogue(planner, group, memo)
            summed[id(group)] = FusedSumInPlace(
                *fields[:3], kernel, *fields[4:], source=source, starts=starts, offsets=offsets, into=into, length=length, halving=halving,
                summed=np.empty((*reads.sizes, *reads.shape[1:]), gathered.dtype),
            )  # fmt: skip
        else:
            summed[id(group)] = SumInPlace(
                *fields, source=source, starts=starts, offsets=offsets, into=into, length=length, halving=halving
            )
    return copies, at, summed


def _numbered(output: Buffer) -> np.ndarray:
    return np.arange(output.row_count * output.elements, dtype=np.int64).reshape(output.row_count, -1)


def _epilogue(planner, group: VertexGroup, memo: dict):
    """The codelet of a fused sum without its sum (`_sum_then`'s fill and adding generic):
    a clone of its IR whose first argument, now of the sum's type (the box), takes the sum's
    place, compiled and dropped (the compiled plan keeps no IR). Its fill, and a k = 1
    reduction that only added the init, were two passes over the box. Codelets of equal bodies
    share one compiled epilogue, renamed, as runtime/planner.py shares their plans."""
    rank = len(group.inputs[0][1].sizes)
    function = planner.program.function(group.codelet, ipu.CODELET_ATTR)
    body, shareable = body_key(function)
    key = (body, rank) if body is not None and shareable else (group.codelet, rank)
    if key in memo:
        return memo[key].renamed(group.codelet)
    with function.location:
        clone = function.operation.clone()
        try:
            block = clone.regions[0].blocks[0]
            constant, empty, fill, generic = list(block.operations)[:4]  # the mark's, verified
            argument = block.arguments[0]
            argument.set_type(generic.results[0].type)
            generic.results[0].replace_all_uses_with(argument)
            for op in (generic, fill, empty, constant):
                if not any(True for result in op.results for _ in result.uses):
                    op.erase()
            memo[key] = compile_codelet(clone.opview, rank)
        finally:
            clone.erase()
    return memo[key]


def _grid_key(region: Grid) -> tuple:
    return region.first, region.strides, region.sizes, region.shape


def _written(step) -> set[str]:
    if isinstance(step, Copy):
        return {step.dest.name}
    if isinstance(step, Execute):
        return {buffer.name for group in step.groups for buffer, _ in group.outputs}
    return _touched(step)  # a loop or a stream: taken as a write


def _origins(pieces: list[tuple[Strided, Strided]], gathered: Buffer, source: Buffer) -> np.ndarray:
    """Per element of `gathered` (rows x elements), the flat index of the source element the
    copies leave there (the last copy writing it), -1 where none writes: the copies run on
    element indices."""
    size = source.row_count * source.elements
    index = np.int32 if size < 2**31 else np.int64  # half the fresh pages to fault in
    origin, flat = np.full(gathered.row_count * gathered.elements, -1, index), np.arange(size, dtype=index)
    for reads, writes in pieces:
        writes.view(origin)[...] = reads.view(flat)
    return origin.reshape(gathered.row_count, gathered.elements)


def _order(planner, group: VertexGroup, gathered: Buffer, source: Buffer) -> tuple[bool, bool] | None:
    """How the codelet of `group` sums `gathered` (`_in_order`) and whether it is fused with
    an epilogue, if it is a pure sum of that buffer alone (its first argument, read nowhere
    else), into one buffer of the same type that is neither it nor `source`; else None. A pure
    sum writes its output; a fused one's sum goes to a piece its codelet reads."""
    if len(group.outputs) != 1 or group.inputs[0][0] is not gathered or any(b is gathered for b, _ in group.inputs[1:]):
        return None
    (_, reads), (output, writes) = group.inputs[0], group.outputs[0]
    if output in (gathered, source) or output.dtype != gathered.dtype or reads.strides is None or len(reads.shape) < 2:
        return None
    fused = _sum_then(planner.program.function(group.codelet, ipu.CODELET_ATTR))
    if fused is None or (not fused and (len(group.inputs) != 1 or writes.strides is None)):
        return None
    if not fused and (reads.sizes != writes.sizes or reads.shape[1:] != writes.shape):
        return None
    halving = _in_order(reads, gathered)
    return None if halving is None else (halving, fused)


def _tables(reads: Grid, placed: np.ndarray, origin: np.ndarray) -> tuple | None:
    """A pure sum's (`_order`) run starts in the source per k piece (and the pieces' offsets
    for runs of one: `SumInPlace`), its runs' starts where it puts them (`placed`: the flat
    index of each output element, in the order of a k piece) and their length, from where the
    copies took each partial (`origin`); None if it reads an element no copy writes (the
    checked run would have failed)."""
    taken = reads.view(origin, False)  # (*grid, k, *box): where each partial is in the source
    if (taken < 0).any():
        return None
    k, box = reads.shape[0], math.prod(reads.shape[1:])
    taken = np.moveaxis(taken.reshape(-1, k, box), 1, 2)  # (points, box, k)
    placed = placed.reshape(-1, box)
    length = _run_length(taken, placed)
    offsets = None
    if length < SHORT_RUN:  # every element a run of one, its pieces (k, elements): `_sum_elements`
        starts, into, length = taken.reshape(-1, k).T, placed.reshape(-1), 1
        offsets = np.zeros(k, np.int64)
        apart = starts - starts[:1]
        if (apart == apart[:, :1]).all():  # one row and the pieces' offsets: a table k times smaller to read
            starts, offsets = starts[:1], apart[:, 0].astype(np.int64)
    else:
        starts, into = taken[:, ::length, :].reshape(-1, k), placed[:, ::length].reshape(-1)
    return np.ascontiguousarray(starts, np.int64), offsets, np.ascontiguousarray(into, np.int64), length  # one compiled signature


def _run_length(taken: np.ndarray, placed: np.ndarray) -> int:
    """The longest run dividing a point's box that is contiguous in both the source (every k
    piece) and the output."""
    box = placed.shape[1]
    if box == 1:
        return 1
    steps = (np.diff(taken, axis=1) == 1).all(axis=(0, 2)) & (np.diff(placed, axis=1) == 1).all(axis=0)
    length = box
    for breaks in np.flatnonzero(~steps) + 1:  # a run must start there
        length = math.gcd(length, int(breaks))
    return length


def _in_order(reads: Grid, gathered: Buffer) -> bool | None:
    """How runtime/reduce.py's `fold` sums the codelet's view of `gathered` along its k axis:
    False one piece after the other from +0.0 (its compiled rows; its sequential path differs
    from that only in signs of zero, which the codelet's `+ 0.0` init clears), True by
    halving, None by numpy's reduction (an order of numpy's: not elided)."""
    item = gathered.dtype.itemsize
    inner = tuple(item * math.prod(reads.shape[i + 1 :]) for i in range(len(reads.shape)))
    shape, strides = (*reads.sizes, *reads.shape), tuple(s * gathered.elements * item for s in reads.strides) + inner
    x = as_strided(np.zeros(1, gathered.dtype), shape, strides, writeable=False)  # only its layout is looked at
    return sum_order(x, len(reads.sizes))


def _sum_then(function: ir.OpView | None) -> bool | None:
    """False if a codelet is a float sum of its partials from +0.0, without init (its
    `ipu.combine` mark, dialects/combine.py, which the verifier checked: `linalg.fill` of +0.0,
    then a linalg.generic adding its first argument along the leading axis into it,
    returned); True if that sum is followed by an epilogue (lowering/fuse.py), the argument
    read by the sum alone; else None."""
    mark = CombineMark.of(function)
    if mark is None or mark.combiner != "arith.addf" or mark.init:
        return None
    return mark.epilogue
