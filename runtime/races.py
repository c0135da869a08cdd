"""The simulator's race checks: within one compute set or exchange phase, BSP gives the ops no
order, so no two may write the same bytes of a tile, nor one read bytes another writes."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .memory import Buffer, Region, Site, Strided


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
    writes in it: BSP gives the ops of a phase no order. Intervals of all accesses are keyed
    `tile * span + address` and sorted once, so each check is a few vectorized passes; a phase
    of many intervals is checked a range of tiles at a time (no interval crosses a tile), a
    slice of the sorted keys, which bounds the tables of the read checks (an exchange phase of
    a CNN layer holds half a million messages)."""
    accesses = _meeting(accesses)
    if not accesses:
        return
    span = max(a.buffer.base + a.buffer.bytes for a in accesses) + 1
    width = np.array([a.region.count * a.buffer.element_bytes for a in accesses])
    keys = [
        a.region.tiles * span + (a.buffer.base + a.region.lo * a.buffer.element_bytes) if a.region.count else np.zeros(0, np.int64)
        for a in accesses
    ]
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

    def fail(index: int, other: int, key_lo: int, key_hi: int, verb: str):
        a, b = accesses[index], accesses[other]
        tile, lo, hi = key_lo // span, key_lo % span, key_hi - (key_lo // span) * span
        by = "the same op" if a.actor == b.actor else f"'{b.site.name}' at {b.site.where}"
        via = "" if a.buffer is b.buffer else f" through @{b.buffer.name} (their bytes overlap)"
        eb, base = a.buffer.element_bytes, a.buffer.base
        where = a.buffer.describe(tile, (lo - base) // eb, -((base - hi) // eb))
        also = " also" if verb == "writes" else ""
        raise a.site.error(f"{verb} memory on {where}, which {by}{also} writes{via} in {phase}: BSP leaves their order undefined")

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
            fail(int(w_who[i]), int(w_who[j]), int(w_lo[i]), int(min(w_hi[i], w_hi[j])), "writes")
        if not reads or not w_lo.size:
            continue
        r_lo, r_hi, r_who = table(sorted_reads, lo_key, hi_key)
        position = np.searchsorted(w_hi, r_lo, side="right")  # the first write ending after each read starts
        active = np.ones(r_lo.shape, bool)
        while active.any():
            p = np.minimum(position, w_lo.size - 1)
            overlap = active & (position < w_lo.size) & (w_lo[p] < r_hi)
            race = np.flatnonzero(overlap & (actor[w_who[p]] != actor[r_who]))
            if race.size:
                k = race[0]
                fail(int(r_who[k]), int(w_who[p[k]]), int(max(r_lo[k], w_lo[p[k]])), int(min(r_hi[k], w_hi[p[k]])), "reads")
            active, position = overlap, position + 1  # the op's own write: look at the next one


def _meeting(accesses: list[Access]) -> list[Access]:
    """The accesses whose bytes, over all their tiles, meet those of a write other than their
    own, in order: only they can race. A phase's reads of its sources and its writes of distinct
    destinations (which the memory plan places apart) mostly drop out here, a sweep over one
    address range per access, before the check per tile and byte, whose cost is in the tiles."""
    touching = [a for a in accesses if a.region.count]
    ranges = np.array([_addresses(a) for a in touching], np.int64).reshape(-1, 2)
    write = np.array([a.write for a in touching], bool)
    writes, reads = np.flatnonzero(write), np.flatnonzero(~write)
    if not writes.size:
        return []
    w_order = writes[np.argsort(ranges[writes, 0], kind="stable")]
    w_lo, w_hi = ranges[w_order, 0], ranges[w_order, 1]
    w_reach = np.maximum.accumulate(w_hi)
    met = np.zeros(len(touching), bool)
    # sorted by start: a write meets an earlier one reaching past its start, or the next one starting before its end
    met[w_order[1:]] |= w_lo[1:] < w_reach[:-1]
    met[w_order[:-1]] |= w_lo[1:] < w_hi[:-1]
    if reads.size:
        r_order = reads[np.argsort(ranges[reads, 0], kind="stable")]
        r_lo, r_reach = ranges[r_order, 0], np.maximum.accumulate(ranges[r_order, 1])
        for mine, lo, reach in ((reads, w_lo, w_reach), (w_order, r_lo, r_reach)):  # reads meeting a write, writes meeting a read
            before = np.searchsorted(lo, ranges[mine, 1], side="left")  # those starting before its end
            met[mine] |= (before > 0) & (reach[np.maximum(before - 1, 0)] > ranges[mine, 0])
    return [a for a, keep in zip(touching, met) if keep]


def _addresses(access: Access) -> tuple[int, int]:
    """The bytes [lo, hi) of the tile address space an access touches on some tile."""
    region, buffer = access.region, access.buffer
    if isinstance(region, Strided):  # its starts are an affine form: their extremes without listing them
        first, last = region.forms[2].min_tile, region.forms[2].max_tile
    elif np.ndim(region.lo):
        first, last = int(region.lo.min()), int(region.lo.max())
    else:
        first = last = int(region.lo)
    return buffer.base + first * buffer.element_bytes, buffer.base + (last + region.count) * buffer.element_bytes


_CHECK_CHUNK = 1 << 17  # intervals per range of tiles checked at once
