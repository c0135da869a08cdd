"""Steps whose results are the same on every run run once, at load (runtime/planner.py,
`Planner._hoisted`): a copy or compute set reading only weights, or such steps' results,
into buffers no other op writes. Anything reading a run's input, or writing a buffer another
op also writes, still runs on every run; the profile counts every step either way."""

from __future__ import annotations

import numpy as np
from mlir import ir
from test_resident_weights import ONE_TILE, weights_program
from test_simulator import X, buffer, compute_set, copy, d2h, execute, group, h2d, program, sync

from ipu_mlir.dialects import make_context
from ipu_mlir.runtime.simulator import Simulator
from ipu_mlir.runtime.steps import Copy, Execute

TILE = "0, 1, 1"


def copies(simulator) -> list[tuple[str, str]]:
    """The copies the later runs make, as (source, dest)."""
    return [(step.source.name, step.dest.name) for step in simulator._later.steps if isinstance(step, Copy)]


def outputs(simulator, x: list[float]) -> list[list[float]]:
    return [o.tolist() for o in simulator.run([np.array(x, np.float32)])]


def test_a_weights_exchange_and_what_reads_only_it_run_at_load():
    simulator = weights_program(
        [buffer("w", 4, TILE), buffer("v", 4, TILE), buffer("u", 4, TILE), buffer("x", 4, TILE)],
        [copy("w", "v", 2, TILE, TILE, "2, 0", "0, 0"), sync(), copy("v", "u", 2, TILE, TILE, "0, 0", "2, 0"), sync(),
         copy("w", "u", 2, TILE, TILE, "0, 0", "0, 0"), sync(), h2d("%arg0", "x", ONE_TILE, "tensor<4xf32>"), sync("external"),
         d2h("%0", "u", ONE_TILE, "tensor<4xf32>"), d2h("%1", "x", ONE_TILE, "tensor<4xf32>")],
    )  # fmt: skip
    assert copies(simulator) == []  # @w -> @v, then @u's two writers, both reading only weights: all at load
    v, u = (b for name in "vu" for b in simulator._later.buffers if b.name == name)
    assert (v.data[0, :2].tolist(), u.data[0].tolist()) == ([3.0, 4.0], [1.0, 2.0, 3.0, 4.0])  # before any run
    copied = [op["dest"] for step in simulator.profile.steps for op in step.ops if op["op"] == "ipu.copy"]
    assert copied == ["v", "u", "u"]  # the profile still counts every copy
    for x in ([5, 6, 7, 8], [9, 10, 11, 12]):
        assert outputs(simulator, x) == [[1.0, 2.0, 3.0, 4.0], x]
    assert outputs(simulator, [1, 1, 1, 1]) == outputs(simulator, [1, 1, 1, 1])


def test_steps_reading_a_runs_input_or_writing_a_shared_buffer_run_every_run():
    simulator = weights_program(
        [buffer("w", 4, TILE), buffer("v", 4, TILE), buffer("x", 4, TILE), buffer("y", 4, TILE)],
        [h2d("%arg0", "x", ONE_TILE, "tensor<4xf32>"), sync("external"), copy("w", "v", 2, TILE, TILE, "0, 0", "0, 0"),
         copy("x", "v", 2, TILE, TILE, "2, 0", "2, 0"), copy("x", "y", 4, TILE, TILE, "0, 0", "0, 0"), sync(),
         d2h("%0", "v", ONE_TILE, "tensor<4xf32>"), d2h("%1", "y", ONE_TILE, "tensor<4xf32>")],
    )  # fmt: skip
    assert copies(simulator) == [("w", "v"), ("x", "v"), ("x", "y")]
    for x in ([5, 6, 7, 8], [9, 10, 11, 12]):
        assert outputs(simulator, x) == [[1.0, 2.0, *x[2:]], x]


def test_a_weights_buffer_written_again_after_a_read_runs_every_run():
    # @v's second writer comes after @y read @v: hoisting both would show that read its bytes too
    simulator = weights_program(
        [buffer("w", 4, TILE), buffer("v", 4, TILE), buffer("x", 4, TILE), buffer("y", 4, TILE)],
        [copy("w", "v", 2, TILE, TILE, "0, 0", "0, 0"), sync(), copy("v", "y", 2, TILE, TILE, "0, 0", "0, 0"), sync(),
         copy("w", "v", 2, TILE, TILE, "2, 0", "2, 0"), h2d("%arg0", "x", ONE_TILE, "tensor<4xf32>"), sync("external"),
         copy("x", "y", 2, TILE, TILE, "2, 0", "2, 0"), sync(), d2h("%0", "v", ONE_TILE, "tensor<4xf32>"),
         d2h("%1", "y", ONE_TILE, "tensor<4xf32>")],
    )  # fmt: skip
    assert copies(simulator) == [("w", "v"), ("v", "y"), ("w", "v"), ("x", "y")]
    for x in ([5, 6, 7, 8], [9, 10, 11, 12]):
        assert outputs(simulator, x) == [[1.0, 2.0, 3.0, 4.0], [1.0, 2.0, *x[2:]]]


def test_a_compute_set_whose_groups_share_an_output_reading_only_weights_runs_at_load():
    # a weight's transpose cut over tiles: two vertex groups of one compute set write @v
    text = program(
        [buffer("w"), buffer("v"), buffer("x"), buffer("y")],
        ["    %w = arith.constant dense<-2.0> : tensor<1024xf32>", h2d("%w", "w"), sync("external"), execute("weight_cs"), sync(),
         h2d("%arg0", "x"), sync("external"), execute("add_cs"), sync(), d2h("%0", "y")],
        [compute_set("weight_cs", group("relu", "@w", "@v", "0, 8, 1"), group("relu", "@w", "@v", "8, 8, 1")),
         compute_set("add_cs", group("add", "@v, @x", "@y"))],
    )  # fmt: skip
    simulator = Simulator(ir.Module.parse(text, make_context()))
    assert [[g.codelet for g in step.groups] for step in simulator._later.steps if isinstance(step, Execute)] == [["add"]]
    for x in (X, -X, X):
        assert simulator.run([x])[0].tolist() == x.tolist()  # relu(-2) + x


TWO = """  func.func private @two(%arg0: tensor<64xf32>) -> (tensor<64xf32>, tensor<64xf32>) attributes {ipu.codelet} {
    return %arg0, %arg0 : tensor<64xf32>, tensor<64xf32>
  }"""


def test_a_buffer_is_a_weight_only_once_every_writer_of_every_buffer_they_write_is():
    # @b1's writers both read only @w, but the vertex group also writes @b2, which a run's input fills
    text = program(
        [buffer("w"), buffer("b1"), buffer("b2"), buffer("x"), buffer("y")],
        ["    %w = arith.constant dense<2.0> : tensor<1024xf32>", h2d("%w", "w"), sync("external"), execute("two_cs"), sync(),
         copy("w", "b1", 64, "8, 8, 1", "8, 8, 1", "0, 0", "0, 0"), sync(), copy("b1", "y", 64, "0, 16, 1", "0, 16, 1", "0, 0", "0, 0"),
         h2d("%arg0", "x"), sync("external"), copy("x", "b2", 64, "8, 8, 1", "8, 8, 1", "0, 0", "0, 0"), sync(), d2h("%0", "y"),
         d2h("%1", "b2")],
        [compute_set("two_cs", group("two", "@w", "@b1, @b2", "0, 8, 1")), TWO],
        results="tensor<1024xf32>, tensor<1024xf32>",
        returns="%0, %1 : tensor<1024xf32>, tensor<1024xf32>",
    )  # fmt: skip
    simulator = Simulator(ir.Module.parse(text, make_context()))
    assert copies(simulator) == [("w", "b1"), ("b1", "y"), ("x", "b2")]
    for x in (X, -X):
        y, b2 = simulator.run([x])
        assert y.tolist() == [2.0] * 1024 and b2.tolist() == [2.0] * 512 + x[512:].tolist()
