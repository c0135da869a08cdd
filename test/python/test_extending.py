"""docs/extending.md's worked example, run: the plugin docs/examples/extending/batch_reduce.py
adds `example.batch_reduce_matmul` (an IRDL dialect of its own and one record) and the pass
`example-annotate-cycles`; mini.toml is its target. The op goes from linalg through every pass
to codelets the simulator runs, against numpy; the console sessions of the page are run too."""

from __future__ import annotations

import importlib.util
import re
import shlex
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import test_conformance
from mlir import ir

from ipu_mlir.dialects import make_context, verifier
from ipu_mlir.dialects.ops import REGISTRY, codelet_cycles, record_of
from ipu_mlir.lowering import build_pass_manager
from ipu_mlir.lowering.pipelines import compile_module
from ipu_mlir.runtime.api import load_simulator
from ipu_mlir.target import load_target

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "docs" / "examples" / "extending"
PLUGIN, TARGET, MODEL = EXAMPLE / "batch_reduce.py", EXAMPLE / "mini.toml", EXAMPLE / "model.mlir"
BIN = Path(sys.executable).parent


def _load_plugin():
    """The plugin imported as ipu-opt imports it (registering its dialect, record and pass)."""
    name = "extending_example_plugin"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, PLUGIN)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


plugin = _load_plugin()


def _program(text: str, target: str = str(TARGET)) -> ir.Module:
    with make_context(), ir.Location.unknown():
        return compile_module(ir.Module.parse(text), target)


def _model(dtype: str = "f32", b: int = 4, m: int = 32, k: int = 32, n: int = 32, init: str = "zero") -> str:
    result = f"tensor<{m}x{n}x{dtype}>"
    init_ops = {
        "zero": f"%zero = arith.constant {'0' if dtype[0] == 'i' else '0.0'} : {dtype}\n"
        f"  %init = linalg.fill ins(%zero : {dtype}) outs(%empty : {result}) -> {result}",
        "bias": f"%init = arith.constant dense<0.5> : {result}",
    }[init]
    lhs, rhs = f"tensor<{b}x{m}x{k}x{dtype}>", f"tensor<{b}x{k}x{n}x{dtype}>"
    return f"""
func.func @main(%a: {lhs}, %w: {rhs}) -> {result} {{
  %empty = tensor.empty() : {result}
  {init_ops}
  %r = linalg.batch_reduce_matmul ins(%a, %w : {lhs}, {rhs}) outs(%init : {result}) -> {result}
  return %r : {result}
}}"""


def test_the_record_is_registered_with_the_built_in_ones():
    assert {"ipu.matmul", "ipu.conv", "linalg.generic", plugin.OP_NAME} <= set(REGISTRY)


def test_model_end_to_end_against_numpy():
    """docs/examples/extending/model.mlir: the op is converted, planned (its summed dims cut
    across tiles), scheduled into codelets holding it, and simulated."""
    module = _program(MODEL.read_text())
    codelets = [op for op in module.body.operations if "ipu.codelet" in op.attributes]
    ours = [c for c in codelets if plugin.OP_NAME in {inner.operation.name for inner in c.regions[0].blocks[0].operations}]
    assert ours, "the op reached no codelet: it was generalized instead of converted"
    assert any("combine" in ir.StringAttr(c.attributes["sym_name"]).value for c in codelets), "expected its summed loops cut across tiles"
    rng = np.random.default_rng(0)
    a, w = (rng.standard_normal((4, 32, 32)).astype(np.float32) for _ in range(2))
    (got,) = load_simulator(module).run([a, w])
    np.testing.assert_allclose(got, np.maximum(plugin.reference(a, w), 0), rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize(
    "dtype, b, m, k, n, init",
    [("f32", 3, 5, 7, 9, "bias"), ("f16", 2, 16, 64, 8, "zero"), ("f32", 16, 24, 40, 12, "zero"), ("i32", 4, 6, 10, 3, "zero")],
)
def test_shapes_and_types_against_numpy(dtype, b, m, k, n, init):
    module = _program(_model(dtype, b, m, k, n, init))
    assert plugin.OP_NAME in str(module)
    rng = np.random.default_rng(1)
    np_type = {"f32": np.float32, "f16": np.float16, "i32": np.int32}[dtype]
    a = rng.integers(-4, 4, (b, m, k)).astype(np_type)
    w = rng.integers(-4, 4, (b, k, n)).astype(np_type)
    (got,) = load_simulator(module).run([a, w])
    expected = plugin.reference(a, w) + (0.5 if init == "bias" else 0)
    np.testing.assert_allclose(got.astype(np.float64), expected, rtol=1e-3 if dtype == "f16" else 1e-6)


def test_codelet_cost_is_the_records():
    """4 x 32 x 32 x 32 FMAs as poplibs' AMP vertex on mini's 8 conv units (32 rows, 16 input
    and 4 output chunks): 31,401 cycles; plus the vertex overhead."""
    module = _program(MODEL.read_text())
    target = load_target(str(TARGET))
    for codelet in module.body.operations:
        body = list(codelet.regions[0].blocks[0].operations) if "ipu.codelet" in codelet.attributes else []
        ours = [op for op in body if op.operation.name == plugin.OP_NAME]
        if ours:
            extents = record_of(ours[0]).extents(ours[0])
            assert codelet_cycles(codelet, target) == 50 + record_of(ours[0]).work(ours[0], extents, target)
    with make_context(), ir.Location.unknown():
        module = ir.Module.parse(MODEL.read_text())
        pipeline = f"ipu-convert-to-ipu,example-annotate-cycles{{target={TARGET} overhead=false}}"
        build_pass_manager(pipeline, module.context).run(module.operation)
    body = module.body.operations[0].regions[0].blocks[0].operations
    cycles = [ir.IntegerAttr(op.attributes["example.cycles"]).value for op in body if op.operation.name == plugin.OP_NAME]
    assert cycles == [31401]


@pytest.mark.parametrize("target", ["tiny", "gc200"])
def test_the_record_conforms(target):
    """The record's examples, under every admitted cut of its space, against the reference:
    what test/python/test_conformance.py does for every registered record (docs/extending.md,
    'Testing it')."""
    for example in REGISTRY[plugin.OP_NAME].examples():
        test_conformance.test_record_conforms(plugin.OP_NAME, example, target)


def test_the_records_verifier_runs():
    text = """func.func @f(%a: tensor<4x8x16xf32>, %b: tensor<4x8x16xf32>) -> tensor<8x16xf32> {
      %r = "example.batch_reduce_matmul"(%a, %b) : (tensor<4x8x16xf32>, tensor<4x8x16xf32>) -> tensor<8x16xf32>
      return %r : tensor<8x16xf32>
    }"""
    module = ir.Module.parse(text, make_context())
    errors = [str(e) for e in verifier.verify(module.operation)]
    assert errors == [
        "-:2:12: error: 'example.batch_reduce_matmul' op expects B x M x K and B x K x N operands giving M x N, "
        "got tensor<4x8x16xf32>, tensor<4x8x16xf32> and tensor<8x16xf32>"
    ]


def _console_sessions() -> list[tuple[str, str]]:
    doc = (REPO / "docs" / "extending.md").read_text()
    blocks = re.findall(r"```console\n(.*?)```", doc, re.S)
    sessions = []
    for block in blocks:
        command, _, output = block.partition("\n")
        sessions.append((command.removeprefix("$ "), output))
    return sessions


@pytest.mark.parametrize("command, expected", _console_sessions())
def test_docs_console_sessions(command, expected):
    """Every `$ command` of docs/extending.md, run in docs/examples/extending/, prints what the page shows."""
    argv = shlex.split(command)
    argv[0] = str(BIN / argv[0])
    done = subprocess.run(argv, cwd=EXAMPLE, capture_output=True, text=True)
    assert done.stdout + done.stderr == expected


def test_docs_python_session():
    """The page's Python session (the one that simulates), run in docs/examples/extending/."""
    doc = (REPO / "docs" / "extending.md").read_text()
    (session,) = [block for block in re.findall(r"```python\n(.*?)```", doc, re.S) if "load_simulator" in block]
    done = subprocess.run([sys.executable, "-c", session], cwd=EXAMPLE, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
