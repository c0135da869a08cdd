"""The BSP simulator on hand-written L3 programs for the `tiny` target (16 tiles): results
against numpy, and every BSP error with its message, op, location and tile."""

from pathlib import Path

import numpy as np
import pytest
from mlir import ir

from ipu_mlir.dialects import make_context
from ipu_mlir.runtime.simulator import SimulationError, Simulator
from ipu_mlir.target.diagnostics import format_location

REPO = Path(__file__).resolve().parents[2]


# --- A stand-in for runtime.codelet ---------------------------------------------------------


# --- Building programs ------------------------------------------------------------------------

LINEAR64 = '{grain = 64 : i64, kind = "linear", tiles = array<i64: 0, 16, 1>}'
RELU = """
  func.func private @relu(%arg0: tensor<64xf32>) -> tensor<64xf32> attributes {ipu.codelet} {
    %cst = arith.constant dense<0.000000e+00> : tensor<64xf32>
    %0 = arith.maximumf %arg0, %cst : tensor<64xf32>
    return %0 : tensor<64xf32>
  }
  func.func private @add(%arg0: tensor<64xf32>, %arg1: tensor<64xf32>) -> tensor<64xf32> attributes {ipu.codelet} {
    %0 = arith.addf %arg0, %arg1 : tensor<64xf32>
    return %0 : tensor<64xf32>
  }"""


def buffer(name: str, n: int = 64, tiles: str = "0, 16, 1", offset: int | None = None, element: str = "f32") -> str:
    placed = f", offset = {offset} : i64" if offset is not None else ""
    return f'  "ipu.buffer"() {{sym_name = "{name}", tiles = array<i64: {tiles}>, type = memref<{n}x{element}>{placed}}} : () -> ()'


def h2d(value: str, name: str, mapping: str = LINEAR64, tensor: str = "tensor<1024xf32>") -> str:
    return f'    "ipu.host_to_device"({value}) {{buffer = @{name}, mapping = {mapping}}} : ({tensor}) -> ()'


def d2h(result: str, name: str, mapping: str = LINEAR64, tensor: str = "tensor<1024xf32>") -> str:
    return f'    {result} = "ipu.device_to_host"() {{buffer = @{name}, mapping = {mapping}}} : () -> {tensor}'


def sync(kind: str = "internal") -> str:
    return f'    "ipu.sync"() {{kind = "{kind}"}} : () -> ()'


def execute(name: str) -> str:
    return f'    "ipu.execute"() {{compute_set = @{name}}} : () -> ()'


def copy(source: str, dest: str, size: int, src_tiles: str, dst_tiles: str, src_offset: str, dst_offset: str) -> str:
    return (
        f'    "ipu.copy"() {{dest = @{dest}, dst_offset = array<i64: {dst_offset}>, dst_tiles = array<i64: {dst_tiles}>, '
        f"size = {size} : i64, source = @{source}, src_offset = array<i64: {src_offset}>, src_tiles = array<i64: {src_tiles}>}} : () -> ()"
    )


def group(codelet: str, inputs: str, outputs: str, tiles: str = "0, 16, 1") -> str:
    return (
        f'    "ipu.vertex_group"() {{codelet = @{codelet}, inputs = [{inputs}], outputs = [{outputs}], tiles = '
        f"array<i64: {tiles}>}} : () -> ()"
    )


def compute_set(name: str, *groups: str) -> str:
    body = "\n".join(groups)
    return f"  func.func private @{name}() attributes {{ipu.compute_set}} {{\n{body}\n    return\n  }}"


def program(
    buffers: list[str],
    body: list[str],
    compute_sets: list[str] = (),
    *,
    args: str = "%arg0: tensor<1024xf32>",
    results: str = "tensor<1024xf32>",
    returns: str = "%0 : tensor<1024xf32>",
    tail: str = "",
) -> str:
    lines = [
        'module attributes {ipu.target = "tiny"} {',
        *buffers,
        f"  func.func @main({args}) -> ({results}) attributes {{ipu.program}} {{",
    ]
    lines += [*body, f"    return {returns}", "  }", *compute_sets, RELU, "}", tail]
    return "\n".join(lines)


def simulate(text: str, inputs: list[np.ndarray]) -> tuple[list[np.ndarray], Simulator]:
    module = ir.Module.parse(text, make_context())
    simulator = Simulator(module)
    outputs = simulator.run(inputs)
    # later runs share the replicas the first (checked) run proved identical: the same bytes
    assert [o.tobytes() for o in simulator.run(inputs)] == [o.tobytes() for o in outputs]
    return outputs, simulator


def line_of(text: str, fragment: str, occurrence: int = 1) -> int:
    return [number for number, line in enumerate(text.splitlines(), 1) if fragment in line][occurrence - 1]


def fails(text: str, inputs: list[np.ndarray], fragment: str, occurrence: int = 1) -> str:
    """Runs `text`, expecting a SimulationError at the op on the line holding `fragment`
    (static errors come from the verifier, which the Simulator runs before planning)."""
    with pytest.raises(SimulationError) as caught:
        simulate(text, inputs)
    assert format_location(caught.value.location).startswith(f"-:{line_of(text, fragment, occurrence)}:"), str(caught.value)
    return caught.value.message


X = np.random.default_rng(7).uniform(-1, 1, 1024).astype(np.float32)
RELU_BUFFERS = [buffer("x"), buffer("y")]
RELU_CS = compute_set("relu_cs", group("relu", "@x", "@y"))


# --- Results ---------------------------------------------------------------------------------


def test_relu_example_matches_numpy():
    module = ir.Module.parseFile(str(REPO / "examples/relu.mlir"), make_context())
    y, head = Simulator(module).run([X])
    assert np.array_equal(y, np.maximum(X, 0))
    assert np.array_equal(head, np.maximum(X, 0).reshape(16, 64)[:, :4].reshape(-1))


def test_matmul_over_two_tiles_with_a_broadcast_copy():
    block_a = '{block = array<i64: 4, 4>, kind = "block", tiles = array<i64: 0, 2, 1, 1, 1>}'
    block_c = '{block = array<i64: 4, 3>, kind = "block", tiles = array<i64: 0, 2, 1, 1, 1>}'
    text = program(
        [buffer("a", 16, "0, 2, 1"), buffer("bh", 12, "0, 1, 1"), buffer("b", 12, "0, 2, 1"), buffer("c", 12, "0, 2, 1")],
        [
            h2d("%arg0", "a", block_a, "tensor<8x4xf32>"),
            h2d("%arg1", "bh", '{grain = 12 : i64, kind = "linear", tiles = array<i64: 0, 1, 1>}', "tensor<4x3xf32>"),
            sync("external"),
            copy("bh", "b", 12, "0, 2, 0", "0, 2, 1", "0, 0", "0, 0"),
            execute("mm_cs"),
            sync(),
            d2h("%0", "c", block_c, "tensor<8x3xf32>"),
        ],
        [
            compute_set("mm_cs", group("mm", "@a, @b", "@c", "0, 2, 1")),
            """  func.func private @mm(%a: tensor<4x4xf32>, %b: tensor<4x3xf32>) -> tensor<4x3xf32> attributes {ipu.codelet} {
    %0 = "ipu.matmul"(%a, %b) : (tensor<4x4xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
    return %0 : tensor<4x3xf32>
  }""",
        ],
        args="%arg0: tensor<8x4xf32>, %arg1: tensor<4x3xf32>",
        results="tensor<8x3xf32>",
        returns="%0 : tensor<8x3xf32>",
    )
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((8, 4), np.float32), rng.standard_normal((4, 3), np.float32)
    (c,), simulator = simulate(text, [a, b])
    np.testing.assert_allclose(c, a @ b, rtol=1e-6)
    exchange = simulator.profile.steps[1]
    assert exchange.kind == "exchange+compute"
    # Tile 0 sends its 48 bytes once (a broadcast) to tile 1, and copies them to itself on the
    # tile: not exchange, 48 bytes written at 8 per cycle in the superstep's compute.
    assert exchange.bytes_sent_per_tile[:2].tolist() == [48, 0] and exchange.bytes_received_per_tile[:2].tolist() == [0, 48]
    assert exchange.local_bytes_per_tile[:2].tolist() == [48, 0]


def test_streams_place_each_tiles_elements_in_flat_order_at_the_buffer_start():
    blocks = '{block = array<i64: 2, 2>, kind = "block", tiles = array<i64: 0, 2, 2, 2, 1>}'
    by_tile = '{grain = 4 : i64, kind = "linear", tiles = array<i64: 0, 4, 1>}'
    edges = '{block = array<i64: 2, 2>, kind = "block", tiles = array<i64: 0, 3, 2, 2, 1>}'
    intervals = '{intervals = array<i64: 0, 3, 5, 3, 4, 2, 4, 10, 5>, kind = "intervals"}'
    text = program(
        [buffer("t", 4, "0, 4, 1"), buffer("e", 4, "0, 6, 1"), buffer("i", 9, "2, 2, 3", element="i32")],
        [
            h2d("%arg0", "t", blocks, "tensor<4x4xf32>"),
            h2d("%arg1", "e", edges, "tensor<5x3xf32>"),
            h2d("%arg2", "i", intervals, "tensor<10xi32>"),
            sync("external"),
            d2h("%0", "t", by_tile, "tensor<16xf32>"),
            d2h("%1", "e", edges, "tensor<5x3xf32>"),
            d2h("%2", "i", intervals, "tensor<10xi32>"),
        ],
        args="%arg0: tensor<4x4xf32>, %arg1: tensor<5x3xf32>, %arg2: tensor<10xi32>",
        results="tensor<16xf32>, tensor<5x3xf32>, tensor<10xi32>",
        returns="%0, %1, %2 : tensor<16xf32>, tensor<5x3xf32>, tensor<10xi32>",
    )
    square, ragged, ints = (
        np.arange(16, dtype=np.float32).reshape(4, 4),
        np.arange(15, dtype=np.float32).reshape(5, 3),
        np.arange(10, dtype=np.int32),
    )
    (tiles, ragged_back, ints_back), _ = simulate(text, [square, ragged, ints])
    assert tiles.tolist() == [0, 1, 4, 5, 2, 3, 6, 7, 8, 9, 12, 13, 10, 11, 14, 15]
    assert np.array_equal(ragged_back, ragged) and np.array_equal(ints_back, ints)


def test_block_streams_over_a_column_major_grid_and_their_overflow():
    column_major = '{block = array<i64: 2, 2>, kind = "block", tiles = array<i64: 0, 2, 1, 2, 2>}'  # block (i, j) on tile i + 2 j
    by_tile = '{grain = 4 : i64, kind = "linear", tiles = array<i64: 0, 4, 1>}'
    text = program(
        [buffer("t", 4, "0, 4, 1")],
        [
            h2d("%arg0", "t", column_major, "tensor<4x4xf32>"),
            sync("external"),
            d2h("%0", "t", column_major, "tensor<4x4xf32>"),
            d2h("%1", "t", by_tile, "tensor<16xf32>"),
        ],
        args="%arg0: tensor<4x4xf32>",
        results="tensor<4x4xf32>, tensor<16xf32>",
        returns="%0, %1 : tensor<4x4xf32>, tensor<16xf32>",
    )
    square = np.arange(16, dtype=np.float32).reshape(4, 4)
    (back, tiles), _ = simulate(text, [square])
    assert np.array_equal(back, square)
    assert tiles.tolist() == [0, 1, 4, 5, 8, 9, 12, 13, 2, 3, 6, 7, 10, 11, 14, 15]
    wide = '{block = array<i64: 2, 4>, kind = "block", tiles = array<i64: 0, 2, 1, 1, 0>}'
    text = program(
        [buffer("t", 4, "0, 4, 1")],
        [h2d("%arg0", "t", wide, "tensor<4x4xf32>"), sync("external")],
        args="%arg0: tensor<4x4xf32>",
        results="",
        returns="",
    )
    assert (
        fails(text, [square], "ipu.host_to_device")
        == "'ipu.host_to_device' op maps 8 elements to tile 0, but @t holds 4 per tile: the stream overflows it"
    )


def test_weights_from_dense_and_dense_resource_constants():
    mapping = '{grain = 4 : i64, kind = "linear", tiles = array<i64: 0, 1, 1>}'
    text = program(
        [buffer("w", 4, "0, 1, 1"), buffer("r", 4, "0, 1, 1", element="i32")],
        [
            "    %w = arith.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>",
            "    %r = arith.constant dense_resource<blob> : tensor<4xi32>",
            h2d("%w", "w", mapping, "tensor<4xf32>"),
            h2d("%r", "r", mapping, "tensor<4xi32>"),
            sync("external"),
            d2h("%0", "w", mapping, "tensor<4xf32>"),
            d2h("%1", "r", mapping, "tensor<4xi32>"),
        ],
        args="",
        results="tensor<4xf32>, tensor<4xi32>",
        returns="%0, %1 : tensor<4xf32>, tensor<4xi32>",
        tail='{-#\n  dialect_resources: {\n    builtin: {\n      blob: "0x0400000001000000020000000300000004000000"\n    }\n  }\n#-}',
    )
    (w, r), _ = simulate(text, [])
    assert w.tolist() == [1.0, 2.0, 3.0, 4.0] and r.tolist() == [1, 2, 3, 4]


def test_repeat_runs_its_body_trip_count_times():
    text = program(
        RELU_BUFFERS,
        [
            "    %c0 = arith.constant 0 : index",
            "    %c5 = arith.constant 5 : index",
            "    %c1 = arith.constant 1 : index",
            h2d("%arg0", "x"),
            h2d("%arg0", "y"),
            sync("external"),
            "    scf.for %i = %c0 to %c5 step %c1 {",
            execute("acc_cs"),
            sync(),
            "    }",
            d2h("%0", "y"),
        ],
        [compute_set("acc_cs", group("add", "@y, @x", "@y"))],
    )
    (y,), simulator = simulate(text, [X])
    np.testing.assert_allclose(y, 6 * X, rtol=1e-6)
    loop = [step for step in simulator.profile.steps if step.repeat == 5]
    assert [step.kind for step in loop] == ["compute"]
    assert simulator.profile.supersteps == 1 + 5 + 1


def test_memory_plan_reuse_of_dead_bytes_runs():
    text = program(
        [buffer("x", offset=0), buffer("y", offset=256), buffer("t", offset=0)],
        [h2d("%arg0", "x"), sync("external"), execute("a_cs"), sync(), execute("b_cs"), sync(), d2h("%0", "t")],
        [compute_set("a_cs", group("relu", "@x", "@y")), compute_set("b_cs", group("relu", "@y", "@t"))],
    )
    (t,), simulator = simulate(text, [X])
    assert np.array_equal(t, np.maximum(X, 0))
    assert simulator.profile.peak_memory_per_tile == 512


STRIDED_COPIES = program(
    [*RELU_BUFFERS, buffer("z"), buffer("w"), buffer("v")],
    [
        h2d("%arg0", "x"), sync("external"),
        copy("x", "z", 64, "0, 16, 1", "0, 16, 1", "0, 0", "0, 0"),
        copy("x", "w", 64, "0, 16, 0", "0, 16, 1", "0, 0", "0, 0"), sync(),
        execute("halves_cs"), sync(), d2h("%0", "y"), d2h("%1", "v"),
    ],
    [compute_set("halves_cs", group("relu", "@z", "@y", "8, 8, 1"), group("add", "@z, @w", "@v", "0, 8, 1"),
                 group("relu", "@z", "@y", "0, 8, 1"), group("add", "@z, @w", "@v", "8, 8, 1"))],
    results="tensor<1024xf32>, tensor<1024xf32>", returns="%0, %1 : tensor<1024xf32>, tensor<1024xf32>",
)  # fmt: skip


def test_copies_run_as_strided_views_cut_where_a_buffer_changes_vertex_group():
    # @z's rows follow its readers' tiles, 8-15 then 0-7: the copy into it is affine in two
    # pieces, and the broadcast of tile 0's @x to every tile's @w is one view.
    text = STRIDED_COPIES
    (y, v), simulator = simulate(text, [X])
    assert np.array_equal(y, np.maximum(X, 0))
    assert np.array_equal(v, X + np.tile(X[:64], 16))
    copies = [step for step in Simulator(ir.Module.parse(text, make_context()))._checked.steps if type(step).__name__ == "Copy"]
    assert [[(type(r).__name__, type(w).__name__) for r, w in step.pieces] for step in copies] == [
        [("Strided", "Strided")] * 2,
        [("Strided", "Strided")],
    ]
    assert [simulator.run([X])[0].tobytes() for _ in range(2)] == [y.tobytes()] * 2  # unchecked runs: same results


def test_copies_not_affine_in_few_pieces_gather_and_scatter(monkeypatch):
    # Sides cut into more runs than the limit are left to index arrays; forced here for all
    # copies, the results are those of the strided views.
    from ipu_mlir.runtime import copy_pieces
    from ipu_mlir.runtime import planner as planner_module

    scrambled = np.array([0, 8, 1, 9, 2, 10, 3, 11, 4, 12, 5, 13, 6, 14, 7, 15])
    side = copy_pieces.Side(scrambled, scrambled, np.zeros(16, np.int64), 64, write=True)
    identity = copy_pieces.Side(np.arange(16), np.arange(16), np.zeros(16, np.int64), 64, write=False)
    assert len(copy_pieces.strided_pieces(identity, side, 64, (16,))) == 8
    assert copy_pieces.strided_pieces(identity, side, 64, (16,), limit=7) is None
    backwards = copy_pieces.Side(np.arange(15, -1, -1), np.arange(15, -1, -1), np.zeros(16, np.int64), 64, write=False)
    forwards = copy_pieces.Side(np.arange(16), np.arange(16), np.zeros(16, np.int64), 64, write=True)
    ((view, _),) = copy_pieces.strided_pieces(backwards, forwards, 64, (16,))
    data = np.arange(16 * 64, dtype=np.float32).reshape(16, 64)
    assert np.array_equal(view.read(data), data[::-1])  # a negative stride
    text = STRIDED_COPIES
    (expected_y, expected_v), _ = simulate(text, [X])
    monkeypatch.setattr(planner_module, "strided_pieces", lambda *args: None)
    monkeypatch.setattr(planner_module, "narrow_pieces", lambda *args, **how: None)  # the pieces from the moving axes
    monkeypatch.setattr(planner_module, "strided_side", lambda *args: None)  # the whole copy as one view, from its forms
    (y, v), simulator = simulate(text, [X])
    assert y.tobytes() == expected_y.tobytes() and v.tobytes() == expected_v.tobytes()
    copies = [step for step in Simulator(ir.Module.parse(text, make_context()))._checked.steps if type(step).__name__ == "Copy"]
    assert [[(type(r).__name__, type(w).__name__) for r, w in step.pieces] for step in copies] == [[("Rows", "Rows")], [("Rows", "Rows")]]


def test_reading_never_written_memory_through_a_strided_copy():
    half = '{grain = 32 : i64, kind = "linear", tiles = array<i64: 0, 16, 1>}'
    text = program(
        [*RELU_BUFFERS, buffer("z")],
        [
            h2d("%arg0", "x", half, "tensor<512xf32>"),
            sync("external"),
            copy("x", "z", 16, "0, 16, 1", "0, 16, 1", "24, 0", "0, 0"),
            sync(),
            d2h("%0", "z"),
        ],
        args="%arg0: tensor<512xf32>",
    )
    simulator = Simulator(ir.Module.parse(text, make_context()))
    for _ in range(2):  # a run that fails leaves the checks on for the next
        with pytest.raises(SimulationError, match=r"'ipu.copy' op reads memory on tile 0 at bytes \[128, 160\) of @x, never written"):
            simulator.run([X[:512]])


# --- BSP errors --------------------------------------------------------------------------------


def test_reading_memory_never_written():
    text = program(RELU_BUFFERS, [sync("external"), execute("relu_cs"), sync(), d2h("%0", "y")], [RELU_CS])
    message = fails(text, [X], '"ipu.vertex_group"')
    assert message == "'ipu.vertex_group' op reads memory on tile 0 at bytes [0, 256) of @x, never written"


def test_reading_past_what_a_stream_wrote():
    half = '{grain = 32 : i64, kind = "linear", tiles = array<i64: 0, 16, 1>}'
    text = program(
        RELU_BUFFERS,
        [h2d("%arg0", "x", half, "tensor<512xf32>"), sync("external"), execute("relu_cs"), sync(), d2h("%0", "y")],
        [RELU_CS],
        args="%arg0: tensor<512xf32>",
    )
    message = fails(text, [X[:512]], '"ipu.vertex_group"')
    assert message.endswith("reads memory on tile 0 at bytes [128, 256) of @x, never written")


def test_data_clobbered_through_aliasing_offsets():
    text = program(
        [buffer("x", offset=0), buffer("y", offset=256), buffer("t", offset=0)],
        [h2d("%arg0", "x"), sync("external"), execute("a_cs"), sync(), execute("b_cs"), sync(), execute("c_cs"), sync(), d2h("%0", "y")],
        [
            compute_set("a_cs", group("relu", "@x", "@y")),
            compute_set("b_cs", group("relu", "@y", "@t")),
            compute_set("c_cs", group("add", "@y, @x", "@y")),
        ],
    )
    message = fails(text, [X], "codelet = @add")
    assert message == "'ipu.vertex_group' op reads memory on tile 0 at bytes [0, 256) (elements [0, 64) of @x), last written by @t"


def test_copies_clobber_aliasing_buffers_element_by_element():
    # @head shares @x's bytes on tile 0; the gather writes 2 of every 4 of its elements.
    text = program(
        [buffer("x", offset=0), buffer("y", offset=256), buffer("head", tiles="0, 1, 1", offset=0)],
        [
            h2d("%arg0", "x"), sync("external"), execute("relu_cs"), sync(),
            copy("y", "head", 2, "0, 16, 1", "0, 16, 0", "0, 0", "0, 4"), sync(),
            execute("again_cs"), sync(), d2h("%0", "y"),
        ],
        [RELU_CS, compute_set("again_cs", group("relu", "@x", "@y"))],
    )  # fmt: skip
    message = fails(text, [X], "codelet = @relu", occurrence=2)
    assert message == "'ipu.vertex_group' op reads memory on tile 0 at bytes [0, 8) (elements [0, 2) of @x), last written by @head"
    # The other tiles' copies of @x are intact.
    other_tiles = text.replace(
        group("relu", "@x", "@y") + "\n    return\n  }\n" + RELU, group("relu", "@x", "@y", "1, 15, 1") + "\n    return\n  }\n" + RELU
    )
    (y,), _ = simulate(other_tiles, [X])
    assert np.array_equal(y, np.maximum(X, 0))


def test_vertex_on_a_tile_without_the_buffer():
    text = program([buffer("x", tiles="0, 8, 1"), buffer("y")], [execute("relu_cs"), sync(), d2h("%0", "y")], [RELU_CS])
    message = fails(text, [X], '"ipu.vertex_group"')
    assert message == "'ipu.vertex_group' op runs on tile 8, which holds no copy of @x"  # the verifier's


def test_codelet_view_beyond_its_buffer():
    text = program([buffer("x", 32), buffer("y")], [execute("relu_cs"), sync(), d2h("%0", "y")], [RELU_CS])
    message = fails(text, [X], '"ipu.vertex_group"')
    assert message == (  # the verifier's
        "'ipu.vertex_group' op expects argument #0 of codelet @relu (tensor<64xf32>) to fit in @x (memref<32xf32>): it "
        "views the buffer's leading elements"
    )


def test_buffer_beyond_tile_memory_and_out_of_memory():
    text = program([buffer("x", offset=65536 - 128), buffer("y")], [d2h("%0", "y")], [])
    message = fails(text, [X], 'sym_name = "x"')
    assert message == "'ipu.buffer' op needs bytes [65408, 65664) of each tile, but tiles of tiny have 65536 bytes"  # the verifier's
    text = program([buffer("x", 16384), buffer("y", 16384), buffer("z")], [d2h("%0", "z")], [])
    with pytest.raises(SimulationError, match="Out of memory on tile 0: 131328 bytes used but tiles only have 65536 bytes"):
        simulate(text, [X])


def test_two_vertices_writing_the_same_bytes_in_one_compute_set():
    text = program(
        [*RELU_BUFFERS, buffer("z", offset=0), buffer("w", offset=0)],
        [h2d("%arg0", "x"), sync("external"), execute("twice_cs"), sync(), d2h("%0", "y")],
        [compute_set("twice_cs", group("relu", "@x", "@y"), group("relu", "@x", "@y", "3, 1, 1"))],
    )
    message = fails(text, [X], "3, 1, 1")  # one buffer written twice: the verifier's
    assert message.startswith("'ipu.vertex_group' op writes @y on tile 3, which another vertex group (at loc(\"-\":")
    assert message.endswith("also writes in this compute set")
    # Two buffers sharing bytes (their offsets): only running the program can see it.
    aliased = program(
        [*RELU_BUFFERS, buffer("z", offset=0), buffer("w", offset=0)],
        [h2d("%arg0", "x"), sync("external"), execute("alias_cs"), sync(), d2h("%0", "y")],
        [compute_set("alias_cs", group("relu", "@x", "@z"), group("relu", "@x", "@w", "3, 1, 1"))],
    )
    message = fails(aliased, [X], "@w], tiles")
    assert "writes memory on tile 3 at bytes [0, 256) (elements [0, 64) of @w), which 'ipu.vertex_group' at" in message
    assert "also writes through @z (their bytes overlap) in compute set @alias_cs" in message


def test_reading_what_another_vertex_writes_in_the_same_compute_set():
    text = program(
        [*RELU_BUFFERS, buffer("z")],
        [h2d("%arg0", "x"), sync("external"), execute("chain_cs"), sync(), d2h("%0", "z")],
        [compute_set("chain_cs", group("relu", "@x", "@y"), group("relu", "@y", "@z"))],
    )
    message = fails(text, [X], "inputs = [@y]")
    assert message.startswith("'ipu.vertex_group' op reads memory on tile 0 at bytes [0, 256) of @y, which 'ipu.vertex_group' at -:")
    assert message.endswith("writes in compute set @chain_cs: BSP leaves their order undefined")


def test_exchange_overflowing_a_tile():
    text = program(
        [*RELU_BUFFERS, buffer("head", tiles="0, 1, 1")],
        [h2d("%arg0", "y"), sync("external"), copy("y", "head", 4, "0, 16, 1", "0, 16, 0", "0, 0", "4, 4"), sync(), d2h("%0", "y")],
    )
    message = fails(text, [X], '"ipu.copy"')
    assert (
        message == "'ipu.copy' op writes elements [64, 68) of @head on tile 0, which holds 64 per tile: the exchange overflows the "
        "tile's copy of it"
    )  # the verifier's


def test_copy_grid_outside_the_target_names_its_attribute():
    text = program(
        [*RELU_BUFFERS, buffer("head", tiles="0, 1, 1")],
        [h2d("%arg0", "y"), sync("external"), copy("y", "head", 4, "0, 17, 1", "0, 17, 0", "0, 0", "0, 0"), sync(), d2h("%0", "y")],
    )
    assert fails(text, [X], '"ipu.copy"').startswith("'ipu.copy' op 'src_tiles': ")


def test_two_copies_writing_the_same_bytes_in_one_exchange():
    gather = copy("y", "head", 4, "0, 16, 1", "0, 16, 0", "0, 0", "0, 4")
    text = program(
        [*RELU_BUFFERS, buffer("head", tiles="0, 1, 1")],
        [h2d("%arg0", "y"), sync("external"), gather, gather, sync(), d2h("%0", "y")],
    )
    message = fails(text, [X], '"ipu.copy"', occurrence=2)
    assert message.startswith("'ipu.copy' op writes memory on tile 0 at bytes [0, 16) of @head, which 'ipu.copy' at -:")
    assert message.endswith("also writes in this exchange phase: BSP leaves their order undefined")


@pytest.mark.parametrize(
    "case",
    [
        test_two_vertices_writing_the_same_bytes_in_one_compute_set,
        test_reading_what_another_vertex_writes_in_the_same_compute_set,
        test_two_copies_writing_the_same_bytes_in_one_exchange,
        test_copies_run_as_strided_views_cut_where_a_buffer_changes_vertex_group,  # no race
        lambda: simulate(
            program(
                [*RELU_BUFFERS, buffer("head", 64, "0, 1, 1")],
                [h2d("%arg0", "y"), sync("external"), copy("y", "head", 4, "0, 16, 1", "0, 16, 0", "0, 0", "0, 4"), sync()],
                results="",
                returns="",
            ),
            [X],
        ),  # tiles 1-15: reads, no writes
    ],
)
def test_race_checks_a_few_tiles_at_a_time(case, monkeypatch):
    from ipu_mlir.runtime import races

    monkeypatch.setattr(races, "_CHECK_CHUNK", 2)  # 16 tiles in up to 8 ranges
    monkeypatch.setattr(races, "_PROVEN", set())  # checked, not proven by an earlier test's phase
    case()


def test_exchange_after_compute_needs_a_sync():
    text = program(
        [*RELU_BUFFERS, buffer("head", tiles="0, 1, 1")],
        [
            h2d("%arg0", "x"),
            sync("external"),
            execute("relu_cs"),
            copy("y", "head", 4, "0, 16, 1", "0, 16, 0", "0, 0", "0, 4"),
            sync(),
            d2h("%0", "y"),
        ],
        [RELU_CS],
    )
    message = fails(text, [X], '"ipu.copy"')
    assert message == "'ipu.copy' op exchanges after a compute set of the same superstep: an ipu.sync must separate them (BSP)"


def test_ops_a_program_cannot_hold():
    text = program(RELU_BUFFERS, ["    %0 = arith.addf %arg0, %arg0 : tensor<1024xf32>"])
    message = fails(text, [X], "arith.addf")
    assert message.startswith("'arith.addf' op is not supported in an ipu program by the simulator (expected one of arith.constant,")


def test_inputs_must_match_the_entry_signature():
    module = ir.Module.parseFile(str(REPO / "examples/relu.mlir"), make_context())
    simulator = Simulator(module)
    with pytest.raises(SimulationError, match="@main takes 1 inputs, got 2"):
        simulator.run([X, X])
    with pytest.raises(SimulationError, match="input #0 of @main: expected 1024 float32, got 32x32 float32"):
        simulator.run([X.reshape(32, 32)])
    with pytest.raises(SimulationError, match="input #0 of @main: expected 1024 float32, got 1024 float64"):
        simulator.run([X.astype(np.float64)])


# --- Copies of short rows ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "dst_index,src",
    [
        ((slice(None), slice(None), slice(0, 3)), lambda a: a[:, :, 2:5]),  # runs of 3 on both sides
        ((slice(None), slice(None, None, 2)), lambda a: a[:, 1::2]),  # whole rows, every other one
        ((Ellipsis,), lambda a: a[:1]),  # a broadcast source
        ((Ellipsis,), lambda a: a[:, :, ::-1]),  # reversed: nothing contiguous
        ((slice(1, None),), lambda a: a[:-1]),  # overlapping the destination
    ],
)
def test_assign_moves_runs_as_items_and_equals_numpy(dst_index, src):
    from ipu_mlir.dialects.ops.arrays import assign

    base = np.arange(3 * 4 * 5, dtype=np.float32).reshape(3, 4, 5)
    got, want = base.copy(), base.copy()
    assign(got[dst_index], src(got))
    want[dst_index] = src(want.copy())
    assert np.array_equal(got, want)
