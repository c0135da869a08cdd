"""ipu-pipeline end to end on an m2000: the pipelined program's outputs equal, bit for bit, the
sharded program's on each micro-batch (the same arithmetic per micro-batch) and the single-IPU
program's, match upstream MLIR's ExecutionEngine, and its estimated time beats the sharded
run's, every stage computing at once in the steady state."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch  # the test extra installs torch and torch-mlir
from mlir import ir
from test_shard import _inputs, mlp
from torch_mlir import fx  # noqa: F401  after upstream MLIR, before the ExecutionEngine runs (test_strided_slices.py)

from ipu_mlir.dialects import make_context
from ipu_mlir.frontends.api import reference_outputs
from ipu_mlir.lowering.pass_registry import build_pass_manager
from ipu_mlir.lowering.pipelines import default_pipeline
from ipu_mlir.runtime import api as runtime_api
from ipu_mlir.target import load_target

REPO = Path(__file__).resolve().parents[2]
WIDTHS = [256, 1024, 1024, 1024, 256]  # four matmuls: one per stage of an m2000
BATCH = 64


def simulate(text: str, target: str, micro_batches: int = 1):
    """The default pipeline on `text`, pipelined over `micro_batches` (%x, the one argument read
    along the batch: the weights are arguments too)."""
    with make_context():
        module = ir.Module.parse(text)
        build_pass_manager(default_pipeline(target, micro_batches=micro_batches)).run(module.operation)
        return runtime_api.load_simulator(module, None, "main", verified=True)


@pytest.fixture(scope="module")
def sharded_and_inputs():
    text = mlp(WIDTHS, batch=BATCH)
    inputs = _inputs(text)
    sharded = simulate(text, "m2000")
    return text, inputs, sharded, sharded.run(inputs)


@pytest.mark.parametrize("micro_batches", [4, 8])
def test_pipelined_equals_sharded_per_micro_batch(sharded_and_inputs, micro_batches: int) -> None:
    text, inputs, sharded, _ = sharded_and_inputs
    pipelined = simulate(text, "m2000", micro_batches)
    (got,) = pipelined.run(inputs)
    rows = BATCH // micro_batches
    small = mlp(WIDTHS, batch=rows)
    per_micro_batch = simulate(small, "m2000")
    one_ipu = simulate(small, "gc200")
    for m in range(micro_batches):
        sliced = [inputs[0][m * rows : (m + 1) * rows], *inputs[1:]]
        (expected,) = per_micro_batch.run(sliced)
        assert np.array_equal(got[m * rows : (m + 1) * rows], expected), f"micro-batch {m}"
        assert np.array_equal(expected, one_ipu.run(sliced)[0])
    (reference,) = reference_outputs(text, inputs, "main")
    np.testing.assert_allclose(got, reference, rtol=1e-4, atol=1e-4 * np.abs(reference).max())


def test_stages_run_at_once_and_beat_sharded(sharded_and_inputs) -> None:
    text, inputs, sharded, expected = sharded_and_inputs
    pipelined = simulate(text, "m2000", 4)
    (got,) = pipelined.run(inputs)
    np.testing.assert_allclose(got, expected[0], rtol=1e-4, atol=1e-4 * np.abs(expected[0]).max())
    tiles = load_target("m2000").tiles_per_ipu
    ipus_computing = [
        np.unique(np.flatnonzero(step.compute_cycles_per_tile) // tiles).size
        for step in pipelined.profile.steps
        if step.compute_cycles_per_tile is not None
    ]
    assert max(ipus_computing) == 4  # the steady state: every stage in one superstep
    assert (
        max(
            np.unique(np.flatnonzero(s.compute_cycles_per_tile) // tiles).size
            for s in sharded.profile.steps
            if s.compute_cycles_per_tile is not None
        )
        == 1
    )
    assert pipelined.profile.cycles < sharded.profile.cycles
    assert pipelined.profile.link_bytes >= sharded.profile.link_bytes // 2  # the same activations cross, per micro-batch


def _torch_mlp():

    torch.manual_seed(0)
    layers = [torch.nn.Linear(128, 256), torch.nn.ReLU(), torch.nn.Linear(256, 256), torch.nn.ReLU()]
    layers += [torch.nn.Linear(256, 256), torch.nn.ReLU(), torch.nn.Linear(256, 64)]
    return torch.nn.Sequential(*layers).eval(), torch.randn(32, 128)


def test_poptorch_options_pipeline_inference() -> None:
    """`PipelinedExecution` over `deviceIterations` micro-batches: one program, equal bit for bit
    to the sharded model run once per micro-batch, and to PyTorch within 1e-4."""
    from ipu_mlir.frontends import torch as ipu_torch

    model, x = _torch_mlp()
    sharded = ipu_torch.inferenceModel(model, ipu_torch.Options().deviceIterations(4).target("m2000"))
    options = ipu_torch.Options().deviceIterations(4).target("m2000").setExecutionStrategy(ipu_torch.PipelinedExecution())
    pipelined = ipu_torch.inferenceModel(model, options)
    got, expected = pipelined(x), sharded(x)
    assert np.array_equal(got.numpy(), expected.numpy())
    np.testing.assert_allclose(got.numpy(), ipu_torch.run_eager(model, x).numpy(), rtol=1e-4, atol=1e-4)
    tiles = load_target("m2000").tiles_per_ipu
    steps = pipelined.compiled.profile.steps
    assert (
        max(np.unique(np.flatnonzero(s.compute_cycles_per_tile) // tiles).size for s in steps if s.compute_cycles_per_tile is not None) > 1
    )


def test_poptorch_options_refusals() -> None:
    from ipu_mlir.frontends import torch as ipu_torch
    from ipu_mlir.target.diagnostics import IpuError

    model, x = _torch_mlp()
    options = ipu_torch.Options().setExecutionStrategy(ipu_torch.PipelinedExecution())
    with pytest.raises(IpuError, match=r"PipelinedExecution needs Training.gradientAccumulation\(G\) .*; got 1"):
        ipu_torch.trainingModel(model, options)
    with pytest.raises(IpuError, match="setExecutionStrategy takes PipelinedExecution"):
        ipu_torch.Options().setExecutionStrategy("pipelined")
    # 2 micro-batches for the 4 stages of an m2000: refused at the function, nothing run.
    too_few = ipu_torch.Options().deviceIterations(2).target("m2000").setExecutionStrategy(ipu_torch.PipelinedExecution())
    with pytest.raises(IpuError, match="micro-batches=2 is fewer than the 4 pipeline stages"):
        ipu_torch.inferenceModel(model, too_few)(x)


def test_ipu_run_micro_batches(tmp_path, capsys) -> None:
    """`ipu-run --micro-batches M --check` on the example CNN (weights as arguments) against the
    ExecutionEngine; bad M: one line at the function, exit 1, no output written."""
    from ipu_mlir.tools import ipu_run

    cnn = str(REPO / "examples" / "cnn.mlir")
    out = tmp_path / "out"
    flags = ["--target", "m2000", "--random-inputs", "0"]
    assert ipu_run.main([cnn, *flags, "--micro-batches", "4", "--check", "--output-dir", str(out)]) == 0
    assert "check output 0" in capsys.readouterr().out and (out / "output0.npy").exists()
    bad = tmp_path / "bad"
    assert ipu_run.main([cnn, *flags, "--micro-batches", "3", "--output-dir", str(bad)]) == 1
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and "cnn.mlir:10:3: error: 'func.func' op ipu-pipeline: input %arg0" in error
    assert "divisible by micro-batches=3" in error and not bad.exists()


def test_poptorch_replication_factor_inference() -> None:
    """`replicationFactor(2)` x `deviceIterations(2)`: each device iteration's batch split over 2
    replicas of 2 IPUs each (ipu-replicate; test_replicate.py checks the pass bit for bit), equal
    to PyTorch within 1e-4, the replicas computing in the same supersteps."""
    from ipu_mlir.frontends import torch as ipu_torch
    from ipu_mlir.target.diagnostics import IpuError

    model, x = _torch_mlp()
    options = ipu_torch.Options().deviceIterations(2).replicationFactor(2).target("m2000")
    replicated = ipu_torch.inferenceModel(model, options)
    got = replicated(x).numpy()
    np.testing.assert_allclose(got, ipu_torch.run_eager(model, x).numpy(), rtol=1e-4, atol=1e-4)
    tiles = load_target("m2000").tiles_per_ipu
    steps = replicated.compiled.profile.steps
    busiest = max(
        np.unique(np.flatnonzero(s.compute_cycles_per_tile) // tiles).size for s in steps if s.compute_cycles_per_tile is not None
    )
    assert busiest == 2  # the two replicas' layers in the same supersteps
    with pytest.raises(IpuError, match="replicas=3 is not a power of two"):
        ipu_torch.inferenceModel(model, ipu_torch.Options().deviceIterations(2).replicationFactor(3).target("m2000"))(x[:24])


SKIP = """
#id = affine_map<(d0, d1) -> (d0, d1)>
!t = tensor<16x128xf32>
!w = tensor<128x128xf32>
module attributes {ipu.target = "m2000"} {
  func.func @main(%x: !t, %w0: !w, %w1: !w, %w2: !w) -> !t {
    %e = tensor.empty() : !t
    %0 = "ipu.matmul"(%x, %w0) {ipu.ipu_id = 0 : i64} : (!t, !w) -> !t
    %1 = "ipu.matmul"(%0, %w1) {ipu.ipu_id = 1 : i64} : (!t, !w) -> !t
    %2 = "ipu.matmul"(%1, %w2) {ipu.ipu_id = 2 : i64} : (!t, !w) -> !t
    %3 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
        ins(%2, %0 : !t, !t) outs(%e : !t) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %s = arith.addf %a, %b : f32
      linalg.yield %s : f32
    } -> !t
    return %3 : !t
  }
}
"""


def test_a_value_skipping_a_stage_goes_straight_to_its_user() -> None:
    """A residual %0 from stage 0 read on stage 2: each micro-batch's copy goes from IPU 0 to
    IPU 2 directly (no relay through IPU 1), and the result equals the sharded program's."""
    inputs = _inputs(SKIP)
    sharded = simulate(SKIP, "m2000")
    pipelined = simulate(SKIP, "m2000", 4)
    (got,), (expected,) = pipelined.run(inputs), sharded.run(inputs)
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5 * np.abs(expected).max())
    flows = {pair for step in pipelined.profile.steps for pair in step.link_flows}
    assert (0, 2) in flows and (1, 2) in flows and not any(dst == 1 and src != 0 for src, dst in flows)
    skipped = sum(step.link_flows.get((0, 2), 0) * step.repeat for step in pipelined.profile.steps)  # a loop's as often as it ran
    assert skipped == sum(step.link_flows.get((0, 2), 0) for step in sharded.profile.steps) == 16 * 128 * 4


CHAIN = """module attributes {ipu.target = "m2000"} {
  func.func @main(%x: tensor<64x64xf32>) -> tensor<64x64xf32> {
    %w = arith.constant dense<WEIGHT> : tensor<64x64xf32>
    %0 = "ipu.matmul"(%x, %w) {ipu.ipu_id = 0 : i64} : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
    %1 = "ipu.matmul"(%0, %w) {ipu.ipu_id = 1 : i64} : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
    %2 = "ipu.matmul"(%1, %w) {ipu.ipu_id = 2 : i64} : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
    %3 = "ipu.matmul"(%2, %w) {ipu.ipu_id = 3 : i64} : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
    return %3 : tensor<64x64xf32>
  }
}"""


WEIGHT = (np.arange(64 * 64, dtype=np.float32).reshape(64, 64) % 7 - 3) / 8  # exact in f32, no two rows alike in order


def _unrolled(pipeline: str, micro_batches: int) -> str:
    """`pipeline` with ipu-pipeline emitting every step, the steady state's too."""
    return pipeline.replace(f"micro-batches={micro_batches}}}", f"micro-batches={micro_batches} unroll=true}}")


def _weight_copies(micro_batches: int):
    """The chain of 4 matmuls on one constant weight, pipelined: its simulator, the buffers the
    weight or a copy of it is copied into, and those the weight itself is copied into."""
    with make_context():
        module = ir.Module.parse(CHAIN.replace("WEIGHT", str(WEIGHT.tolist())))
        pipeline = _unrolled(default_pipeline("m2000", micro_batches=micro_batches), micro_batches)  # a copy per micro-batch
        build_pass_manager(pipeline).run(module.operation)
        program = next(op for op in module.body.operations if "ipu.program" in op.attributes)
        weight = next(
            ir.FlatSymbolRefAttr(op.attributes["buffer"]).value
            for op in program.regions[0].blocks[0].operations
            if op.operation.name == "ipu.host_to_device" and not isinstance(op.operands[0].owner, ir.Block)  # the constant
        )
        dests, direct = {weight}, set()  # its copies and theirs; the weight's own
        for op in program.regions[0].blocks[0].operations:
            if op.operation.name == "ipu.copy" and ir.FlatSymbolRefAttr(op.attributes["source"]).value in dests:
                dests.add(ir.FlatSymbolRefAttr(op.attributes["dest"]).value)
                if ir.FlatSymbolRefAttr(op.attributes["source"]).value == weight:
                    direct.add(ir.FlatSymbolRefAttr(op.attributes["dest"]).value)
        return runtime_api.load_simulator(module, None, "main", verified=True), dests - {weight}, direct


def test_micro_batches_copies_of_a_weight_share_one_array() -> None:
    """Each micro-batch's matmul on the weight's IPU reads it copied into a buffer of its own, at
    load (the copies read only a weight); those on the same tiles in the same layout hold the
    same bytes, and the later plan holds them once (runtime/planner.py `_same_bytes`): one array
    per layout of the weight, not per micro-batch. The weight crosses to each other IPU once,
    its micro-batches there reading that one buffer (ipu-schedule's `bring`). Runs stay equal
    bit for bit to the checked run."""
    x = np.random.default_rng(0).standard_normal((64, 64)).astype(np.float32)
    for micro_batches in (4, 8):
        simulator, dests, direct = _weight_copies(micro_batches)
        assert len(direct) == micro_batches + 3  # a copy per micro-batch on its IPU, one to each other IPU
        checked = simulator.run([x])[0]  # the checked plan: each buffer its own rows
        cycles = simulator.profile.cycles
        assert np.array_equal(simulator.run([x])[0], checked) and simulator.profile.cycles == cycles
        copies = [b for b in simulator._later.buffers if b.name in dests]
        layouts = {(b.row_of_tile.tobytes(), b.elements) for b in copies}
        assert len({id(b.data) for b in copies}) == len(layouts) < 3 * micro_batches
        buffers = simulator._later.buffers  # and one array of rows per tile per layout (`_share_rows`)
        assert len({id(b.row_of_tile) for b in buffers}) == len({b.row_of_tile.tobytes() for b in buffers}) < len(buffers)


def _compiled(text: str, micro_batches: int, unroll: bool = False) -> ir.Module:
    """`text` through the default pipeline on an m2000, pipelined, the steady state a loop or unrolled."""
    pipeline = default_pipeline("m2000", micro_batches=micro_batches)
    module = ir.Module.parse(text)
    build_pass_manager(_unrolled(pipeline, micro_batches) if unroll else pipeline).run(module.operation)
    return module


def _op_count(module: ir.Module) -> int:
    count = [0]

    def visit(_op: ir.Operation) -> ir.WalkResult:
        count[0] += 1
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    return count[0]


def test_steady_state_loop_does_not_grow_with_micro_batches() -> None:
    """The steady state is one scf.for (Poplar's Repeat): the L3 program of 4 stages has about as
    many ops for 8, 16 and 32 micro-batches; unrolled it grows with them."""
    widths = [64, 128, 128, 128, 64]
    with make_context():
        looped = [_op_count(_compiled(mlp(widths, batch=2 * m), m)) for m in (8, 16, 32)]
        unrolled = [_op_count(_compiled(mlp(widths, batch=2 * m), m, unroll=True)) for m in (8, 16)]
    # The same ops; supersteps may merge a little differently (the output the loop carries is
    # M x rows, planned anew for each M), so the count may move by a few syncs and executes.
    assert max(looped) - min(looped) <= 0.01 * looped[0], looped
    assert unrolled[1] - unrolled[0] > 100 * (max(looped) - min(looped) + 1), (unrolled, looped)


@pytest.mark.parametrize("micro_batches", [5, 8])
def test_steady_state_loop_equals_unrolled_bit_for_bit(micro_batches: int) -> None:
    """The loop's outputs equal the unrolled pipeline's bit for bit (each micro-batch's arithmetic
    is the same), and upstream MLIR's ExecutionEngine's (the L0 MLP); a value skipping a stage rides the
    loop's line of carried tensors (SKIP: IPU 0 to IPU 2)."""
    for text in (mlp([64, 128, 128, 128, 64], batch=2 * micro_batches), SKIP.replace("16x", f"{micro_batches * 4}x")):
        inputs = _inputs(text)
        with make_context():
            looped, unrolled = _compiled(text, micro_batches), _compiled(text, micro_batches, unroll=True)
            assert "scf.for" in str(looped) and "scf.for" not in str(unrolled)
            (got,) = runtime_api.load_simulator(looped, None, "main", verified=True).run(inputs)
            (expected,) = runtime_api.load_simulator(unrolled, None, "main", verified=True).run(inputs)
        assert np.array_equal(got, expected)
        if "ipu.matmul" not in text:  # L0 (the MLP): the ExecutionEngine runs it
            (reference,) = reference_outputs(text, inputs, "main")
            np.testing.assert_allclose(got, reference, rtol=1e-4, atol=1e-4 * np.abs(reference).max())
