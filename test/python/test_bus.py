"""The shared exchange bus from a copy's affine forms (`runtime/bus.py`) against the profile's
listed form (`runtime/superstep.py`'s `_bus_shared`)."""

from __future__ import annotations

import numpy as np

from ipu_mlir.dialects.attrs import TileGrid
from ipu_mlir.runtime.bus import bus_shared_counts, tally
from ipu_mlir.runtime.replicas import moving_axes, restrict
from ipu_mlir.runtime.superstep import Superstep

TILES = 8


def random_form(rng: np.random.Generator, sizes: tuple[int, ...], first_limit: int) -> TileGrid:
    """Tiles or starts over a grid of `sizes`: strides 1 or 2, about half of them 0."""
    strides = tuple(int(s) if rng.random() < 0.5 else 0 for s in rng.integers(1, 3, len(sizes)))
    reach = sum((n - 1) * s for n, s in zip(sizes, strides))
    if reach >= first_limit:
        return TileGrid(0, sizes, (0,) * len(sizes))
    return TileGrid(int(rng.integers(0, first_limit - reach)), sizes, strides)


def listed_shared(dst: TileGrid, src: TileGrid, starts: TileGrid, per_bus: int) -> list[int]:
    """Bytes over the shared bus per tile, 1 a message, from every listed message (a multicast)."""
    step = Superstep()
    step.add_exchange(src.tiles()[:1], dst.tiles(), 1, TILES, {"op": "ipu.copy"}, src.tiles(), starts.tiles(), per_bus)
    return [0] * TILES if step.shared_bytes_per_tile is None else step.shared_bytes_per_tile.tolist()


def test_the_shared_bus_from_forms_and_from_listed_messages():
    rng = np.random.default_rng(3)
    compared = shared = 0
    for _ in range(600):
        sizes = tuple(int(n) for n in rng.integers(1, 4, int(rng.integers(1, 5))))
        dst, src, starts = (random_form(rng, sizes, limit) for limit in (TILES, TILES, 4))
        per_bus = int(rng.choice([2, 4]))
        counts = bus_shared_counts(dst, src, starts, per_bus, TILES)
        if counts is None:  # the moving axes repeat a destination tile: the listed form decides
            continue
        formed = np.bincount(restrict(dst, moving_axes(dst)).tiles(), weights=counts, minlength=TILES).astype(int).tolist()
        listed = listed_shared(dst, src, starts, per_bus)
        if dst.count > 1:  # a multicast from one sender: the listed form counts only then
            assert formed == listed, (dst, src, starts, per_bus)
            compared += 1
            shared += any(listed)
    assert compared > 250 and shared > 20, (compared, shared)


def test_a_super_tile_both_of_whose_tiles_receive_a_message_shares_it():
    # Tiles 0-3 receive the element at start 0 of tile 6 (a broadcast); tile 4 alone gets it
    # too: its partner 5 does not, so only tiles 0-3 get it over their buses.
    dst, src, starts = TileGrid(0, (5,), (1,)), TileGrid(6, (5,), (0,)), TileGrid(0, (5,), (0,))
    assert bus_shared_counts(dst, src, starts, 2, TILES).tolist() == [1, 1, 1, 1, 0]


def test_no_counts_exactly_when_the_moving_axes_repeat_a_destination_tile():
    rng = np.random.default_rng(8)
    repeated = 0
    for _ in range(400):
        sizes = tuple(int(n) for n in rng.integers(1, 4, int(rng.integers(1, 4))))
        dst = TileGrid(0, sizes, tuple(int(s) for s in rng.integers(0, 3, len(sizes))))
        receivers = restrict(dst, moving_axes(dst)).tiles().tolist()
        src, starts = TileGrid(7, sizes, (0,) * len(sizes)), TileGrid(0, sizes, (0,) * len(sizes))
        counts = bus_shared_counts(dst, src, starts, 2, 32)
        assert (counts is None) == (len(set(receivers)) < len(receivers)), dst
        repeated += counts is None
    assert 40 < repeated < 360


def test_tally_is_numpys_unique_with_counts():
    rng = np.random.default_rng(4)
    for values in (
        np.zeros(0, np.int64),
        np.array([5]),
        rng.integers(-20, 20, 300),  # a table
        rng.integers(0, 2**40, 50),  # too wide for one: sorted
        np.array([3, 3, 3, -(2**40)]),
    ):
        expected = np.unique(values, return_counts=True)
        got = tally(values)
        assert all(np.array_equal(g, e) and g.dtype == e.dtype for g, e in zip(got, expected))
