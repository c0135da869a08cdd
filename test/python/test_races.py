"""The race checks (`runtime/races.py`) on copies' strided sides, against a check listing
every byte: the sieves (address ranges, then per-tile ranges from the affine forms) keep
every access that can race."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from mlir import ir

from ipu_mlir.dialects import make_context
from ipu_mlir.dialects.attrs import TileGrid
from ipu_mlir.runtime.memory import SimulationError, Site
from ipu_mlir.runtime.races import Access, _meeting, check_races
from ipu_mlir.runtime.regions import Rows, Strided, Windows

TILES = 8


class Memory:
    """What the checks read of a buffer: where it lies and how to name bytes."""

    def __init__(self, name: str, base: int, elements: int = 64):
        self.name, self.base, self.element_bytes, self.bytes = name, base, 4, elements * 4

    def describe(self, tile: int, lo: int, hi: int) -> str:
        return f"tile {tile} at elements [{lo}, {hi}) of @{self.name}"


def side(tiles: TileGrid, starts: TileGrid, count: int) -> Strided:
    return Strided((tiles, tiles, starts), count, (*tiles.sizes, count), 0, (0,) * len(tiles.sizes) + (1,))


def access(buffer: Memory, tiles: TileGrid, starts: TileGrid, count: int, write: bool, actor: int) -> Access:
    return Access(buffer, side(tiles, starts, count), write, Site("ipu.copy", ir.Location.unknown()), actor)


def listed_race(accesses: list[Access]) -> bool:
    """Whether two accesses (one a write, of different ops unless both write) share a byte, or
    a write its own, by listing every (tile, byte)."""
    owners: dict[tuple[int, int], list[int]] = {}
    for index, a in enumerate(accesses):
        eb = a.buffer.element_bytes
        for tile, lo in zip(a.region.tiles.tolist(), a.region.lo.tolist()):
            for byte in range(a.buffer.base + lo * eb, a.buffer.base + (lo + a.region.count) * eb):
                owners.setdefault((tile, byte), []).append(index)
    for found in owners.values():
        for i, j in itertools.combinations(found, 2):
            a, b = accesses[i], accesses[j]
            if (a.write and b.write) or ((a.write or b.write) and a.actor != b.actor):
                return True
    return False


def checked_race(accesses: list[Access]) -> bool:
    """Whether check_races refuses the phase."""
    try:
        check_races(accesses, "this exchange phase")
    except SimulationError:
        return True
    return False


def test_writes_of_one_buffer_on_interleaved_tiles_never_meet_per_tile():
    # Tiles 0, 2, 4, 6 and 1, 3, 5, 7 each get elements [0, 24) of @x: the address ranges
    # meet, the tiles do not (the halo copies of a ResNet-50 convolution look like this).
    with make_context(), ir.Location.unknown():
        x = Memory("x", 0)
        even = access(x, TileGrid(0, (4, 4), (2, 0)), TileGrid(0, (4, 4), (0, 6)), 6, True, 0)
        odd = access(x, TileGrid(1, (4, 4), (2, 0)), TileGrid(0, (4, 4), (0, 6)), 6, True, 1)
        assert _meeting([even, odd]) == []
        check_races([even, odd], "this exchange phase")
        overlapping = access(x, TileGrid(0, (4, 4), (2, 0)), TileGrid(0, (4, 4), (0, 5)), 6, True, 0)  # its own pattern overlaps
        assert _meeting([overlapping, odd]) == [overlapping]
        with pytest.raises(SimulationError, match="writes memory on tile 0 at elements \\[5, 6\\) of @x, which the same op also writes"):
            check_races([overlapping, odd], "this exchange phase")


def test_race_checks_agree_with_listing_every_byte():
    rng = np.random.default_rng(11)
    raced = 0
    with make_context(), ir.Location.unknown():
        buffers = [Memory("x", 0), Memory("y", 128)]  # y's bytes overlap x's upper half
        for _ in range(300):
            accesses = []
            for actor in range(int(rng.integers(2, 5))):
                rank = int(rng.integers(1, 4))
                sizes = tuple(int(n) for n in rng.integers(1, 4, rank))
                strides = tuple(int(s) if rng.random() < 0.6 else 0 for s in rng.integers(1, 3, rank))
                first = int(rng.integers(0, max(1, TILES - sum((n - 1) * s for n, s in zip(sizes, strides)))))
                starts = TileGrid(int(rng.integers(0, 8)), sizes, tuple(int(s) for s in rng.integers(0, 9, rank)))
                buffer = buffers[int(rng.integers(0, 2))]
                accesses.append(
                    access(buffer, TileGrid(first, sizes, strides), starts, int(rng.integers(1, 5)), bool(rng.random() < 0.6), actor)
                )
            expected = listed_race(accesses)
            raced += expected
            assert checked_race(accesses) == expected, accesses
    assert 30 < raced < 270  # both outcomes seen often


def test_listed_sides_agree_with_listing_every_byte():
    # Sides listed per transfer (a copy's windows, tiles repeating, or a codelet's rows at one
    # start): a side naming a tile twice may meet itself, which the sieves must keep.
    rng = np.random.default_rng(5)
    raced = 0
    with make_context(), ir.Location.unknown():
        x = Memory("x", 0)
        site = Site("ipu.copy", ir.Location.unknown())
        for _ in range(300):
            accesses = []
            for actor in range(int(rng.integers(1, 4))):
                tiles = rng.integers(0, TILES, int(rng.integers(1, 6)))
                count, write = int(rng.integers(1, 5)), bool(rng.random() < 0.6)
                if rng.random() < 0.7:
                    region = Windows(tiles, tiles, rng.integers(0, 12, tiles.size), count)
                else:
                    region = Rows(tiles, tiles, int(rng.integers(0, 12)), count)
                accesses.append(Access(x, region, write, site, actor))
            lo = [np.broadcast_to(a.region.lo, a.region.tiles.shape) for a in accesses]
            expected = listed_race(
                [
                    Access(a.buffer, Windows(a.region.tiles, a.region.tiles, starts, a.region.count), a.write, site, a.actor)
                    for a, starts in zip(accesses, lo)
                ]
            )
            raced += expected
            assert checked_race(accesses) == expected, accesses
    assert 30 < raced < 270
