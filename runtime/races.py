"""The simulator's race checks: within one compute set or exchange phase, BSP gives the ops no
order, so no two may write the same bytes of a tile, nor one read bytes another writes."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from ipu_mlir.dialects.attrs import TileGrid

from .memory import Buffer, SimulationError, Site
from .regions import Region, Strided
from .replicas import moving_axes, restrict, row_ids


@dataclass(frozen=True)
class Access:
    """Bytes one op touches in one compute set or exchange phase, for the race checks."""

    buffer: Buffer
    region: Region
    write: bool
    site: Site
    actor: int


def check_races(accesses: list[Access], phase: str) -> None:
    """No two writes to the same bytes of a tile in one phase, and no read of bytes another op
    writes in it: BSP gives the ops of a phase no order.

    Only accesses to buffers whose address ranges meet can race (the verifier keeps each
    access within its buffer), so the phase is checked by clusters of such buffers
    (`_clusters`), and a cluster only if it can race at all (`_proof_key`): one with no
    write, or with one write that touches no byte twice and whose op makes every read,
    cannot. Of a BERT-base exchange phase's 724 accesses, one cluster is left, a matmul
    operand's blocks written by 345 interleaved copies, and the 12 layers repeat it: a
    cluster laid out as one already proven, relative to its lowest address, is not checked
    again (`_PROVEN`; the check is a function of what its key holds). If a cluster races, the
    whole phase is checked as one, so the error names the race it always named."""
    for cluster in _clusters(accesses):
        key = _proof_key(cluster)
        if key is None or key in _PROVEN:
            continue
        race = _first_race(cluster)
        if race is not None:
            raise _race_error(_first_race(accesses) or race, phase)
        if len(_PROVEN) >= _PROVEN_LIMIT:
            _PROVEN.clear()
        _PROVEN.add(key)


def _clusters(accesses: list[Access]) -> list[list[Access]]:
    """The accesses by clusters of buffers whose address ranges `[base, base + bytes)` meet
    (two buffers sharing bytes, or a chain of them), each in phase order: accesses of
    different clusters touch different addresses on every tile."""
    by_buffer: dict[int, list[Access]] = {}
    for a in accesses:
        if a.region.count:
            by_buffer.setdefault(id(a.buffer), []).append(a)
    groups = sorted(by_buffer.values(), key=lambda group: group[0].buffer.base)
    clusters, end = [], None
    for group in groups:
        buffer = group[0].buffer
        if end is not None and buffer.base < end:
            clusters[-1] += group
            end = max(end, buffer.base + buffer.bytes)
        else:
            clusters.append(list(group))
            end = buffer.base + buffer.bytes
    return clusters


def _proof_key(cluster: list[Access]) -> tuple | None:
    """None when the cluster cannot race: it has no write, or one write that touches no byte
    twice, and the same op makes every read. Else what the check of the cluster depends on:
    each access's place relative to the cluster's lowest address, element size, kind, op (in
    order of appearance) and bytes on each tile (`_geometry`)."""
    writes = [a for a in cluster if a.write]
    if not writes:
        return None
    if len(writes) == 1 and all(a.actor == writes[0].actor for a in cluster) and not _may_meet_itself(writes[0]):
        return None
    low = min(a.buffer.base for a in cluster)
    actors: dict[int, int] = {}
    return tuple(
        (a.buffer.base - low, a.buffer.element_bytes, a.write, actors.setdefault(a.actor, len(actors)), _geometry(a.region))
        for a in cluster
    )


def _geometry(region: Region) -> tuple:
    """The elements a region touches on each tile, as a hashable value: a `Strided` side's
    tile and start forms, else its listed tiles and starts."""
    if isinstance(region, Strided):
        return region.count, region.forms[1], region.forms[2]
    lo = np.asarray(region.lo, np.int64)
    tiles = np.asarray(region.tiles, np.int64)
    return region.count, tiles.shape, tiles.tobytes(), lo.shape, lo.tobytes()


class _Race(NamedTuple):
    """Where `access` touches bytes [lo, hi) of `tile` that `other` writes."""

    access: Access
    other: Access
    tile: int
    lo: int
    hi: int
    verb: str


def _race_error(race: _Race, phase: str) -> SimulationError:
    a, b = race.access, race.other
    by = "the same op" if a.actor == b.actor else f"'{b.site.name}' at {b.site.where}"
    via = "" if a.buffer is b.buffer else f" through @{b.buffer.name} (their bytes overlap)"
    eb, base = a.buffer.element_bytes, a.buffer.base
    where = a.buffer.describe(race.tile, (race.lo - base) // eb, -((base - race.hi) // eb))
    also = " also" if race.verb == "writes" else ""
    return a.site.error(f"{race.verb} memory on {where}, which {by}{also} writes{via} in {phase}: BSP leaves their order undefined")


def _first_race(accesses: list[Access]) -> _Race | None:
    """The first race among `accesses`, None if none. Intervals of all accesses are keyed
    `tile * span + address` and sorted once, so each check is a few vectorized passes; a phase
    of many intervals is checked a range of tiles at a time (no interval crosses a tile), a
    slice of the sorted keys, which bounds the tables of the read checks (an exchange phase of
    a CNN layer holds half a million messages)."""
    accesses = _meeting(accesses)
    if not accesses:
        return None
    span = max(a.buffer.base + a.buffer.bytes for a in accesses) + 1
    width = np.array([a.region.count * a.buffer.element_bytes for a in accesses])
    keys = [tiles * span + (a.buffer.base + lo * a.buffer.element_bytes) for a, (tiles, lo) in zip(accesses, _representatives(accesses))]
    points = sum(k.size for k in keys)
    tiles = max(int(k.max(initial=0)) for k in keys) // span + 1
    step = -(-tiles // -(-points // _CHECK_CHUNK))

    def sorted_table(selected: list[int]):
        """The keys of the `selected` accesses and the access of each, sorted by key once (a
        range of tiles is then a slice of them)."""
        lo = np.concatenate([np.zeros(0, np.int64)] + [keys[index] for index in selected])
        who = np.repeat(np.array(selected, np.int32), [keys[index].size for index in selected])
        n = len(accesses)
        if int(lo.max(initial=0)) < 2**62 // n:  # keys and accesses packed in one int64: numpy's (SIMD) sort of values
            packed = np.sort(lo * n + who)  # ties in key ordered by access, as a stable sort leaves them
            return packed // n, (packed % n).astype(np.int32)
        order = np.argsort(lo, kind="stable")
        return lo[order], who[order]

    def table(sorted_keys, lo_key: int, hi_key: int):
        """The intervals (start, end, access) of a sorted table whose keys lie in
        [lo_key, hi_key), sorted by start; ends derive from the accesses' widths."""
        lo, who = sorted_keys
        if step < tiles:
            first, last = np.searchsorted(lo, (lo_key, hi_key))
            lo, who = lo[first:last], who[first:last]
        return lo, lo + width[who], who

    def race(index: int, other: int, key_lo: int, key_hi: int, verb: str) -> _Race:
        tile = key_lo // span
        return _Race(accesses[index], accesses[other], tile, key_lo - tile * span, key_hi - tile * span, verb)

    writes = [i for i, a in enumerate(accesses) if a.write]
    reads = [i for i, a in enumerate(accesses) if not a.write]
    actor = np.array([a.actor for a in accesses])
    sorted_writes, sorted_reads = sorted_table(writes), sorted_table(reads)
    for first in range(0, tiles, step):
        lo_key, hi_key = first * span, (first + step) * span
        w_lo, w_hi, w_who = table(sorted_writes, lo_key, hi_key)
        reach = np.maximum.accumulate(w_hi)
        clash = np.flatnonzero(w_lo[1:] < reach[:-1])
        if clash.size:
            i = clash[0] + 1
            j = int(np.flatnonzero(w_hi[:i] > w_lo[i])[0])
            return race(int(w_who[i]), int(w_who[j]), int(w_lo[i]), int(min(w_hi[i], w_hi[j])), "writes")
        if not reads or not w_lo.size:
            continue
        r_lo, r_hi, r_who = table(sorted_reads, lo_key, hi_key)
        position = np.searchsorted(w_hi, r_lo, side="right")  # the first write ending after each read starts
        active = np.ones(r_lo.shape, bool)
        while active.any():
            p = np.minimum(position, w_lo.size - 1)
            overlap = active & (position < w_lo.size) & (w_lo[p] < r_hi)
            found = np.flatnonzero(overlap & (actor[w_who[p]] != actor[r_who]))
            if found.size:
                k = found[0]
                return race(int(r_who[k]), int(w_who[p[k]]), int(max(r_lo[k], w_lo[p[k]])), int(min(r_hi[k], w_hi[p[k]])), "reads")
            active, position = overlap, position + 1  # the op's own write: look at the next one
    return None


def _representatives(accesses: list[Access]) -> list[tuple[np.ndarray, np.ndarray]]:
    """Per access, its tiles and starts listed on one tile of each class of alike tiles: two
    tiles are alike when each access either touches neither or touches both once, at the same
    starts (its pattern shifted by the same fixed part, `_strided_spans`), so both see the same
    intervals and race alike. The writes of a matmul's operand blocks, 28 copies interleaved on
    384 tiles of BERT's buffers, are then checked on a tile or two, not on every one."""
    layouts = [_layout(a) for a in accesses]
    seen = np.unique(np.concatenate([tiles for tiles, _, _, _ in layouts]))
    if any(repeats for _, _, _, repeats in layouts) or seen.size * len(layouts) > _TABLE_LIMIT:
        return [(np.repeat(tiles, pattern.size), (fixed[:, None] + pattern[None, :]).reshape(-1)) for tiles, fixed, pattern, _ in layouts]
    table = np.full((seen.size, len(layouts)), -1, np.int64)  # per tile, each access's fixed start there (-1: none)
    for index, (tiles, fixed, _, _) in enumerate(layouts):
        table[np.searchsorted(seen, tiles), index] = fixed
    _, first = np.unique(row_ids(table), return_index=True)
    kept = np.zeros(int(seen[-1]) + 1, bool)
    kept[seen[first]] = True
    listed = []
    for tiles, fixed, pattern, _ in layouts:
        mine = kept[tiles]
        listed.append((np.repeat(tiles[mine], pattern.size), (fixed[mine][:, None] + pattern[None, :]).reshape(-1)))
    return listed


def _layout(access: Access) -> tuple[np.ndarray, np.ndarray, np.ndarray, bool]:
    """An access as (tile, fixed start) per point of the axes moving its tile, the pattern of
    starts over the other axes, the same on each of its tiles (a single start, 0, but for a
    `Strided` side), and whether a tile repeats: its starts on a tile are its fixed start
    there plus the pattern."""
    region = access.region
    if isinstance(region, Strided):
        spans = _strided_spans(region.forms[1], region.forms[2], region.count)
        return spans.tiles, spans.fixed, spans.pattern, spans.repeats
    fixed = np.broadcast_to(region.lo, region.tiles.shape).astype(np.int64)
    return region.tiles, fixed, np.zeros(1, np.int64), _repeats(region.tiles)


def _meeting(accesses: list[Access]) -> list[Access]:
    """The accesses whose bytes meet those of a write other than their own, in order: only
    they can race. Two sieves, each exact about what it keeps out: first one address range
    per access over all its tiles (a phase's reads of its sources and its writes of distinct
    destinations, which the memory plan places apart, mostly drop out), then per tile the
    range an access spans there, from its affine forms (runtime/regions.py's `Strided`) for a
    copy's side, so a halo copy of millions of grid points on a thousand tiles is a thousand
    ranges (two writes of one buffer on interleaved tiles drop out). What is left is checked
    per tile and byte, whose cost is in the grid points."""
    touching = [a for a in accesses if a.region.count]
    ranges = np.array([_addresses(a) for a in touching], np.int64).reshape(-1, 2)
    write = np.array([a.write for a in touching], bool)
    met = _met(ranges[:, 0], ranges[:, 1], np.arange(len(touching)), write, len(touching))
    met |= np.array([a.write and _may_meet_itself(a) for a in touching], bool)
    touching = [a for a, keep in zip(touching, met) if keep]
    if not touching:
        return []
    span = max(a.buffer.base + a.buffer.bytes for a in touching) + 1
    spans = [_per_tile(a, span) for a in touching]
    owner = np.repeat(np.arange(len(touching)), [lo.size for lo, _, _ in spans])
    lo, hi = (np.concatenate([span_[k] for span_ in spans]) for k in (0, 1))
    write = np.array([a.write for a in touching], bool)
    met = _met(lo, hi, owner, write[owner], len(touching)) | np.array([alone for _, _, alone in spans], bool)
    return [a for a, keep in zip(touching, met) if keep]


def _met(lo: np.ndarray, hi: np.ndarray, owner: np.ndarray, write: np.ndarray, count: int) -> np.ndarray:
    """Per access (`owner` of each range [lo, hi)), whether one of its ranges meets a write's
    range: any other write's, or a read's for a write (its own ranges too, if they meet)."""
    met = np.zeros(count, bool)
    writes, reads = np.flatnonzero(write), np.flatnonzero(~write)
    if not writes.size:
        return met
    w_order = writes[np.argsort(lo[writes], kind="stable")]
    w_lo, w_hi = lo[w_order], hi[w_order]
    w_reach = np.maximum.accumulate(w_hi)
    # sorted by start: a write meets an earlier one reaching past its start, or the next one starting before its end
    met[owner[w_order[1:][w_lo[1:] < w_reach[:-1]]]] = True
    met[owner[w_order[:-1][w_lo[1:] < w_hi[:-1]]]] = True
    if reads.size:
        r_order = reads[np.argsort(lo[reads], kind="stable")]
        r_lo, r_reach = lo[r_order], np.maximum.accumulate(hi[r_order])
        for mine, starts, reach in ((reads, w_lo, w_reach), (w_order, r_lo, r_reach)):  # reads meeting a write, writes meeting a read
            before = np.searchsorted(starts, hi[mine], side="left")  # those starting before its end
            met[owner[mine[(before > 0) & (reach[np.maximum(before - 1, 0)] > lo[mine])]]] = True
    return met


def _may_meet_itself(access: Access) -> bool:
    """Whether an access may touch a byte twice: it lists a tile twice, or a `Strided` side
    repeats one along the axes moving its tile or overlaps its own pattern of starts."""
    region = access.region
    if not isinstance(region, Strided):
        return _repeats(region.tiles)
    return any(_doubled(region.forms[1], region.forms[2], region.count))


def _spaced(axes: list[tuple[int, int]], gap: int) -> bool:
    """Whether the values `sum_k i_k * stride_k` (0 <= i_k < size_k over `axes`) are at least
    `gap` apart, shown as a mixed radix: taken by growing stride, each stride exceeds the
    reach of the smaller ones by `gap`, so two values differing first (from the top) at an
    axis are a stride apart less that reach. False may also mean that it does not show it
    (the caller then lists them): a copy's forms almost always do show it."""
    reach = 0
    for stride, size in sorted((abs(s), n) for n, s in axes if n > 1):
        if stride < reach + gap:
            return False
        reach += (size - 1) * stride
    return True


def _repeats(tiles: np.ndarray) -> bool:
    """Whether a list of tiles names one twice: counted per tile, not sorted (BERT-base asks
    it of every vertex group's edge in every compute set, 7,000 times)."""
    return tiles.size > 1 and int(np.bincount(tiles).max()) > 1


def _per_tile(access: Access, span: int) -> tuple[np.ndarray, np.ndarray, bool]:
    """Ranges [lo, hi) keyed `tile * span + address` holding an access's bytes on each of its
    tiles, and whether the access is to be checked whatever they meet: a write whose pattern
    of starts overlaps itself (`_strided_spans`)."""
    region, buffer = access.region, access.buffer
    eb, base = buffer.element_bytes, buffer.base
    if not isinstance(region, Strided):
        lo = np.broadcast_to(region.lo, region.tiles.shape)
        keys = region.tiles * span + base + lo * eb
        return keys, keys + region.count * eb, False
    spans = _strided_spans(region.forms[1], region.forms[2], region.count)
    keys = spans.tiles * span + base
    return keys + spans.lo * eb, keys + spans.hi * eb, access.write and spans.overlaps


class _Spans(NamedTuple):
    """A `Strided` side per point of the grid axes moving its tile: the tile, the elements
    [lo, hi) it spans there and its fixed start there; along the other axes its starts run
    over one pattern (from 0), the same on every tile."""

    tiles: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    repeats: bool  # a tile comes twice
    overlaps: bool  # the pattern's windows of the side's count overlap: its bytes are written twice
    fixed: np.ndarray
    pattern: np.ndarray


@functools.lru_cache(maxsize=8192)
def _strided_spans(tiles: TileGrid, starts: TileGrid, count: int) -> _Spans:
    """A `Strided` side over the grid axes moving its tile. Made once per distinct side."""
    moving = moving_axes(tiles)
    own = tuple(k for k in range(len(tiles.sizes)) if k not in moving)
    pattern, first, held = restrict(starts, own, first=0), restrict(starts, moving), restrict(tiles, moving)
    lo, hi = first.tiles() + pattern.min_tile, first.tiles() + pattern.max_tile + count
    return _Spans(held.tiles(), lo, hi, *_doubled(tiles, starts, count), first.tiles(), pattern.tiles())


@functools.lru_cache(maxsize=8192)
def _doubled(tiles: TileGrid, starts: TileGrid, count: int) -> tuple[bool, bool]:
    """A `Strided` side's `_Spans.repeats` and `_Spans.overlaps`, from its forms when they
    show their points apart (`_spaced`), else from the listed tiles and starts."""
    moving = moving_axes(tiles)
    own = tuple(k for k in range(len(tiles.sizes)) if k not in moving)
    repeats = not _spaced([(tiles.sizes[k], tiles.strides[k]) for k in moving], 1) and restrict(tiles, moving).has_repeats()
    if _spaced([(starts.sizes[k], starts.strides[k]) for k in own], count):
        return repeats, False
    ordered = np.sort(restrict(starts, own, first=0).tiles())
    return repeats, bool(np.any(ordered[1:] - ordered[:-1] < count))


def _addresses(access: Access) -> tuple[int, int]:
    """The bytes [lo, hi) of the tile address space an access touches on some tile."""
    region, buffer = access.region, access.buffer
    if isinstance(region, Strided):  # its starts are an affine form: their extremes without listing them
        first, last = _extremes(region.forms[2])
    elif np.ndim(region.lo):
        first, last = int(region.lo.min()), int(region.lo.max())
    else:
        first = last = int(region.lo)
    return buffer.base + first * buffer.element_bytes, buffer.base + (last + region.count) * buffer.element_bytes


@functools.lru_cache(maxsize=1 << 14)
def _extremes(form: TileGrid) -> tuple[int, int]:
    """The least and greatest value of an affine form, once per form (every phase asks of each access)."""
    return form.min_tile, form.max_tile


_CHECK_CHUNK = 1 << 17  # intervals per range of tiles checked at once
_TABLE_LIMIT = 1 << 22  # entries of the table telling alike tiles apart, beyond which every tile is checked
_PROVEN: set[tuple] = set()  # clusters checked without a race (`_proof_key`), in any plan of this process
_PROVEN_LIMIT = 1024  # kept before they are forgotten, all at once (a program holds 50-110, under 1 MB)
