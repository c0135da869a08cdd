"""The shared exchange bus from a copy's affine forms (`runtime/bus.py`) against the profile's
listed form (`runtime/profile.py`'s `_bus_shared`)."""

from __future__ import annotations

import numpy as np

from ipu_mlir.dialects.attrs import TileGrid
from ipu_mlir.runtime.bus import bus_shared
from ipu_mlir.runtime.profile import Superstep

TILES = 8


def exchange(senders, receivers, sources, **how) -> Superstep:
    step = Superstep()
    step.add_exchange(senders, receivers, 4, TILES, {"op": "ipu.copy"}, sources, tiles_per_bus=2, **how)
    return step


def random_form(rng: np.random.Generator, sizes: tuple[int, ...], first_limit: int) -> TileGrid:
    """Tiles or starts over a grid of `sizes`: strides 1 or 2, about half of them 0."""
    strides = tuple(int(s) if rng.random() < 0.5 else 0 for s in rng.integers(1, 3, len(sizes)))
    reach = sum((n - 1) * s for n, s in zip(sizes, strides))
    if reach >= first_limit:
        return TileGrid(0, sizes, (0,) * len(sizes))
    return TileGrid(int(rng.integers(0, first_limit - reach)), sizes, strides)


def test_the_shared_bus_from_forms_and_from_listed_messages():
    rng = np.random.default_rng(3)
    compared = 0
    for _ in range(400):
        sizes = tuple(int(n) for n in rng.integers(1, 4, int(rng.integers(1, 5))))
        dst, src, starts = (random_form(rng, sizes, limit) for limit in (TILES, TILES, 4))
        shared = bus_shared(dst, src, starts, 2, TILES)
        if shared is None:  # the moving axes repeat a destination tile: the listed form decides
            continue
        senders = src.tiles()[:1]  # a multicast
        listed = exchange(senders, dst.tiles(), src.tiles(), source_starts=starts.tiles())
        formed = exchange(senders, dst.tiles(), src.tiles(), shared=shared)
        compared += 1
        for field in ("shared_bytes_per_tile", "bytes_received_per_tile", "local_bytes_per_tile"):
            assert np.array_equal(*(np.asarray(getattr(step, field)) for step in (listed, formed))), (dst, src, starts, field)
    assert compared > 200


def test_a_super_tile_both_of_whose_tiles_receive_a_message_shares_it():
    # Tiles 0-3 receive the element at start 0 of tile 6 (a broadcast); tile 4 alone gets it
    # too: its partner 5 does not, so only tiles 0-3 get it over their buses.
    dst, src, starts = TileGrid(0, (5,), (1,)), TileGrid(6, (5,), (0,)), TileGrid(0, (5,), (0,))
    assert bus_shared(dst, src, starts, 2, TILES).tolist() == [True, True, True, True, False]
