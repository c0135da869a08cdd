"""What loading does for later runs (issue 12). A stream of a constant into a buffer of its own
is written once, when the program is loaded, and counted in the profile's `load_bytes`, not in
each run's host streams; a weight whose bytes another buffer reuses, or that another op also
writes, stays a per-run stream. Each buffer is bound to an array, shared only by buffers never
live together."""

from __future__ import annotations

import numpy as np
from mlir import ir
from test_simulator import buffer, copy, d2h, h2d, program, sync

from ipu_mlir.dialects import make_context
from ipu_mlir.lowering.memory_plan import MemoryPlan, chosen_plan
from ipu_mlir.lowering.pipelines import compile_module
from ipu_mlir.runtime.simulator import Simulator
from ipu_mlir.runtime.streams import HostToDevice
from ipu_mlir.target import load_target

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


def weight_and_input() -> Simulator:
    """The program streaming a weight and an input, each into a buffer of one tile."""
    return weights_program(
        [buffer("w", 4, "0, 1, 1"), buffer("x", 4, "0, 1, 1")],
        [h2d("%arg0", "x", ONE_TILE, "tensor<4xf32>"), sync("external"), d2h("%0", "w", ONE_TILE, "tensor<4xf32>"),
         d2h("%1", "x", ONE_TILE, "tensor<4xf32>")],
    )  # fmt: skip


def streams(simulator: Simulator) -> list[str]:
    """The buffers the later runs stream into from the host."""
    return [step.buffer.name for step in simulator._later.steps if isinstance(step, HostToDevice)]


def runs(simulator: Simulator, count: int = 3) -> list[list[float]]:
    x = np.array([5, 6, 7, 8], np.float32)
    outputs = [[o.tolist() for o in simulator.run([x])] for _ in range(count)]
    assert all(o == outputs[0] for o in outputs)
    return outputs[0]


def test_a_weight_is_written_once_at_load():
    simulator = weight_and_input()
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


def dense(values: np.ndarray) -> str:
    return f"dense<{np.array2string(values, separator=', ', floatmode='unique', threshold=10**6).replace(chr(10), '')}>"


def test_compiled_weights_are_loaded_once_and_keep_their_bytes():
    # ipu-memory-plan keeps a weight live for the whole program (never reusing its bytes), so
    # every weight of a compiled model is resident: a run streams only its input and output.
    rng = np.random.default_rng(0)
    w1, w2 = (rng.standard_normal((64, 64)).astype(np.float32) for _ in range(2))
    text = f"""
module attributes {{ipu.target = "tiny"}} {{
  func.func @main(%x: tensor<16x64xf32>) -> tensor<16x64xf32> {{
    %w1 = arith.constant {dense(w1)} : tensor<64x64xf32>
    %w2 = arith.constant {dense(w2)} : tensor<64x64xf32>
    %zero = arith.constant 0.0 : f32
    %empty = tensor.empty() : tensor<16x64xf32>
    %f = linalg.fill ins(%zero : f32) outs(%empty : tensor<16x64xf32>) -> tensor<16x64xf32>
    %a = linalg.matmul ins(%x, %w1 : tensor<16x64xf32>, tensor<64x64xf32>) outs(%f : tensor<16x64xf32>) -> tensor<16x64xf32>
    %b = linalg.matmul ins(%a, %w2 : tensor<16x64xf32>, tensor<64x64xf32>) outs(%f : tensor<16x64xf32>) -> tensor<16x64xf32>
    return %b : tensor<16x64xf32>
  }}
}}"""
    module = ir.Module.parse(text, make_context())
    with module.context:
        compile_module(module)
    simulator = Simulator(module)
    profile = simulator.profile
    assert profile.host_bytes == 2 * 16 * 64 * 4  # the input and the output
    assert profile.load_bytes >= 2 * 64 * 64 * 4  # each weight at least once (replicas more)
    assert not any(isinstance(step, HostToDevice) and step.value != 0 for step in simulator._later.steps)
    x = rng.standard_normal((16, 64)).astype(np.float32)
    results = [simulator.run([x])[0] for _ in range(3)]
    assert all(r.tobytes() == results[0].tobytes() for r in results)
    np.testing.assert_allclose(results[0], x @ w1 @ w2, rtol=1e-4, atol=1e-4)


def test_later_runs_share_arrays_only_between_buffers_never_live_together():
    from test_simulator import RELU_CS, compute_set, execute, group

    # @x -> relu -> @y -> relu -> @z: @x and @z are never used in the same step, so share one array
    text = program(
        [buffer("x"), buffer("y"), buffer("z")],
        [h2d("%arg0", "x"), sync("external"), execute("relu_cs"), sync(), execute("again_cs"), sync(), d2h("%0", "z")],
        [RELU_CS, compute_set("again_cs", group("relu", "@y", "@z"))],
    )
    simulator = Simulator(ir.Module.parse(text, make_context()))
    buffers = {b.name: b for b in simulator._later.buffers}
    assert np.shares_memory(buffers["x"].data, buffers["z"].data)
    assert not np.shares_memory(buffers["x"].data, buffers["y"].data) and not np.shares_memory(buffers["y"].data, buffers["z"].data)
    x = np.random.default_rng(1).standard_normal(1024).astype(np.float32)
    assert [simulator.run([x])[0].tobytes() for _ in range(3)] == [np.maximum(x, 0).tobytes()] * 3


def two_weights(words: int) -> ir.Module:
    """Two weights of `words` f32 on tile 0 of tiny (64 KiB), the first read before the
    second is streamed: resident together they need 2 x 4 x `words` bytes."""
    mapping = '{grain = 1 : i64, kind = "linear", tiles = array<i64: 0, 1, 1>}'
    tensor = f"tensor<{words}xf32>"
    text = program(
        [buffer("w1", words, "0, 1, 1"), buffer("w2", words, "0, 1, 1")],
        [f"    %a = arith.constant dense<1.0> : {tensor}", f"    %b = arith.constant dense<2.0> : {tensor}",
         h2d("%a", "w1", mapping, tensor), sync("external"), d2h("%0", "w1", mapping, tensor), sync("external"),
         h2d("%b", "w2", mapping, tensor), sync("external"), d2h("%1", "w2", mapping, tensor)],
        args="", results=f"{tensor}, {tensor}", returns=f"%0, %1 : {tensor}, {tensor}",
    )  # fmt: skip
    return ir.Module.parse(text, make_context())


def offsets(module: ir.Module) -> dict[str, int]:
    ops = [op for op in module.body.operations if op.operation.name == "ipu.buffer"]
    return {op.attributes["sym_name"].value: op.attributes["offset"].value for op in ops}


def test_weights_stay_resident_when_they_fit():
    module = two_weights(4096)  # 2 x 16 KiB
    MemoryPlan(target="tiny").run(module.operation)
    assert offsets(module) == {"w1": 0, "w2": 16384}
    assert Simulator(module).profile.load_bytes == 2 * 16384


def test_weights_that_cannot_all_stay_resident_are_streamed_each_run():
    module = two_weights(10240)  # 2 x 40 KiB on a 64 KiB tile: one at a time fits
    MemoryPlan(target="tiny").run(module.operation)
    assert offsets(module) == {"w1": 0, "w2": 0}
    simulator = Simulator(module)
    assert simulator.profile.load_bytes == 0
    first, second = simulator.run([])
    assert (first == 1.0).all() and (second == 2.0).all()


def test_the_chosen_plan_says_resident_or_streamed_as_the_pass_does():
    """bench/compiler_sections.py's memory rows report `chosen_plan`, the plan the pass keeps: with weights
    resident where they fit (2 x 16 KiB), streamed where they do not (2 x 40 KiB on 64 KiB),
    whose peak is then one weight, not the resident plan's two."""
    target = load_target("tiny")
    for words, resident, peak in ((4096, True, 2 * 16384), (10240, False, 40960)):
        module = two_weights(words)
        with module.context:
            plan = chosen_plan(module.operation, target)
        assert plan.liveness.weights_resident == resident and plan.fits()
        assert int(plan.footprint.max()) == peak


def test_later_runs_read_the_checked_plans_weight_array_when_its_rows_are_alike():
    simulator = weight_and_input()
    (checked,) = [b for b in simulator._checked.buffers if b.name == "w"]
    (later,) = [b for b in simulator._later.buffers if b.name == "w"]
    assert later.data is checked.data and later.resident and checked.resident  # loaded once, held once
    assert runs(simulator) == [[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0]]  # checked run, then later runs
