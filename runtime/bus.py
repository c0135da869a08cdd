"""How many messages of an `ipu.copy` each destination tile gets over its super tile's shared
exchange bus, from the copy's affine forms (runtime/superstep.py's `_bus_shared` says which do
from listed arrays).

A message (its source tile and start) comes over the shared bus to a receiver when every tile
of the receiver's super tile (runs of `tiles_per_bus` tiles from 0) receives it through the
exchange, not from its own memory. A halo copy of a ResNet-50 convolution lists 2.4 million
messages; sorting them, as the listed form must, costs seconds a copy. Over the grid axes
along which the destination tile moves (`moving`), each destination tile receives one pattern
of messages, the same for every tile, shifted by where the tile's messages start (`shift`):
tile t2 receives tile t1's message p exactly when the pattern shifted by t1's shift minus
t2's still holds p. So the pattern's points a tile shares with all its partners depend only
on the differences of shifts between them (few distinct ones: `held` per difference), and of
those, the ones a tile does not share are the few whose source is one of the partners
themselves (local to it): counted by one look-up per partner in the held points' sorted
sources. No pass goes over the copy's points.

    counts = bus_shared_counts(dst_tiles, src_tiles, src_starts, tiles_per_bus, num_tiles)
"""

from __future__ import annotations

import functools

import numpy as np

from ipu_mlir.dialects.attrs import TileGrid

from .replicas import moving_axes, restrict


@functools.lru_cache(maxsize=1 << 12)
def bus_shared_counts(dst: TileGrid, src: TileGrid, starts: TileGrid, tiles_per_bus: int, num_tiles: int) -> np.ndarray | None:
    """Per destination tile of the moving axes (`restrict(dst, moving_axes(dst))`'s order),
    how many of its messages come over the shared bus (a message from its own tile never
    does); None when the moving axes repeat a destination tile (the listed form then decides).
    Read-only, and made once per distinct copy: layers of one shape repeat their copies
    (ResNet-50: 352 of 1,304)."""
    sizes = dst.sizes
    moving = moving_axes(dst)
    own = tuple(k for k in range(len(sizes)) if k not in moving)
    receivers = restrict(dst, moving).tiles()
    index = np.full(num_tiles, -1, np.int64)
    index[receivers] = np.arange(receivers.size)
    if not np.array_equal(index[receivers], np.arange(receivers.size)):  # a tile twice: its first entry was overwritten
        return None
    counts = np.zeros(receivers.size, np.int64)
    counts.flags.writeable = False
    partners = [receivers // tiles_per_bus * tiles_per_bus + slot for slot in range(tiles_per_bus)]  # per slot of the super tile
    others = [np.where(partner < num_tiles, index[np.minimum(partner, num_tiles - 1)], -1) for partner in partners]
    whole = np.flatnonzero(np.logical_and.reduce([other >= 0 for other in others]))  # tiles whose every partner receives
    if not whole.size:
        return counts  # most copies (ResNet-50: 4 in 5): nothing is shared
    shift = [restrict(form, moving).tiles() for form in (src, starts)]  # per destination tile
    pattern = [restrict(form, own, first=0).tiles() for form in (src, starts)]  # per point of its own axes
    low, high = int(pattern[1].min()), int(pattern[1].max())
    width = high - low + 1
    keys = np.unique(pattern[0] * width + (pattern[1] - low))  # the pattern's messages, as a sorted set
    helds, whiches = [], []  # per slot: the pattern points each distinct shift difference holds, and which a tile has
    for other in others:
        deltas = [form[whole] - form[other[whole]] for form in shift]
        lows = [int(d.min()) for d in deltas]
        pairs = (deltas[0] - lows[0]) * (int(deltas[1].max()) - lows[1] + 1) + (deltas[1] - lows[1])  # one integer per pair
        _, first, which = np.unique(pairs, return_index=True, return_inverse=True)
        helds.append(np.stack([_holds(keys, pattern, low, high, width, (int(deltas[0][i]), int(deltas[1][i]))) for i in first]))
        whiches.append(which.reshape(-1))
    combos = np.zeros(whole.size, np.int64)  # the tile's held rows, one per slot, as one integer
    for which, held in zip(whiches, helds):
        combos = combos * len(held) + which
    kinds, members = np.unique(combos, return_inverse=True)
    counts = counts.copy()
    for kind in range(kinds.size):
        picked = np.flatnonzero(members.reshape(-1) == kind)
        held = np.logical_and.reduce([h[w[picked[0]]] for w, h in zip(whiches, helds)])
        sources, times = tally(pattern[0][held])  # sources of the held points, less the shift
        if not sources.size:
            continue
        rows = whole[picked]
        counts[rows] = int(times.sum())
        for partner in partners:  # held points whose source is a partner (distinct tiles): not shared
            wanted = partner[rows] - shift[0][rows]
            found = np.minimum(np.searchsorted(sources, wanted), sources.size - 1)
            counts[rows] -= np.where(sources[found] == wanted, times[found], 0)
    counts.flags.writeable = False
    return counts


def _holds(keys: np.ndarray, pattern: list[np.ndarray], low: int, high: int, width: int, delta: tuple[int, int]) -> np.ndarray:
    """Per point of the pattern, whether the pattern holds its message shifted by `delta`."""
    moved = pattern[1] + delta[1]
    inside = (moved >= low) & (moved <= high)
    key = (pattern[0] + delta[0]) * width + (moved - low)
    found = np.searchsorted(keys, key)
    return inside & (keys[np.minimum(found, keys.size - 1)] == key)


def tally(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """`np.unique(values, return_counts=True)` of integers, counted in a table when they span
    a few times their number (tiles, mostly), as `np.unique` sorts them: a thousand calls per
    BERT-base load."""
    if not values.size:
        return np.unique(values, return_counts=True)
    low = int(values.min())
    span = int(values.max()) - low + 1
    if span > 4 * values.size + 1024:
        return np.unique(values, return_counts=True)
    counts = np.bincount(values - low, minlength=span)
    present = np.flatnonzero(counts)
    return present + low, counts[present]
