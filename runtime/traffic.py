"""An `ipu.copy`'s messages counted per tile for the profile, from the copy's affine forms.

`Superstep.add_exchange` (runtime/superstep.py) counts them from listed tiles: the receiver,
source and source start of every point of the copy's grid. A ResNet-50 copy has up to 450,000
points on about 1,300 destination tiles, and listing them cost about 0.3 ms per copy. Over the
grid axes along which the destination tile moves (`moving`), each destination tile receives
the same pattern of messages over the other axes (`own`), from source tiles shifted by a
per-tile amount. So a destination tile's local messages (source = receiver) are the pattern's
points whose source is the receiver minus the shift: one look-up in the pattern's sorted
source tiles per destination tile. Sources are counted per tile along their own moving axes;
shared-bus messages come from runtime/bus.py's matrix, summed per destination tile.

    traffic = copy_traffic(dst_tiles, src_tiles, src_starts, senders, tiles_per_bus, num_tiles)
    superstep.add_traffic(traffic, message_bytes, op)   # the same counts as add_exchange's
"""

from __future__ import annotations

import functools
import math

import numpy as np

from ipu_mlir.dialects.attrs import TileGrid

from .bus import bus_shared_counts, tally
from .replicas import moving_axes, restrict
from .superstep import Traffic


@functools.lru_cache(maxsize=1 << 12)
def copy_traffic(dst: TileGrid, src: TileGrid, starts: TileGrid, senders: TileGrid, tiles_per_bus: int, num_tiles: int) -> Traffic | None:
    """The counts `listed_traffic` makes of `add_exchange(senders.tiles(), dst.tiles(), ...,
    src.tiles(), starts.tiles(), tiles_per_bus)`; None when a multicast's moving axes repeat a
    destination tile (the listed form then decides). Made once per distinct copy, read-only."""
    moving = moving_axes(dst)
    own = tuple(k for k in range(len(dst.sizes)) if k not in moving)
    receivers = restrict(dst, moving).tiles()
    pattern = restrict(src, own, first=0).tiles()  # per point of the own axes, less the shift
    values, counts = tally(pattern)
    wanted = receivers - restrict(src, moving).tiles()  # the pattern's source that is local
    found = np.minimum(np.searchsorted(values, wanted), values.size - 1)
    local_each = np.where(values[found] == wanted, counts[found], 0)  # per destination tile
    num_local = int(local_each.sum())
    local = _per_tile(receivers, local_each, num_tiles) if num_local else None
    remote = dst.count - num_local
    if not remote:
        return _frozen(Traffic(num_tiles, None, None, local, None))
    received = _per_tile(receivers, pattern.size - local_each, num_tiles)
    if num_local and senders.count == dst.count:  # each message sent by its own point: local ones are not
        sent, num_senders = _counts(src, num_tiles) - local, remote
    else:
        sent, num_senders = _counts(senders, num_tiles), senders.count
    shared = None
    if tiles_per_bus > 1 and num_senders < remote:  # a multicast
        per_receiver = bus_shared_counts(dst, src, starts, tiles_per_bus, num_tiles)
        if per_receiver is None:
            return None
        shared = _per_tile(receivers, per_receiver, num_tiles)
    return _frozen(Traffic(num_tiles, received, sent, local, shared))


def _per_tile(tiles: np.ndarray, counts: np.ndarray, num_tiles: int) -> np.ndarray:
    """`counts` (integers, one per entry of `tiles`) summed per tile."""
    return np.bincount(tiles, weights=counts, minlength=num_tiles).astype(np.int64)  # exact: counts < 2**53


def _counts(grid: TileGrid, num_tiles: int) -> np.ndarray:
    """How many points of `grid` each tile has: those along its moving axes, times the others'."""
    moving = moving_axes(grid)
    repeats = math.prod(n for k, n in enumerate(grid.sizes) if k not in moving)
    return np.bincount(restrict(grid, moving).tiles(), minlength=num_tiles) * repeats


def _frozen(traffic: Traffic) -> Traffic:
    for array in (traffic.received, traffic.sent, traffic.local, traffic.shared):
        if array is not None:
            array.flags.writeable = False
    return traffic
