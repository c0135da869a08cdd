"""The race checks' shortcuts (`runtime/races.py`): clusters of buffers whose bytes meet, the
clusters that cannot race, clusters proven before, and strided sides shown not to touch a
byte twice from their forms. Each must keep every phase that races: a racing phase is
refused with the message the whole phase's check gives."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from mlir import ir
from test_races import Memory, access, listed_race

from ipu_mlir.dialects import make_context
from ipu_mlir.dialects.attrs import TileGrid
from ipu_mlir.runtime import races
from ipu_mlir.runtime.memory import SimulationError, Site
from ipu_mlir.runtime.races import Access, _doubled, _first_race, _race_error, _spaced, check_races
from ipu_mlir.runtime.regions import Rows, Windows

PHASE = "this exchange phase"


@pytest.fixture(autouse=True)
def fresh_proofs(monkeypatch):
    """Each test starts with no cluster proven, and shares none with other tests."""
    monkeypatch.setattr(races, "_PROVEN", set())
    with make_context(), ir.Location.unknown():
        yield


def one(tile: int, start: int, count: int = 4) -> tuple[TileGrid, TileGrid, int]:
    """Elements [start, start + count) on `tile` (a grid of one point)."""
    return TileGrid(tile, (1,), (0,)), TileGrid(start, (1,), (0,)), count


def on(buffer: Memory, place: tuple[TileGrid, TileGrid, int], write: bool, actor: int) -> Access:
    return access(buffer, *place, write, actor)


def refused(accesses: list[Access]) -> str | None:
    try:
        check_races(accesses, PHASE)
    except SimulationError as error:
        return str(error)
    return None


def test_buffers_sharing_bytes_are_checked_together_through_a_chain():
    # x spans bytes [0, 256); y [40, 80) and z [200, 240) lie inside it. Sorted by base, z
    # starts after y ends, but still inside x: a write of x and a read of z at the same bytes
    # race (a cluster ended at y's end would miss it).
    x, y, z = Memory("x", 0), Memory("y", 40, 10), Memory("z", 200, 10)
    write_x = on(x, one(0, 50), True, 0)  # bytes [200, 216)
    reads = [on(y, one(0, 0), False, 1), on(z, one(0, 0), False, 2)]  # bytes [40, 56) and [200, 216)
    assert "through @x (their bytes overlap)" in refused([*reads, write_x])
    apart = Memory("z", 1000, 10)  # z placed after x: nothing meets
    assert refused([reads[0], on(apart, one(0, 0), False, 2), write_x]) is None


def test_one_write_races_with_another_ops_read_not_its_own():
    x = Memory("x", 0)
    write, read = one(0, 0), one(0, 2)  # elements [0, 4) and [2, 6) of tile 0
    assert refused([on(x, write, True, 0), on(x, read, False, 0)]) is None  # an op reading what it writes: in place
    message = refused([on(x, write, True, 0), on(x, read, False, 1)])
    assert "'ipu.copy' op reads memory on tile 0 at elements [2, 4) of @x, which 'ipu.copy' at" in message


def test_one_write_touching_a_byte_twice_races():
    x = Memory("x", 0)
    site = Site("ipu.copy", ir.Location.unknown())
    overlapping = access(x, TileGrid(0, (2, 3), (1, 0)), TileGrid(0, (2, 3), (0, 3)), 4, True, 0)  # windows 0, 3, 6 of 4
    assert "which the same op also writes" in refused([overlapping])
    apart = access(x, TileGrid(0, (2, 3), (1, 0)), TileGrid(0, (2, 3), (0, 4)), 4, True, 0)
    assert refused([apart]) is None
    twice = Rows(np.array([0, 1, 0]), np.array([0, 1, 0]), 0, 4)  # tile 0 listed twice
    assert "which the same op also writes" in refused([Access(x, twice, True, site, 0)])
    windows = Windows(np.array([0, 1]), np.array([0, 0]), np.array([0, 3]), 4)  # tile 0 at elements 0 and 3
    assert "which the same op also writes" in refused([Access(x, windows, True, site, 0)])


def test_a_proven_cluster_does_not_prove_one_placed_or_numbered_otherwise():
    # Each pair of phases has the same accesses but for one thing the check depends on: the
    # first passes (its cluster proven), the second races.
    x, y, far = Memory("x", 0), Memory("y", 64), Memory("y", 128)  # y and far share x's upper bytes
    assert refused([on(x, one(0, 0), True, 0), on(y, one(0, 0), False, 1)]) is None
    assert refused([on(x, one(0, 16), True, 0), on(y, one(0, 0), False, 1)]) is not None  # starts
    assert refused([on(x, one(0, 16), True, 0), on(far, one(0, 0), False, 1)]) is None
    assert refused([on(x, one(0, 16), True, 0), on(y, one(0, 0), False, 1)]) is not None  # places: y's bytes 64 on
    reads = [on(x, one(0, 32), False, 0), on(x, one(1, 32), True, 1)]
    assert refused([on(x, one(0, 32), True, 0), *reads]) is None
    assert refused([on(x, one(0, 32), True, 1), *reads]) is not None  # ops
    assert refused([on(x, one(0, 32), True, 0), on(x, one(1, 32), True, 1)]) is None
    assert refused([on(x, one(0, 32), True, 0), on(x, one(0, 32), True, 1)]) is not None  # tiles
    assert refused([on(x, one(0, 32), True, 0), on(x, one(0, 36), True, 1)]) is None
    assert refused([on(x, one(0, 32, 5), True, 0), on(x, one(0, 36), True, 1)]) is not None  # counts
    v, wide = Memory("v", 0), Memory("v", 0)  # both over all of x's bytes
    wide.element_bytes = 8
    assert refused([on(x, one(0, 8), True, 0), on(v, one(0, 4), True, 1)]) is None  # bytes [32, 48) and [16, 32)
    assert refused([on(x, one(0, 8), True, 0), on(wide, one(0, 4), True, 1)]) is not None  # element sizes: [32, 64)
    kinds = [on(x, one(0, 32), False, 0), on(x, one(1, 0), True, 2)]
    assert refused([*kinds, on(x, one(0, 32), False, 1)]) is None
    assert refused([*kinds, on(x, one(0, 32), True, 1)]) is not None  # kinds


def test_a_racing_phase_names_the_race_its_whole_check_finds():
    # Two clusters race: x's on tile 5, z's (higher addresses) on tile 1. The whole phase's
    # check goes by tile and names tile 1, whichever cluster is checked first.
    x, z = Memory("x", 0), Memory("z", 1000)
    accesses = [on(x, one(5, 0), True, 0), on(x, one(5, 2), True, 1), on(z, one(1, 0), True, 2), on(z, one(1, 1), True, 3)]
    whole = _first_race(accesses)
    assert whole.tile == 1 and whole.access.buffer is z
    assert refused(accesses) == str(_race_error(whole, PHASE))


def test_phases_agree_with_listing_every_byte_when_clusters_repeat():
    # Random phases over three buffers (two share bytes), each checked twice, the second time
    # with every buffer moved by one amount (its clusters proven, if it passed): both times
    # refused exactly when two accesses race, byte by byte.
    rng = np.random.default_rng(3)
    raced = 0
    for _ in range(200):
        shift = int(rng.integers(1, 4)) * 512
        for moved in (0, shift):
            buffers = [Memory("x", moved), Memory("y", moved + 128), Memory("z", moved + 400)]  # z: a cluster of its own
            accesses = []
            for actor in range(int(rng.integers(1, 5))):
                sizes = tuple(int(n) for n in rng.integers(1, 4, 2))
                tiles = TileGrid(int(rng.integers(0, 4)), sizes, tuple(int(s) for s in rng.integers(0, 3, 2)))
                starts = TileGrid(int(rng.integers(0, 8)), sizes, tuple(int(s) for s in rng.integers(0, 9, 2)))
                buffer = buffers[int(rng.integers(0, 3))]
                accesses.append(access(buffer, tiles, starts, int(rng.integers(1, 5)), bool(rng.random() < 0.5), actor))
            expected = listed_race(accesses)
            raced += expected
            assert (refused(accesses) is not None) == expected, accesses
    assert 60 < raced < 340


def spread(axes: list[tuple[int, int]]) -> int:
    """The least distance between two of the values `_spaced` reasons about (listed)."""
    values = sorted(sum(i * s for i, (_, s) in zip(index, axes)) for index in itertools.product(*(range(n) for n, _ in axes)))
    return min((b - a for a, b in zip(values, values[1:])), default=1 << 30)


def test_spaced_axes_are_apart_by_the_gap():
    rng = np.random.default_rng(7)
    shown = 0
    for _ in range(2000):
        axes = [(int(n), int(s)) for n, s in zip(rng.integers(1, 4, 3), rng.integers(-12, 13, 3))]
        gap = int(rng.integers(1, 5))
        if _spaced(axes, gap):
            shown += 1
            assert spread(axes) >= gap, (axes, gap)
    assert shown > 200
    assert _spaced([(2, 3), (2, 8), (2, 15), (48, 30)], 1)  # a BERT copy's tile form: 3, 8, 15, 30 by mixed radix
    assert not _spaced([(2, 4), (2, 4)], 1)  # two axes of one stride: a value twice


def test_doubled_from_the_forms_agrees_with_the_listed_points():
    rng = np.random.default_rng(9)
    for _ in range(1000):
        sizes = tuple(int(n) for n in rng.integers(1, 4, 3))
        tiles = TileGrid(20, sizes, tuple(int(s) if rng.random() < 0.6 else 0 for s in rng.integers(-6, 7, 3)))
        starts = TileGrid(40, sizes, tuple(int(s) for s in rng.integers(-9, 10, 3)))
        count = int(rng.integers(1, 5))
        moving = [k for k, (n, s) in enumerate(zip(sizes, tiles.strides)) if n > 1 and s]
        by_tile = tiles.tiles().reshape(sizes)
        listed_tiles = by_tile[tuple(slice(None) if k in moving else 0 for k in range(3))].reshape(-1)
        pattern = np.sort(starts.tiles().reshape(sizes)[tuple(0 if k in moving else slice(None) for k in range(3))].reshape(-1))
        expected = (len(set(listed_tiles.tolist())) < listed_tiles.size, bool(np.any(np.diff(pattern) < count)))
        assert _doubled(tiles, starts, count) == expected, (tiles, starts, count)


def test_proven_clusters_are_forgotten_past_the_limit(monkeypatch):
    monkeypatch.setattr(races, "_PROVEN_LIMIT", 2)
    x = Memory("x", 0)
    for start in range(0, 40, 8):  # five clusters of two writes side by side, each proven
        assert refused([on(x, one(0, start), True, 0), on(x, one(0, start + 4), True, 1)]) is None
        assert 1 <= len(races._PROVEN) <= 2
    assert refused([on(x, one(0, 0), True, 0), on(x, one(0, 2), True, 1)]) is not None
