"""ipu-shard end to end: an MLP and a small CNN sharded over 2 and 4 IPUs of an m2000 run on the
simulator bit for bit as on one gc200, match upstream MLIR's ExecutionEngine, and their
profile counts the bytes over the IPU-Links and the global syncs."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from mlir import ir

from ipu_mlir.dialects import make_context
from ipu_mlir.frontends.api import reference_outputs
from ipu_mlir.lowering.pass_registry import build_pass_manager
from ipu_mlir.lowering.pipelines import default_pipeline
from ipu_mlir.runtime import api as runtime_api
from ipu_mlir.runtime.api import random_inputs
from ipu_mlir.target import cost_model, load_target

REPO = Path(__file__).resolve().parents[2]


def mlp(widths: list[int], batch: int = 8) -> str:
    """L0 text: dense layers with bias and ReLU, weights as arguments."""
    args, body, x = [f"%x: tensor<{batch}x{widths[0]}xf32>"], [], "%x"
    for i, (n_in, n_out) in enumerate(zip(widths, widths[1:])):
        args += [f"%w{i}: tensor<{n_in}x{n_out}xf32>", f"%b{i}: tensor<{n_out}xf32>"]
        t = f"tensor<{batch}x{n_out}xf32>"
        body += [
            f"%e{i} = tensor.empty() : {t}",
            f"%z{i} = linalg.fill ins(%zero : f32) outs(%e{i} : {t}) -> {t}",
            f"%m{i} = linalg.matmul ins({x}, %w{i} : tensor<{batch}x{n_in}xf32>, tensor<{n_in}x{n_out}xf32>) outs(%z{i} : {t}) -> {t}",
            f'%h{i} = linalg.generic {{indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]}}'
            f" ins(%m{i}, %b{i} : {t}, tensor<{n_out}xf32>) outs(%e{i} : {t}) {{",
            "^bb0(%a: f32, %b: f32, %o: f32):",
            "  %s = arith.addf %a, %b : f32",
            "  %r = arith.maximumf %s, %zero : f32",
            "  linalg.yield %r : f32",
            f"}} -> {t}",
        ]
        x = f"%h{i}"
    result = f"tensor<{batch}x{widths[-1]}xf32>"
    return "\n".join(
        [
            "#id = affine_map<(d0, d1) -> (d0, d1)>",
            "#col = affine_map<(d0, d1) -> (d1)>",
            f"func.func @main({', '.join(args)}) -> {result} {{",
            "%zero = arith.constant 0.0 : f32",
            *body,
            f"return {x} : {result}",
            "}",
        ]
    )


def simulate(text: str, target: str, shard: str):
    """Compiles `text` with the default pipeline, its ipu-shard step as `shard`, and returns the
    simulator of the program."""
    context = make_context()
    with context:
        module = ir.Module.parse(text)
        pipeline = default_pipeline(target).replace(",ipu-shard,", f",{shard},")
        build_pass_manager(pipeline).run(module.operation)
        return runtime_api.load_simulator(module, None, "main", verified=True)


MODELS = {"mlp": mlp([256, 512, 512, 256, 64]), "cnn": (REPO / "examples" / "cnn.mlir").read_text()}


@pytest.mark.parametrize("ipus", [2, 4])
@pytest.mark.parametrize("name", sorted(MODELS))
def test_sharded_run_matches_one_ipu_bit_for_bit(name: str, ipus: int) -> None:
    text = MODELS[name]
    one = simulate(text, "gc200", "ipu-shard")
    inputs = _inputs(text)
    expected = one.run(inputs)
    sharded = simulate(text, "m2000", f"ipu-shard{{ipus={ipus}}}")
    got = sharded.run(inputs)
    for g, e in zip(got, expected):
        assert g.dtype == e.dtype and np.array_equal(g, e)
    for g, r in zip(got, reference_outputs(text, inputs, "main")):
        np.testing.assert_allclose(g, r, rtol=1e-4, atol=1e-4 * np.abs(r).max())
    profile = sharded.profile
    assert profile.link_bytes > 0 and profile.global_syncs >= 1
    assert one.profile.link_bytes == 0 and one.profile.global_syncs == 0
    m2000 = load_target("m2000")
    assert {step.sync_cycles for step in profile.steps if step.sync == "global"} == {cost_model.global_sync_cycles(m2000)}
    linked = [step for step in profile.steps if step.link_flows]
    assert all(step.exchange_cycles >= step.link_cycles == cost_model.link_cycles(step.link_flows, m2000) > 0 for step in linked)
    assert all(src != dst and 0 <= min(src, dst) and max(src, dst) < ipus for step in linked for src, dst in step.link_flows)


def _inputs(text: str) -> list[np.ndarray]:
    module = ir.Module.parse(text, make_context())
    main = next(op for op in module.body.operations if op.operation.name == "func.func")
    types = ir.FunctionType(ir.TypeAttr(main.attributes["function_type"]).value).inputs
    return random_inputs([(tuple(ir.RankedTensorType(t).shape), np.dtype(np.float32)) for t in types], seed=0)


ANNOTATED = """
module attributes {ipu.target = "m2000"} {
  func.func @main(%x: tensor<8x256xf32>, %w0: tensor<256x256xf32>, %w1: tensor<256x256xf32>) -> tensor<8x256xf32> {
    %0 = "ipu.matmul"(%x, %w0) : (tensor<8x256xf32>, tensor<256x256xf32>) -> tensor<8x256xf32>
    %1 = "ipu.matmul"(%0, %w1) {ipu.ipu_id = 3 : i64} : (tensor<8x256xf32>, tensor<256x256xf32>) -> tensor<8x256xf32>
    return %1 : tensor<8x256xf32>
  }
}
"""


def test_a_tensor_crosses_the_links_once() -> None:
    """%0 (8 x 256 f32) goes from IPU 0 to IPU 3, where many tiles read it: its 8 KiB cross the
    links once, up the ladder's rail and across its rung (poplibs' route)."""
    simulator = simulate(ANNOTATED, "m2000", "ipu-shard")
    inputs = _inputs(ANNOTATED)
    [got] = simulator.run(inputs)
    np.testing.assert_allclose(got, inputs[0] @ inputs[1] @ inputs[2], rtol=1e-4, atol=1e-4)
    [step] = [step for step in simulator.profile.steps if step.link_flows]
    assert step.link_flows == {(0, 3): 8 * 256 * 4} and step.sync is not None
    assert simulator.profile.link_bytes == 8192 and simulator.profile.global_syncs == 1
    assert step.link_cycles == cost_model.link_cycles({(0, 3): 8192}, load_target("m2000"))
