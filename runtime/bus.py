"""Which messages of an `ipu.copy` come over a super tile's shared exchange bus, from the
copy's affine forms (runtime/profile.py's `_bus_shared` says the same from listed arrays).

A message (its source tile and start) comes over the shared bus to a receiver when every tile
of the receiver's super tile (runs of `tiles_per_bus` tiles from 0) receives it through the
exchange, not from its own memory. A halo copy of a ResNet-50 convolution lists 2.4 million
messages; sorting them, as the listed form must, costs seconds a copy. Over the grid axes
along which the destination tile moves (`moving`), each destination tile receives one pattern
of messages, the same for every tile, shifted by where the tile's messages start (`shift`):
tile t2 receives tile t1's message p exactly when the pattern shifted by t1's shift minus
t2's still holds p. So a copy costs one small set test per distinct difference of shifts
between partners, and vectorized passes over its points.

    shared = bus_shared(dst_tiles, src_tiles, src_starts, tiles_per_bus, num_tiles)
"""

from __future__ import annotations

import functools

import numpy as np

from ipu_mlir.dialects.attrs import TileGrid

from .replicas import moving_axes, restrict


@functools.lru_cache(maxsize=1024)
def bus_shared(dst: TileGrid, src: TileGrid, starts: TileGrid, tiles_per_bus: int, num_tiles: int) -> np.ndarray | None:
    """Per point of the copy's grid (grid order), whether its message comes over the shared
    bus (local messages, whose source is the receiver, never do); None when the moving axes
    repeat a destination tile (the listed form then decides). Read-only, and made once per
    distinct copy: layers of one shape repeat their copies (ResNet-50: 352 of 1,304)."""
    found = _shared(dst, src, starts, tiles_per_bus, num_tiles)
    if found is None:
        return None
    moving, own, shared = found
    sizes = dst.sizes
    grid = shared.reshape(tuple(sizes[k] for k in moving) + tuple(sizes[k] for k in own))
    shared = grid.transpose(np.argsort(moving + own)).reshape(-1)
    shared.flags.writeable = False
    return shared


@functools.lru_cache(maxsize=1 << 12)
def bus_shared_counts(dst: TileGrid, src: TileGrid, starts: TileGrid, tiles_per_bus: int, num_tiles: int) -> np.ndarray | None:
    """`bus_shared` counted per destination tile of the moving axes (`restrict(dst,
    moving_axes(dst))`'s order): how many of the tile's messages come over the shared bus,
    for the profile's per-tile bytes (runtime/traffic.py). Read-only; None as `bus_shared`."""
    found = _shared(dst, src, starts, tiles_per_bus, num_tiles)
    if found is None:
        return None
    counts = found[2].sum(axis=1)
    counts.flags.writeable = False
    return counts


def _shared(dst: TileGrid, src: TileGrid, starts: TileGrid, tiles_per_bus: int, num_tiles: int):
    """The moving axes, the others (own), and whether each message comes over the shared bus
    as a (destination tile, own point) matrix; None when the moving axes repeat a tile."""
    sizes = dst.sizes
    moving = moving_axes(dst)
    own = tuple(k for k in range(len(sizes)) if k not in moving)
    receivers = restrict(dst, moving).tiles()
    index = np.full(num_tiles, -1, np.int64)
    index[receivers] = np.arange(receivers.size)
    if np.unique(receivers).size != receivers.size:
        return None
    shift = [restrict(form, moving).tiles() for form in (src, starts)]  # per destination tile
    pattern = [restrict(form, own, first=0).tiles() for form in (src, starts)]  # per point of its own axes
    low, high = int(pattern[1].min()), int(pattern[1].max())
    width = high - low + 1
    keys = np.unique(pattern[0] * width + (pattern[1] - low))  # the pattern's messages, as a sorted set
    source = shift[0][:, None] + pattern[0][None, :]  # (destination tile, own point)
    shared = source != receivers[:, None]
    for slot in range(tiles_per_bus):
        partner = receivers // tiles_per_bus * tiles_per_bus + slot
        other = np.where(partner < num_tiles, index[np.minimum(partner, num_tiles - 1)], -1)
        shared &= (other >= 0)[:, None] & (source != partner[:, None])
        mine = np.flatnonzero(other >= 0)
        if not mine.size:
            continue
        deltas = np.stack([shift[0][mine] - shift[0][other[mine]], shift[1][mine] - shift[1][other[mine]]], axis=1)
        distinct, which = np.unique(deltas, axis=0, return_inverse=True)
        held = np.stack([_holds(keys, pattern, low, high, width, delta) for delta in distinct.tolist()])
        shared[mine] &= held[which.reshape(-1)]
    return moving, own, shared


def _holds(keys: np.ndarray, pattern: list[np.ndarray], low: int, high: int, width: int, delta: list[int]) -> np.ndarray:
    """Per point of the pattern, whether the pattern holds its message shifted by `delta`."""
    moved = pattern[1] + delta[1]
    inside = (moved >= low) & (moved <= high)
    key = (pattern[0] + delta[0]) * width + (moved - low)
    found = np.searchsorted(keys, key)
    return inside & (keys[np.minimum(found, keys.size - 1)] == key)
