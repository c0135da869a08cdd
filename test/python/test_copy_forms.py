"""What loading shares between copies (runtime/planner.py `_CopyForm`, `_pieces`): copies
with equal attributes share their decoded forms and, on buffers laid out alike, their pieces;
copies whose buffers differ (elements per row, order of rows) or whose size differs get pieces
of their own. Each program is checked against copies made point by point (`reference`)."""

from __future__ import annotations

import gc

import numpy as np
import pytest
from mlir import ir
from test_simulator import X, buffer, compute_set, copy, d2h, group, h2d, program, sync

from ipu_mlir.dialects import make_context
from ipu_mlir.runtime.simulator import SimulationError, Simulator

LINEAR128 = '{grain = 128 : i64, kind = "linear", tiles = array<i64: 0, 16, 1>}'
RNG = np.random.default_rng(12)
A0 = RNG.uniform(-1, 1, 1024).astype(np.float32)
B0 = RNG.uniform(-1, 1, 2048).astype(np.float32)

# One set of attributes, copied into @a (64 elements a row), @b (128), @c (64, rows in the
# order of its readers' tiles: 8-15 then 0-7) and, fewer elements, into @d (laid out as @a).
SHARED = ("0, 16, 1", "0, 16, 1", "8, 0", "16, 0")
COPIES = [
    ("x", "a", 32, *SHARED),
    ("x", "b", 32, *SHARED),
    ("x", "c", 32, *SHARED),
    ("x", "d", 24, *SHARED),
    ("x", "a", 8, "0, 16, 1", "0, 16, 1", "8, 0", "56, 0"),
    # array<i64: 0, 4, 1> is a tile grid here and a 2-d offset below (MLIR uniques it: one attribute)
    ("x", "b", 8, "0, 4, 1", "8, 4, 1", "0, 0", "0, 0"),
    ("x", "b", 1, "4, 2, 1, 4, 0", "6, 2, 1, 4, 0", "0, 0, 8", "0, 4, 1"),
]


def reference(memory: dict[str, np.ndarray], copies: list[tuple]) -> None:
    """Applies `copies` (one exchange phase: every read sees the memory before it) to
    `memory` (buffer -> (tiles, elements)), point by point of each grid."""
    before = {name: rows.copy() for name, rows in memory.items()}
    for source, dest, size, src_tiles, dst_tiles, src_offset, dst_offset in copies:
        src_grid, dst_grid = ([int(v) for v in text.split(",")] for text in (src_tiles, dst_tiles))
        src_start, dst_start = ([int(v) for v in text.split(",")] for text in (src_offset, dst_offset))
        for point in np.ndindex(*src_grid[1::2]):
            tile, start = _at(point, src_grid[0], src_grid[2::2]), _at(point, src_start[0], src_start[1:])
            to_tile, to_start = _at(point, dst_grid[0], dst_grid[2::2]), _at(point, dst_start[0], dst_start[1:])
            memory[dest][to_tile, to_start : to_start + size] = before[source][tile, start : start + size]


def _at(point: tuple[int, ...], first: int, steps: list[int]) -> int:
    return first + sum(i * s for i, s in zip(point, steps))


def text_of(copies: list[tuple]) -> str:
    return program(
        [buffer("x"), buffer("a"), buffer("b", 128), buffer("c"), buffer("d"), buffer("y")],
        [
            h2d("%arg0", "x"), h2d("%arg1", "a"), h2d("%arg2", "b", LINEAR128, "tensor<2048xf32>"), h2d("%arg1", "c"), h2d("%arg1", "d"),
            sync("external"), *(copy(*c) for c in copies), sync(), '    "ipu.execute"() {compute_set = @halves} : () -> ()', sync(),
            d2h("%0", "a"), d2h("%1", "b", LINEAR128, "tensor<2048xf32>"), d2h("%2", "y"), d2h("%3", "d"),
        ],
        [compute_set("halves", group("relu", "@c", "@y", "8, 8, 1"), group("relu", "@c", "@y", "0, 8, 1"))],
        args="%arg0: tensor<1024xf32>, %arg1: tensor<1024xf32>, %arg2: tensor<2048xf32>",
        results="tensor<1024xf32>, tensor<2048xf32>, tensor<1024xf32>, tensor<1024xf32>",
        returns="%0, %1, %2, %3 : tensor<1024xf32>, tensor<2048xf32>, tensor<1024xf32>, tensor<1024xf32>",
    )  # fmt: skip


def expected(copies: list[tuple]) -> list[np.ndarray]:
    memory = {
        "x": X.reshape(16, 64).copy(),
        "a": A0.reshape(16, 64).copy(),
        "b": B0.reshape(16, 128).copy(),
        "c": A0.reshape(16, 64).copy(),
    }
    memory["d"] = memory["a"].copy()
    reference(memory, copies)
    return [memory["a"].reshape(-1), memory["b"].reshape(-1), np.maximum(memory["c"], 0).reshape(-1), memory["d"].reshape(-1)]


@pytest.mark.parametrize("copies", [COPIES, COPIES[::-1]], ids=["in order", "reversed"])
def test_copies_with_equal_attributes_on_other_buffers_match_point_by_point_copies(copies):
    simulator = Simulator(ir.Module.parse(text_of(copies), make_context()))
    first = simulator.run([X, A0, B0])  # the checked plan
    later = simulator.run([X, A0, B0])  # the later plan (replica classes)
    for got in (first, later):
        assert [g.tobytes() for g in got] == [e.tobytes() for e in expected(copies)]


@pytest.mark.parametrize("index", range(len(COPIES)))
def test_each_copy_alone_as_with_the_others(index):
    # planned with no other copy to share anything with: the same bytes
    copies = [COPIES[index]]
    simulator = Simulator(ir.Module.parse(text_of(copies), make_context()))
    for _ in range(2):
        assert [g.tobytes() for g in simulator.run([X, A0, B0])] == [e.tobytes() for e in expected(copies)]


def test_loading_holds_off_the_collector_and_gives_it_back():
    text = text_of(COPIES)
    assert gc.isenabled()
    Simulator(ir.Module.parse(text, make_context()))
    assert gc.isenabled()
    gc.disable()
    try:
        Simulator(ir.Module.parse(text, make_context()))
        assert not gc.isenabled()  # left as the caller had it
    finally:
        gc.enable()
    racing = text_of([COPIES[0], COPIES[0]])  # two copies writing the same bytes: an error while planning
    with pytest.raises(SimulationError, match="BSP leaves their order undefined"):
        Simulator(ir.Module.parse(racing, make_context()))
    assert gc.isenabled()


def test_profile_records_each_copy_at_its_own_line():
    # locations' text is made once per distinct location: copies on other lines keep theirs
    text = text_of(COPIES)
    simulator = Simulator(ir.Module.parse(text, make_context()))
    records = [op for step in simulator.profile.steps for op in step.ops if op["op"] == "ipu.copy"]
    lines = [number for number, line in enumerate(text.splitlines(), 1) if '"ipu.copy"' in line]
    assert [(r["loc"].split(":")[1], r["source"], r["dest"]) for r in records] == [(str(n), c[0], c[1]) for n, c in zip(lines, COPIES)]
