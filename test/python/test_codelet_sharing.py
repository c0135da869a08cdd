"""Codelets of equal bodies under other names (a model's repeated layers) compile once
(`codelet.body_key`, `Planner._codelet`): the key tells bodies apart op for op, the shared plan
answers to each codelet's own name, and the shared plans give the bytes of plans of their own."""

from __future__ import annotations

import numpy as np
import pytest
from mlir import ir

from ipu_mlir.dialects import make_context
from ipu_mlir.lowering.pipelines import compile_module
from ipu_mlir.runtime import planner as planner_module
from ipu_mlir.runtime.api import load_module
from ipu_mlir.runtime.codelet import CodeletError, body_key, compile_codelet
from ipu_mlir.runtime.planner import Planner
from ipu_mlir.runtime.simulator import Simulator
from ipu_mlir.target import load_target

CONTEXT = make_context()

BODY = """func.func @{name}(%a: tensor<3x4xf32>, %b: tensor<3x4xf32>) -> tensor<3x4xf32> {{
  %c = arith.constant dense<{constant}> : tensor<3x4xf32>
  %0 = arith.{op} {x}, {y} : tensor<3x4xf32>
  %1 = arith.addf %0, %c : tensor<3x4xf32>
  return %1 : tensor<3x4xf32>
}}"""

ASSERTING = """func.func @{name}(%a: f32, %b: f32) -> f32 {{
  %0 = arith.cmpf olt, %a, %b : f32
  cf.assert %0, "a below b"
  return %a : f32
}}"""


def function(text: str, **fields) -> ir.OpView:
    defaults = dict(name="f", constant="1.0", op="subf", x="%a", y="%b")
    with CONTEXT:
        module = ir.Module.parse(text.format(**{**defaults, **fields}))
    function.keep.append(module)  # the ops live as long as their module
    return module.body.operations[0]


function.keep = []


def test_equal_bodies_under_other_names_have_one_key():
    first, second = body_key(function(BODY, name="layer0")), body_key(function(BODY, name="layer1"))
    assert first == second and first[1]


@pytest.mark.parametrize("change", [dict(constant="2.0"), dict(op="mulf"), dict(x="%b", y="%a")])
def test_bodies_differing_in_an_attribute_an_op_or_the_wiring_have_other_keys(change):
    assert body_key(function(BODY))[0] != body_key(function(BODY, **change))[0]


CONV = """func.func @{name}(%x: tensor<1x4x9x9xf32>, %w: tensor<8x2x3x3xf32>) -> tensor<1x8x4x4xf32> {{
  %c = "ipu.conv"(%x, %w) {{strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>,
                           groups = 2 : i64}} : (tensor<1x4x9x9xf32>, tensor<8x2x3x3xf32>) -> tensor<1x8x4x4xf32>
  return %c : tensor<1x8x4x4xf32>"""


def test_a_body_whose_kernel_remembers_its_operands_is_not_shared():
    key, shareable = body_key(function(CONV + "\n}}"))
    assert key is not None and not shareable


def test_a_body_with_an_assert_is_not_shared():
    key, shareable = body_key(function(ASSERTING))
    assert key is not None and not shareable


def test_a_renamed_plan_computes_alike_and_names_itself_in_errors():
    compiled = compile_codelet(function(BODY, name="layer0"))
    renamed = compiled.renamed("layer1")
    a, b = np.arange(24, dtype=np.float32).reshape(2, 3, 4), np.ones((2, 3, 4), np.float32)
    assert renamed([a, b])[0].tobytes() == compiled([a, b])[0].tobytes() == (a - b + 1).tobytes()
    with pytest.raises(CodeletError, match="codelet @layer1 takes 2 arguments"):
        renamed([a])


PROGRAM = """module attributes {ipu.target = "tiny"} {
  func.func @main(%a: tensor<16x16xf32>, %b: tensor<16x16xf32>) -> tensor<16x16xf32> {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<16x16xf32>
    %f = linalg.fill ins(%zero : f32) outs(%e : tensor<16x16xf32>) -> tensor<16x16xf32>
    %r = linalg.matmul ins(%a, %b : tensor<16x16xf32>, tensor<16x16xf32>) outs(%f : tensor<16x16xf32>) -> tensor<16x16xf32>
    %s = linalg.matmul ins(%r, %b : tensor<16x16xf32>, tensor<16x16xf32>) outs(%f : tensor<16x16xf32>) -> tensor<16x16xf32>
    return %s : tensor<16x16xf32>
  }
}"""


def run(monkeypatch, shared: bool):
    """The two-matmul program's plan and output, codelets of equal bodies shared or not."""
    if not shared:
        monkeypatch.setattr(planner_module, "body_key", lambda function: (None, False))
    module = load_module(PROGRAM)
    with module.context:
        compile_module(module)
        plan = Planner(module.operation, load_target("tiny"), "main")
    rng = np.random.default_rng(3)
    a, b = (rng.standard_normal((16, 16)).astype(np.float32) for _ in range(2))
    return plan, Simulator(module).run([a, b])[0], a, b


def test_a_layer_repeated_compiles_its_codelets_once_with_the_same_bytes(monkeypatch):
    plan, shared, a, b = run(monkeypatch, shared=True)
    kernels = [kernel for kernel, _, _ in plan.codelets.values()]
    assert len(plan.bodies) < len(kernels)  # some codelet took another's plan
    steps = [k._steps for k in kernels]
    assert any(s is t for i, s in enumerate(steps) for t in steps[:i])
    assert len({k.name for k in kernels}) == len(kernels)  # each answers to its own name
    _, alone, _, _ = run(monkeypatch, shared=False)
    assert shared.tobytes() == alone.tobytes()
    np.testing.assert_allclose(shared, (a @ b) @ b, rtol=1e-5, atol=1e-5)
