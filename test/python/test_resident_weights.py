"""Weights resident in tile memory (issue 12): a stream of a constant into a buffer of its own
is written once, when the program is loaded, and counted in the profile's `load_bytes`, not in
each run's host streams; a weight whose bytes another buffer reuses, or that another op also
writes, stays a per-run stream."""

from __future__ import annotations

import numpy as np
from mlir import ir
from test_simulator import buffer, copy, d2h, h2d, program, sync

from ipu_mlir.dialects import make_context
from ipu_mlir.runtime.simulator import Simulator
from ipu_mlir.runtime.streams import HostToDevice

ONE_TILE = '{grain = 4 : i64, kind = "linear", tiles = array<i64: 0, 1, 1>}'
WEIGHT = "    %w = arith.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>"


def weights_program(buffers: list[str], body: list[str]) -> Simulator:
    text = program(
        buffers,
        [WEIGHT, h2d("%w", "w", ONE_TILE, "tensor<4xf32>"), sync("external"), *body],
        args="%arg0: tensor<4xf32>",
        results="tensor<4xf32>, tensor<4xf32>",
        returns="%0, %1 : tensor<4xf32>, tensor<4xf32>",
    )
    return Simulator(ir.Module.parse(text, make_context()))


def streams(simulator: Simulator) -> list[str]:
    """The buffers the later runs stream into from the host."""
    return [step.buffer.name for step in simulator._later.steps if isinstance(step, HostToDevice)]


def runs(simulator: Simulator, count: int = 3) -> list[list[float]]:
    x = np.array([5, 6, 7, 8], np.float32)
    outputs = [[o.tolist() for o in simulator.run([x])] for _ in range(count)]
    assert all(o == outputs[0] for o in outputs)
    return outputs[0]


def test_a_weight_is_written_once_at_load():
    simulator = weights_program(
        [buffer("w", 4, "0, 1, 1"), buffer("x", 4, "0, 1, 1")],
        [h2d("%arg0", "x", ONE_TILE, "tensor<4xf32>"), sync("external"), d2h("%0", "w", ONE_TILE, "tensor<4xf32>"),
         d2h("%1", "x", ONE_TILE, "tensor<4xf32>")],
    )  # fmt: skip
    profile = simulator.profile
    assert (profile.load_bytes, profile.host_bytes) == (16, 16 + 32)  # per run: the input and the two outputs
    assert profile.load_seconds == 16 / 64e9
    assert "weights at load:   16 bytes" in profile.summary()
    assert [step.kind for step in profile.steps] == ["sync", "host", "host"]  # the weight's superstep streams nothing
    assert streams(simulator) == ["x"]
    assert runs(simulator) == [[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0]]


def test_a_weight_whose_bytes_are_reused_is_streamed_each_run():
    # @x reuses @w's bytes after @w's last read: a device must stream @w again on each run
    simulator = weights_program(
        [buffer("w", 4, "0, 1, 1", offset=0), buffer("x", 4, "0, 1, 1", offset=0)],
        [d2h("%0", "w", ONE_TILE, "tensor<4xf32>"), sync("external"), h2d("%arg0", "x", ONE_TILE, "tensor<4xf32>"), sync("external"),
         d2h("%1", "x", ONE_TILE, "tensor<4xf32>")],
    )  # fmt: skip
    assert (simulator.profile.load_bytes, simulator.profile.host_bytes) == (0, 16 + 16 + 32)
    assert "weights at load" not in simulator.profile.summary()
    assert runs(simulator) == [[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0]]


def test_a_weight_another_op_writes_is_streamed_each_run():
    # the copy overwrites @w's first two elements with @x's: the next run needs the weight again
    simulator = weights_program(
        [buffer("w", 4, "0, 1, 1"), buffer("x", 4, "0, 1, 1")],
        [h2d("%arg0", "x", ONE_TILE, "tensor<4xf32>"), sync("external"), copy("x", "w", 2, "0, 1, 1", "0, 1, 1", "0, 0", "0, 0"),
         sync(), d2h("%0", "w", ONE_TILE, "tensor<4xf32>"), d2h("%1", "x", ONE_TILE, "tensor<4xf32>")],
    )  # fmt: skip
    assert (simulator.profile.load_bytes, simulator.profile.host_bytes) == (0, 16 + 16 + 32)
    assert streams(simulator) == ["w", "x"]
    assert runs(simulator) == [[5.0, 6.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0]]
