"""Redistributing a tensor between layouts as a few compact `ipu.copy` patterns.

`plan_transfers(src, dst)` moves the elements a destination layout needs (each tile's box,
see `layout.py`) out of the block layout the tensor is stored in. The work is done one
dimension at a time: along dimension `k`, each destination part intersects some source parts,
giving segments (which parts, where the piece starts in each box, how long it is). Segments
that look alike (same local starts, length and box extents) and whose part indices advance
in step form a *run*, which becomes one grid dimension of a copy; runs alike but for where
they start, starting at steady steps, become a second grid dimension. A copy is one run per
dimension, plus a grid dimension per replica and per row of the piece: so an exchange costs
a handful of ops whatever the number of tiles (one per class of edge blocks, typically).

    src: tensor<64x64> in 16x64 blocks on tiles 0..3        dst: 32x64 boxes on tiles 4, 5
    -> "ipu.copy"() {size = 1024, src_tiles = array<i64: 0, 2, 2, 2, 1>,
                     dst_tiles = array<i64: 4, 2, 1, 2, 0>,
                     src_offset = array<i64: 0, 0, 0>, dst_offset = array<i64: 0, 0, 1024>}
"""

from __future__ import annotations

import bisect
import dataclasses
import math
from dataclasses import dataclass

from mlir import ir

from ipu_mlir.dialects import ipu
from ipu_mlir.dialects.attrs import TileGrid

from .layout import Layout, product


@dataclass(frozen=True)
class Transfer:
    """The attributes of one `ipu.copy`."""

    size: int
    src_tiles: TileGrid
    dst_tiles: TileGrid
    src_offset: tuple[int, ...]
    dst_offset: tuple[int, ...]


@dataclass(frozen=True)
class _Segment:
    src_local: int
    dst_local: int
    length: int
    src_extent: int
    dst_extent: int
    src_step: int = 1  # elements between consecutive ones of the segment, in each box
    dst_step: int = 1


@dataclass(frozen=True)
class _Run:
    segment: _Segment
    src_part: int
    src_step: int
    dst_part: int
    dst_step: int
    count: int
    # A second grid level: `outer` runs like this one, shifted each time by these steps.
    outer: int = 1
    outer_src_part: int = 0
    outer_dst_part: int = 0
    outer_src_local: int = 0
    outer_dst_local: int = 0


def plan_transfers(
    src: Layout,
    dst: Layout,
    shift: tuple[int, ...] | None = None,
    box: tuple[tuple[int, int], ...] | None = None,
    steps: tuple[tuple[int, int], ...] | None = None,
) -> list[Transfer]:
    """Copies bringing every destination box its elements from `src`.

    The destination element at `x` is the source element at `x - shift`; only source elements
    inside `box` (source coordinates, default everything) are sent, and destination elements
    with no source are left alone (for `tensor.insert_slice`, `concat`, `pad`). With `steps`,
    (source step, destination step) per dimension, the elements sent are every source step-th
    from the box's start, and the t-th of them lands at `box start + shift + t * destination
    step` (a strided `extract_slice` reads with a source step, a strided `insert_slice` writes
    with a destination step): a step becomes an offset step of the copy's grid."""
    assert not src.replicate, "a source is stored once"
    rank = len(src.shape)
    shift = shift or (0,) * rank
    box = box or tuple((0, n) for n in src.shape)
    steps = steps or ((1, 1),) * rank
    runs_per_dim = [_merge_runs(_runs(_segments(src, dst, k, shift[k], box[k], steps[k]))) for k in range(rank)]
    if any(not runs for runs in runs_per_dim):
        return []
    return [_transfer(src, dst, combo) for combo in product(runs_per_dim)]


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def _segments(
    src: Layout, dst: Layout, k: int, shift: int, box: tuple[int, int], steps: tuple[int, int]
) -> dict[_Segment, list[tuple[int, int]]]:
    """Per look-alike segment, the (destination part, source part) pairs having it. Elements
    are counted by t: source `box[0] + src_step * t`, destination `box[0] + shift + dst_step * t`."""
    dst_parts = dst.dims[k].intervals
    # A source stored with halos (overlapping parts, `halo_storage`) sends each element from the
    # first part holding it: a part sends up to where the next one starts.
    src_parts = src.dims[k].intervals
    sends = [min(hi, nxt[0]) for (_, hi), nxt in zip(src_parts, src_parts[1:])] + [src_parts[-1][1]]
    src_step, dst_step = steps
    first, count = box[0], _ceil_div(box[1] - box[0], src_step)
    starts = [lo for lo, _ in src_parts]
    found: dict[_Segment, list[tuple[int, int]]] = {}
    for j, (dlo, dhi) in enumerate(dst_parts):
        t0 = max(_ceil_div(dlo - first - shift, dst_step), 0)
        t1 = min(_ceil_div(dhi - first - shift, dst_step), count)
        if t0 >= t1:
            continue
        lo, hi = first + src_step * t0, first + src_step * (t1 - 1) + 1  # in source coordinates
        s = max(0, bisect.bisect_right(starts, lo) - 1)
        while s < len(src_parts) and src_parts[s][0] < hi:
            slo, shi = src_parts[s]
            a = max(t0, _ceil_div(slo - first, src_step))
            b = min(t1, _ceil_div(sends[s] - first, src_step))
            if a < b:
                src_at, dst_at = first + src_step * a, first + shift + dst_step * a
                segment = _Segment(src_at - slo, dst_at - dlo, b - a, shi - slo, dhi - dlo, src_step, dst_step)
                found.setdefault(segment, []).append((j, s))
            s += 1
    return found


def _runs(found: dict[_Segment, list[tuple[int, int]]]) -> list[_Run]:
    """Split each segment's part pairs into arithmetic progressions (greedy, in order)."""
    runs = []
    for segment, pairs in found.items():
        i = 0
        while i < len(pairs):
            j0, s0 = pairs[i]
            n = 1
            dj = ds = 0
            if i + 1 < len(pairs):
                dj, ds = pairs[i + 1][0] - j0, pairs[i + 1][1] - s0
                n = 2
                while i + n < len(pairs) and pairs[i + n] == (j0 + n * dj, s0 + n * ds):
                    n += 1
            runs.append(_Run(segment, s0, ds, j0, dj, n))
            i += n
    return runs


def _merge_runs(runs: list[_Run]) -> list[_Run]:
    """Runs alike but for where they start, starting at steady steps, become one run with an
    outer level: a source block holding several destination pieces (or the other way round)
    then costs one copy, not one per position, however many tiles there are."""
    groups: dict[tuple, list[_Run]] = {}
    for run in runs:
        key = (run.segment.length, run.segment.src_extent, run.segment.dst_extent, run.count, run.src_step, run.dst_step)
        groups.setdefault(key, []).append(run)
    merged = []
    for group in groups.values():
        group.sort(key=lambda r: (r.segment.dst_local, r.segment.src_local, r.dst_part, r.src_part))
        starts = [(r.src_part, r.dst_part, r.segment.src_local, r.segment.dst_local) for r in group]
        i = 0
        while i < len(group):
            n, step = 1, (0, 0, 0, 0)
            if i + 1 < len(group):
                step = tuple(b - a for a, b in zip(starts[i], starts[i + 1]))
                n = 2
                while i + n < len(group) and tuple(b - a for a, b in zip(starts[i + n - 1], starts[i + n])) == step:
                    n += 1
            merged.append(
                dataclasses.replace(
                    group[i], outer=n, outer_src_part=step[0], outer_dst_part=step[1], outer_src_local=step[2], outer_dst_local=step[3]
                )
            )
            i += n
    return merged


def _row_strides(extents: list[int]) -> list[int]:
    return [math.prod(extents[k + 1 :]) for k in range(len(extents))]


def _transfer(src: Layout, dst: Layout, combo: tuple[_Run, ...]) -> Transfer:
    segments = [run.segment for run in combo]
    src_rows = _row_strides([s.src_extent for s in segments])
    dst_rows = _row_strides([s.dst_extent for s in segments])
    # Trailing dimensions copied whole in both boxes merge into one contiguous piece; a last
    # dimension read or written with a step is copied element by element.
    first_contiguous = len(segments) - 1 if segments and _unit_steps(segments[-1]) else len(segments)
    while 0 < first_contiguous < len(segments):
        s = segments[first_contiguous]
        if (
            s.src_local == 0
            and s.dst_local == 0
            and s.length == s.src_extent == s.dst_extent
            and _unit_steps(segments[first_contiguous - 1])
        ):
            first_contiguous -= 1
        else:
            break
    size = math.prod(s.length for s in segments[first_contiguous:]) if segments else 1

    src_first = src.first_tile + sum(run.src_part * d.stride for run, d in zip(combo, src.dims))
    dst_first = dst.first_tile + sum(run.dst_part * d.stride for run, d in zip(combo, dst.dims))
    # Grid dimensions: (count, src tile step, dst tile step, src offset step, dst offset step).
    grid = [(run.count, run.src_step * sd.stride, run.dst_step * dd.stride, 0, 0) for run, sd, dd in zip(combo, src.dims, dst.dims)]
    grid += [
        (run.outer, run.outer_src_part * sd.stride, run.outer_dst_part * dd.stride, run.outer_src_local * sr, run.outer_dst_local * dr)
        for run, sd, dd, sr, dr in zip(combo, src.dims, dst.dims, src_rows, dst_rows)
    ]
    grid += [(count, 0, stride, 0, 0) for count, stride in dst.replicate]
    grid += [(s.length, 0, 0, src_rows[k] * s.src_step, dst_rows[k] * s.dst_step) for k, s in enumerate(segments[:first_contiguous])]
    grid = [g for g in grid if g[0] > 1] or [(1, 0, 0, 0, 0)]
    src_base = sum(s.src_local * r for s, r in zip(segments, src_rows))
    dst_base = sum(s.dst_local * r for s, r in zip(segments, dst_rows))
    return Transfer(
        size=size,
        src_tiles=TileGrid(src_first, tuple(g[0] for g in grid), tuple(g[1] for g in grid)),
        dst_tiles=TileGrid(dst_first, tuple(g[0] for g in grid), tuple(g[2] for g in grid)),
        src_offset=(src_base, *(g[3] for g in grid)),
        dst_offset=(dst_base, *(g[4] for g in grid)),
    )


def _unit_steps(segment: _Segment) -> bool:
    return segment.length == 1 or segment.src_step == segment.dst_step == 1


def crosses_ipus(src_tiles: TileGrid, dst_tiles: TileGrid, tiles_per_ipu: int) -> bool:
    """Whether a copy's tiles lie on more than one IPU (tiles numbered globally,
    `tiles_per_ipu` per IPU), judged on the grids' tile ranges as the verifier does."""
    ends = (src_tiles.min_tile, src_tiles.max_tile, dst_tiles.min_tile, dst_tiles.max_tile)
    return len({tile // tiles_per_ipu for tile in ends}) > 1


def open_link_phases(block, tiles_per_ipu: int) -> int:
    """Makes every exchange phase of `block` (and of the loops in it) holding an inter-IPU copy
    a link phase: the `ipu.sync` before it becomes a global one, or one is inserted before
    the phase when nothing syncs before it in its block. Returns how many phases it opened.
    A host (`external`) sync stays: it is the sync of every IPU with the host, so global too."""
    opened, last_sync, phase_start = 0, None, None
    for op in list(block.operations):
        name = op.operation.name
        if name == "ipu.sync":
            last_sync, phase_start = op, None
            continue
        if phase_start is None:
            phase_start = op
        if name == "scf.for":
            opened += open_link_phases(op.regions[0].blocks[0], tiles_per_ipu)
            continue
        if name != "ipu.copy" or not crosses_ipus(op.src_tiles, op.dst_tiles, tiles_per_ipu):
            continue
        kind = None if last_sync is None else ir.StringAttr(last_sync.attributes["kind"]).value
        if kind == "internal":
            last_sync.attributes["kind"] = ir.StringAttr.get("global")
            opened += 1
        elif kind is None:
            with op.location:
                last_sync = ipu.sync("global", ip=ir.InsertionPoint(phase_start))
            opened += 1
    return opened
