"""Replica classes (`runtime/replicas.py`): which tiles of a buffer always hold the same bytes,
and the simulator's unchecked runs that store each class once."""

from __future__ import annotations

import numpy as np
from mlir import ir

from ipu_mlir.dialects import make_context
from ipu_mlir.dialects.attrs import TileGrid
from ipu_mlir.runtime.replicas import ComputeWrite, CopyWrite, StreamWrite, tile_classes
from ipu_mlir.runtime.simulator import Simulator

TILES = 8
ALL = np.arange(TILES)


def partition(labels: np.ndarray) -> list[list[int]]:
    """The classes as sorted lists of tiles, for comparing partitions whatever their numbers."""
    classes: dict[int, list[int]] = {}
    for tile in np.flatnonzero(labels >= 0):
        classes.setdefault(int(labels[tile]), []).append(int(tile))
    return sorted(classes.values())


def grid(first: int, count: int, stride: int = 1) -> TileGrid:
    return TileGrid(first, (count,), (stride,))


def broadcast(source: str, dest: str, src_tile: int, first: int, count: int, start: int = 0) -> CopyWrite:
    """Tile `src_tile`'s elements from `start` on to tiles first, first + 1, ... at element 0."""
    return CopyWrite(source, dest, grid(src_tile, count, 0), grid(start, count, 0), grid(first, count), grid(0, count, 0))


def test_a_broadcast_copy_makes_one_class_and_a_stream_none():
    writes = [StreamWrite("x", ALL), broadcast("x", "w", 0, 0, TILES)]
    classes = tile_classes({"x": ALL, "w": ALL}, writes, TILES)
    assert partition(classes["x"]) == [[t] for t in range(TILES)]
    assert partition(classes["w"]) == [list(range(TILES))]


def test_tiles_written_from_different_sources_or_places_differ():
    halves = [broadcast("x", "w", 0, 0, 4), broadcast("x", "w", 1, 4, 4)]
    shifted = [broadcast("x", "v", 0, 0, 4), broadcast("x", "v", 0, 4, 4, start=16)]
    classes = tile_classes({"x": ALL, "w": ALL, "v": ALL}, [StreamWrite("x", ALL), *halves, *shifted], TILES)
    assert partition(classes["w"]) == [[0, 1, 2, 3], [4, 5, 6, 7]]
    assert partition(classes["v"]) == [[0, 1, 2, 3], [4, 5, 6, 7]]


def test_a_later_write_to_some_tiles_splits_their_class():
    writes = [StreamWrite("x", ALL), broadcast("x", "w", 0, 0, TILES), broadcast("x", "w", 3, 0, 2, start=8)]
    classes = tile_classes({"x": ALL, "w": ALL}, writes, TILES)
    assert partition(classes["w"]) == [[0, 1], [2, 3, 4, 5, 6, 7]]


def test_a_tile_written_at_several_points_is_known_by_all_of_them():
    # A grid (half, tile, point): each tile receives the elements of tiles 0 and 1 at 0 and 16,
    # from element 0 in the first half and from element 8 in the second.
    sizes = (2, 4, 2)
    write = CopyWrite(
        "x",
        "p",
        TileGrid(0, sizes, (0, 0, 1)),
        TileGrid(0, sizes, (8, 0, 0)),
        TileGrid(0, sizes, (4, 1, 0)),
        TileGrid(0, sizes, (0, 0, 16)),
    )
    writes = [StreamWrite("x", ALL), write]
    classes = tile_classes({"x": ALL, "p": ALL}, writes, TILES)
    assert partition(classes["p"]) == [[0, 1, 2, 3], [4, 5, 6, 7]]


def test_vertex_groups_keep_replicas_of_replicated_inputs_and_split_by_their_inputs():
    writes = [
        StreamWrite("x", ALL),
        broadcast("x", "a", 0, 0, 4),
        broadcast("x", "a", 5, 4, 4),
        CopyWrite("x", "b", grid(0, TILES), grid(0, TILES, 0), grid(0, TILES), grid(0, TILES, 0)),
        ComputeWrite(ALL, ("a",), ("y",)),  # replicated input: replicated result
        ComputeWrite(ALL, ("a", "b"), ("z",)),  # one distinct input: distinct results
    ]
    classes = tile_classes({name: ALL for name in "xabyz"}, writes, TILES)
    assert partition(classes["y"]) == [[0, 1, 2, 3], [4, 5, 6, 7]]
    assert partition(classes["z"]) == [[t] for t in range(TILES)]


def test_classes_flow_around_a_cycle_of_copies():
    # u -> w -> u: the fixed point splits u by what w brings back, and w by u, until stable.
    writes = [
        StreamWrite("x", ALL[:2]),
        broadcast("x", "u", 0, 0, 4),
        broadcast("x", "u", 1, 4, 4),
        CopyWrite("u", "w", grid(0, TILES), grid(0, TILES, 0), grid(7, TILES, -1), grid(0, TILES, 0)),
        CopyWrite("w", "u", grid(0, 7, 0), grid(0, 7, 0), grid(0, 7), grid(32, 7, 0)),
        CopyWrite("w", "u", grid(7, 1), grid(0, 1), grid(7, 1), grid(32, 1)),
    ]
    classes = tile_classes({"x": ALL[:2], "u": ALL, "w": ALL}, writes, TILES)
    assert partition(classes["u"]) == [[0, 1, 2, 3], [4, 5, 6], [7]]
    assert partition(classes["w"]) == [[0], [1, 2, 3], [4, 5, 6, 7]]


def random_copy(rng: np.random.Generator, source: str, dest: str) -> CopyWrite:
    """A copy over a random grid of up to 4 axes on 8 tiles: small strides, some 0 (a tile or
    start held along an axis), destination tiles in range (repeats allowed)."""
    rank = int(rng.integers(1, 5))
    sizes = tuple(int(n) for n in rng.integers(1, 4, rank))

    def form(first: int, strides: list[int]) -> TileGrid:
        return TileGrid(first, sizes, tuple(strides))

    def tiles() -> TileGrid:
        strides = [int(s) if rng.random() < 0.6 else 0 for s in rng.integers(1, 3, rank)]
        reach = sum((n - 1) * s for n, s in zip(sizes, strides))
        return form(int(rng.integers(0, max(1, TILES - reach))), strides) if reach < TILES else form(0, [0] * rank)

    def starts() -> TileGrid:
        return form(int(rng.integers(0, 3)), [int(s) if rng.random() < 0.5 else 0 for s in rng.integers(1, 9, rank)])

    return CopyWrite(source, dest, tiles(), starts(), tiles(), starts())


def test_copies_split_classes_alike_from_their_forms_and_from_listed_points(monkeypatch):
    # The separable signature (a row of source classes per destination tile) against the
    # listed one (every grid point, grouped by destination tile), on random programs.
    from ipu_mlir.runtime import replicas

    rng = np.random.default_rng(7)
    for _ in range(200):
        names = ["x", "u", "w"]
        writes = [
            StreamWrite("x", ALL[: int(rng.integers(1, TILES + 1))]),
            broadcast("x", "u", 0, 0, TILES),
            broadcast("x", "u", 1, 0, 3, 4),
        ]
        writes += [random_copy(rng, str(rng.choice(names)), str(rng.choice(names[1:]))) for _ in range(5)]
        found = tile_classes(dict.fromkeys(names, ALL), writes, TILES)
        with monkeypatch.context() as patched:
            patched.setattr(replicas, "_copy_signature", lambda write, source: None)
            listed = tile_classes(dict.fromkeys(names, ALL), writes, TILES)
        assert {k: partition(v) for k, v in found.items()} == {k: partition(v) for k, v in listed.items()}


def reference_classes(tiles: dict[str, np.ndarray], writes: list, num_tiles: int) -> dict[str, list[list[int]]]:
    """The coarsest partition stable under every write, by Python dictionaries: a tile's
    signature under a write is the tuple of what it is sent (destination start, source class,
    source start, in grid order), the classes of a group's inputs, or the tile itself for a
    stream; refined until no class splits."""
    labels = {name: dict.fromkeys((int(t) for t in held), 0) for name, held in tiles.items()}

    def signatures(write) -> list[tuple[str, dict[int, object]]]:
        if isinstance(write, StreamWrite):
            return [(write.buffer, {int(t): int(t) for t in write.tiles})]
        if isinstance(write, ComputeWrite):
            inputs = {int(t): tuple(labels[name][int(t)] for name in write.inputs) for t in write.tiles}
            return [(name, inputs) for name in write.outputs]
        sent: dict[int, list] = {}
        points = zip(write.dst_tiles.tiles(), write.dst_starts.tiles(), write.src_tiles.tiles(), write.src_starts.tiles())
        for dst, dst_start, src, src_start in points:
            sent.setdefault(int(dst), []).append((int(dst_start), labels[write.source][int(src)], int(src_start)))
        return [(write.dest, {tile: tuple(messages) for tile, messages in sent.items()})]

    changed = True
    while changed:
        changed = False
        for write in writes:
            for buffer, signature in signatures(write):
                keys = {tile: (label, signature.get(tile)) for tile, label in labels[buffer].items()}
                numbers = {key: number for number, key in enumerate(dict.fromkeys(keys.values()))}
                if len(numbers) > len(set(labels[buffer].values())):
                    labels[buffer] = {tile: numbers[key] for tile, key in keys.items()}
                    changed = True
    found = {}
    for name, tile_labels in labels.items():
        array = np.full(num_tiles, -1)
        array[list(tile_labels)] = list(tile_labels.values())
        found[name] = partition(array)
    return found


def test_classes_match_a_dictionary_reference_on_random_programs():
    # tile_classes' numpy paths (signatures not numbered, writes that split nothing skipped, ids
    # numbered by a table or a sort) against the definition, on programs of streams, copies and
    # vertex groups of one to three inputs cycling through four buffers.
    rng = np.random.default_rng(11)
    names = ["x", "u", "w", "v"]
    for _ in range(150):
        writes: list = [StreamWrite("x", ALL[: int(rng.integers(1, TILES + 1))]), broadcast("x", "u", 0, 0, TILES)]
        for _ in range(int(rng.integers(2, 9))):
            if rng.random() < 0.6:
                writes.append(random_copy(rng, str(rng.choice(names)), str(rng.choice(names[1:]))))
            else:
                tiles = np.sort(rng.choice(TILES, int(rng.integers(1, TILES + 1)), replace=False))
                inputs = tuple(str(n) for n in rng.choice(names, int(rng.integers(1, 4))))
                writes.append(
                    ComputeWrite(tiles, inputs, tuple(str(n) for n in rng.choice(names[1:], int(rng.integers(1, 3)), replace=False)))
                )
        found = tile_classes(dict.fromkeys(names, ALL), writes, TILES)
        assert {k: partition(v) for k, v in found.items()} == reference_classes(dict.fromkeys(names, ALL), writes, TILES)


def test_writes_alike_but_for_what_they_read_or_refine_split_apart():
    # Writes of equal forms are signed once per classes of their sources, and a buffer's
    # classes refined once per signature and classes before: each differs here.
    copy = CopyWrite("x", "w1", grid(0, TILES), grid(0, TILES, 0), grid(0, TILES), grid(0, TILES, 0))
    writes = [
        StreamWrite("x", ALL),
        broadcast("x", "u", 0, 0, TILES),
        copy,  # from x: a class per tile
        CopyWrite("u", "w2", *(getattr(copy, k) for k in FORMS)),  # from u: one class
        broadcast("x", "h", 0, 0, 4),
        broadcast("x", "h", 1, 4, 4),  # h in halves
        broadcast("u", "h", 0, 0, TILES, start=8),  # the same copy into h and into whole g: halves and one class
        broadcast("u", "g", 0, 0, TILES, start=8),
        ComputeWrite(ALL[:4], ("x",), ("y1",)),  # equal inputs on other tiles
        ComputeWrite(ALL[4:], ("x",), ("y2",)),
        CopyWrite("u", "s1", grid(0, TILES, 0), grid(0, TILES, 0), grid(0, TILES), grid(0, TILES, 0)),
        CopyWrite("u", "s2", grid(0, TILES, 0), grid(0, TILES, 0), grid(0, TILES), grid(0, TILES, 4)),  # other places
        CopyWrite("u", "s3", grid(0, TILES, 0), grid(0, TILES, 4), grid(0, TILES), grid(0, TILES, 0)),  # from other places
    ]
    names = ("x", "u", "w1", "w2", "h", "g", "y1", "y2", "s1", "s2", "s3")
    classes = tile_classes(dict.fromkeys(names, ALL), writes, TILES)
    assert partition(classes["w1"]) == [[t] for t in range(TILES)]
    assert partition(classes["w2"]) == [list(range(TILES))]
    assert partition(classes["h"]) == [[0, 1, 2, 3], [4, 5, 6, 7]]
    assert partition(classes["g"]) == [list(range(TILES))]
    assert partition(classes["y1"]) == [[0], [1], [2], [3], [4, 5, 6, 7]]
    assert partition(classes["y2"]) == [[0, 1, 2, 3], [4], [5], [6], [7]]
    assert partition(classes["s1"]) == [list(range(TILES))]
    assert partition(classes["s2"]) == partition(classes["s3"]) == [[t] for t in range(TILES)]


def test_layers_repeating_one_layers_writes_match_the_reference():
    # A random layer of copies and vertex groups repeated on the next layer's buffers, each
    # layer reading the last one's output: its writes are signed and refined once per distinct
    # classes (a CNN's or transformer's repeated layers), and match the definition.
    rng = np.random.default_rng(5)
    for _ in range(40):
        template: list = []
        for _ in range(int(rng.integers(2, 6))):
            source, dest = str(rng.choice(["in", "a", "b"])), str(rng.choice(["a", "b", "out"]))
            if rng.random() < 0.6:
                template.append(random_copy(rng, source, dest))
            else:
                tiles = np.sort(rng.choice(TILES, int(rng.integers(1, TILES + 1)), replace=False))
                template.append(ComputeWrite(tiles, (source, str(rng.choice(["in", "a"]))), (dest,)))
        writes: list = [StreamWrite("x0", ALL[: int(rng.integers(1, TILES + 1))]), broadcast("x0", "in0", 0, 0, 4)]
        layers = 4
        for layer in range(layers):
            rename = {"in": f"in{layer}", "a": f"a{layer}", "b": f"b{layer}", "out": f"in{layer + 1}"}
            for write in template:
                if isinstance(write, CopyWrite):
                    writes.append(CopyWrite(rename[write.source], rename[write.dest], *(getattr(write, k) for k in FORMS)))
                else:
                    writes.append(
                        ComputeWrite(write.tiles, tuple(rename[n] for n in write.inputs), tuple(rename[n] for n in write.outputs))
                    )
        names = ["x0"] + [f"{n}{layer}" for layer in range(layers) for n in ("in", "a", "b")] + [f"in{layers}"]
        found = tile_classes(dict.fromkeys(names, ALL), writes, TILES)
        assert {k: partition(v) for k, v in found.items()} == reference_classes(dict.fromkeys(names, ALL), writes, TILES)


FORMS = ("src_tiles", "src_starts", "dst_tiles", "dst_starts")


def test_ids_tell_rows_apart_in_every_range():
    # Narrow ids are numbered by a table, wide ones by a sort; columns whose product passes 2**62
    # are numbered first: each way gives equal ids exactly to equal rows.
    from ipu_mlir.runtime.replicas import _ids

    rng = np.random.default_rng(3)
    for spread in (3, 1000, 2**40, 2**61):
        columns = [rng.integers(0, 4, 500) * spread, rng.integers(0, 3, 500) * spread, rng.integers(-2, 2, 500)]
        rows = list(zip(*(c.tolist() for c in columns)))
        expected = [sorted(set(rows)).index(row) for row in rows]
        assert _ids(columns).tolist() == expected
        sparse = _ids(columns, dense=False)
        assert len(set(sparse.tolist())) == len(set(rows)) and all(
            (sparse[i] == sparse[j]) == (rows[i] == rows[j]) for i, j in rng.integers(0, 500, (300, 2))
        )


MLP = """
module attributes {ipu.target = "tiny"} {
  func.func @main(%x: tensor<16x32xf32>, %w: tensor<32x32xf32>, %b: tensor<32xf32>) -> tensor<16x32xf32> {
    %zero = arith.constant 0.0 : f32
    %empty = tensor.empty() : tensor<16x32xf32>
    %fill = linalg.fill ins(%zero : f32) outs(%empty : tensor<16x32xf32>) -> tensor<16x32xf32>
    %m = linalg.matmul ins(%x, %w : tensor<16x32xf32>, tensor<32x32xf32>) outs(%fill : tensor<16x32xf32>) -> tensor<16x32xf32>
    %y = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                         iterator_types = ["parallel", "parallel"]}
        ins(%m, %b : tensor<16x32xf32>, tensor<32xf32>) outs(%empty : tensor<16x32xf32>) {
    ^bb0(%a: f32, %c: f32, %o: f32):
      %s = arith.addf %a, %c : f32
      %r = arith.maximumf %s, %zero : f32
      linalg.yield %r : f32
    } -> tensor<16x32xf32>
    return %y : tensor<16x32xf32>
  }
}
"""


def test_unchecked_runs_store_replicas_once_and_give_the_same_bytes():
    from ipu_mlir.frontends.api import load_simulator

    simulator = load_simulator(MLP)
    rng = np.random.default_rng(0)
    inputs = [rng.standard_normal(shape).astype(dtype) for shape, dtype in simulator.arguments]
    assert all(buffer.row_count == buffer.tiles.size for buffer in simulator._checked.buffers)  # checked: a row per tile
    (checked,) = simulator.run(inputs)
    assert simulator._checked is None  # the first run made the checks: its plan is gone
    x, w, b = inputs
    np.testing.assert_allclose(checked, np.maximum(x @ w + b, 0), rtol=1e-5, atol=1e-5)
    (unchecked,) = simulator.run(inputs)
    assert unchecked.tobytes() == checked.tobytes()
    assert all(buffer.row_count <= buffer.tiles.size for buffer in simulator._later.buffers)
    assert sum(b.row_count for b in simulator._later.buffers) < sum(
        b.tiles.size for b in simulator._later.buffers
    )  # the matmul's operands are replicated on tiny too


def test_unchecked_runs_of_a_hand_written_broadcast():
    from test_simulator import STRIDED_COPIES, X

    simulator = Simulator(ir.Module.parse(STRIDED_COPIES, make_context()))
    checked = [a.tobytes() for a in simulator.run([X])]
    assert [a.tobytes() for a in simulator.run([X])] == checked
    assert {b.name: b.row_count for b in simulator._later.buffers}["w"] == 1  # tile 0's @x on every tile: one row
