"""ipu-convert-to-ipu (L0 -> L1) and ipu-import-tosa: the structure of what they produce (op
names, attributes, shapes), that the output is L1 and verifies, and that every unsupported op
is reported at its location. Numbers are checked end to end by test_differential.py."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from mlir import ir

from ipu_mlir.dialects import ipu, make_context, verifier
from ipu_mlir.dialects.ops import REGISTRY
from ipu_mlir.lowering import build_pass_manager
from ipu_mlir.tools.ipu_opt import SPLIT_MARKER

LIT = Path(__file__).resolve().parents[1] / "lit" / "convert-to-ipu"
# The compute ops of the registry (`REGISTRY`, whatever it holds) and data ops.
L1_OPS = set(REGISTRY) | {
    "arith.constant", "func.return", "tensor.empty", "tensor.extract_slice", "tensor.insert_slice", "tensor.pad",
    "tensor.expand_shape", "tensor.collapse_shape", "tensor.concat", "scf.for", "scf.if", "scf.while", "scf.index_switch",
    "tensor.extract", "arith.index_cast",  # a predicate only: a condition, or a switch's index
}  # fmt: skip


@pytest.fixture
def context() -> ir.Context:
    with make_context() as context, ir.Location.unknown():
        yield context


def convert(text: str, pipeline: str = "ipu-convert-to-ipu") -> ir.Operation:
    module = ir.Operation.parse(f"module {{\n{text}\n}}", source_name="input.mlir").operation
    build_pass_manager(f"builtin.module({pipeline})").run(module)
    return module


def body(module: ir.Operation) -> list[ir.OpView]:
    functions = [op for op in module.regions[0].blocks[0].operations if op.operation.name == "func.func"]
    assert len(functions) == 1
    return list(functions[0].regions[0].blocks[0].operations)


def names(module: ir.Operation) -> list[str]:
    return [op.operation.name for op in body(module)]


def shape(value: ir.Value) -> list[int]:
    return list(ir.RankedTensorType(value.type).shape)


def test_matmul_with_zero_fill_is_one_ipu_matmul(context: ir.Context) -> None:
    module = convert("""
func.func @main(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>) -> tensor<4x16xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<4x16xf32>
  %fill = linalg.fill ins(%zero : f32) outs(%empty : tensor<4x16xf32>) -> tensor<4x16xf32>
  %m = linalg.matmul ins(%a, %b : tensor<4x8xf32>, tensor<8x16xf32>) outs(%fill : tensor<4x16xf32>) -> tensor<4x16xf32>
  return %m : tensor<4x16xf32>
}""")
    assert names(module) == ["ipu.matmul", "func.return"]
    matmul = body(module)[0]
    assert isinstance(matmul, ipu.MatmulOp)
    assert (shape(matmul.lhs), shape(matmul.rhs), shape(matmul.result)) == ([4, 8], [8, 16], [4, 16])


def test_matmul_init_is_added_after(context: ir.Context) -> None:
    module = convert("""
func.func @main(%a: tensor<4x8xi8>, %b: tensor<8x16xi8>, %c: tensor<4x16xi32>) -> tensor<4x16xi32> {
  %m = linalg.matmul ins(%a, %b : tensor<4x8xi8>, tensor<8x16xi8>) outs(%c : tensor<4x16xi32>) -> tensor<4x16xi32>
  return %m : tensor<4x16xi32>
}""")
    assert names(module) == ["ipu.matmul", "tensor.empty", "linalg.generic", "func.return"]
    matmul, _, add, _ = body(module)
    # i8 x i8 accumulates in the outs' i32.
    assert str(ir.RankedTensorType(matmul.lhs.type).element_type) == "i8"
    assert str(ir.RankedTensorType(matmul.result.type).element_type) == "i32"
    init = module.regions[0].blocks[0].operations[0].regions[0].blocks[0].arguments[2]
    assert list(add.operands)[:2] == [matmul.result, init]
    assert [op.operation.name for op in add.regions[0].blocks[0].operations] == ["arith.addi", "linalg.yield"]


@pytest.mark.parametrize(
    "op,lhs,rhs,result,expected",
    [
        ("matvec", "4x8", "8", "4", ["tensor.expand_shape", "ipu.matmul", "tensor.collapse_shape"]),
        ("vecmat", "8", "8x16", "16", ["tensor.expand_shape", "ipu.matmul", "tensor.collapse_shape"]),
        ("batch_matmul", "2x4x8", "2x8x16", "2x4x16", ["ipu.matmul"]),
        ("batch_vecmat", "2x8", "2x8x16", "2x16", ["tensor.expand_shape", "ipu.matmul", "tensor.collapse_shape"]),
    ],
)
def test_contractions_become_matmuls_with_unit_dims(
    context: ir.Context, op: str, lhs: str, rhs: str, result: str, expected: list[str]
) -> None:
    module = convert(f"""
func.func @main(%a: tensor<{lhs}xf32>, %b: tensor<{rhs}xf32>) -> tensor<{result}xf32> {{
  %zero = arith.constant dense<0.0> : tensor<{result}xf32>
  %m = linalg.{op} ins(%a, %b : tensor<{lhs}xf32>, tensor<{rhs}xf32>) outs(%zero : tensor<{result}xf32>) -> tensor<{result}xf32>
  return %m : tensor<{result}xf32>
}}""")
    assert names(module) == [*expected, "func.return"]
    matmul = next(op for op in body(module) if isinstance(op, ipu.MatmulOp))
    assert len(shape(matmul.lhs)) == len(shape(matmul.rhs)) == len(shape(matmul.result)) >= 2


def test_transposed_matmul_transposes_its_operand(context: ir.Context) -> None:
    module = convert("""
func.func @main(%a: tensor<8x4xf32>, %b: tensor<8x16xf32>) -> tensor<4x16xf32> {
  %zero = arith.constant dense<0.0> : tensor<4x16xf32>
  %m = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (k, m)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%a, %b : tensor<8x4xf32>, tensor<8x16xf32>) outs(%zero : tensor<4x16xf32>) -> tensor<4x16xf32>
  return %m : tensor<4x16xf32>
}""")
    assert names(module) == ["tensor.empty", "linalg.generic", "ipu.matmul", "func.return"]
    transpose, matmul = body(module)[1:3]
    maps = [str(ir.AffineMapAttr(m).value) for m in ir.ArrayAttr(transpose.attributes["indexing_maps"])]
    assert maps == ["(d0, d1) -> (d1, d0)", "(d0, d1) -> (d0, d1)"]
    assert matmul.lhs == transpose.results[0] and shape(matmul.lhs) == [4, 8]


def test_nhwc_conv_is_transposed_around_an_nchw_ipu_conv(context: ir.Context) -> None:
    module = convert("""
func.func @main(%x: tensor<2x11x9x3xf32>, %w: tensor<3x3x3x8xf32>) -> tensor<2x3x3x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x3x3x8xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<2x3x3x8xf32>) -> tensor<2x3x3x8xf32>
  %c = linalg.conv_2d_nhwc_hwcf {dilations = dense<2> : tensor<2xi64>, strides = dense<[3, 2]> : tensor<2xi64>}
      ins(%x, %w : tensor<2x11x9x3xf32>, tensor<3x3x3x8xf32>) outs(%f : tensor<2x3x3x8xf32>) -> tensor<2x3x3x8xf32>
  return %c : tensor<2x3x3x8xf32>
}""")
    conv = next(op for op in body(module) if isinstance(op, ipu.ConvOp))
    assert (conv.strides, conv.dilations, conv.padding, conv.groups) == ((3, 2), (2, 2), (0, 0, 0, 0), 1)
    assert (shape(conv.input), shape(conv.filter), shape(conv.result)) == ([2, 3, 11, 9], [8, 3, 3, 3], [2, 8, 3, 3])
    assert names(module).count("linalg.generic") == 3  # input, filter, result transposes


def test_zero_pad_becomes_conv_padding_and_bias_outs_an_add(context: ir.Context) -> None:
    module = convert("""
func.func @main(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %bias: tensor<4xf32>) -> tensor<1x4x4x4xf32> {
  %zero = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 0, 1, 2] high[0, 0, 1, 0] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<1x3x8x8xf32> to tensor<1x3x10x10xf32>
  %e = tensor.empty() : tensor<1x4x4x4xf32>
  %b = linalg.broadcast ins(%bias : tensor<4xf32>) outs(%e : tensor<1x4x4x4xf32>) dimensions = [0, 2, 3]
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>}
      ins(%p, %w : tensor<1x3x10x10xf32>, tensor<4x3x3x3xf32>) outs(%b : tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
  return %c : tensor<1x4x4x4xf32>
}""")
    assert names(module) == ["ipu.conv", "tensor.empty", "linalg.generic", "func.return"]
    conv = body(module)[0]
    assert conv.padding == (1, 2, 1, 0)  # top, left, bottom, right
    assert shape(conv.input) == [1, 3, 8, 8]


def test_depthwise_conv_is_grouped(context: ir.Context) -> None:
    module = convert(
        """
func.func @main(%x: tensor<1x4x6x6xf16>, %w: tensor<4x3x3xf16>) -> tensor<1x4x4x4xf16> {
  %zero = arith.constant 0.0 : f16
  %e = tensor.empty() : tensor<1x4x4x4xf16>
  %f = linalg.fill ins(%zero : f16) outs(%e : tensor<1x4x4x4xf16>) -> tensor<1x4x4x4xf16>
  %c = linalg.depthwise_conv_2d_nchw_chw ins(%x, %w : tensor<1x4x6x6xf16>, tensor<4x3x3xf16>) outs(%f """
        """: tensor<1x4x4x4xf16>) -> tensor<1x4x4x4xf16>
  return %c : tensor<1x4x4x4xf16>
}"""
    )
    assert names(module) == ["tensor.expand_shape", "ipu.conv", "func.return"]
    conv = body(module)[1]
    assert conv.groups == 4 and shape(conv.filter) == [4, 1, 3, 3]


def test_pooling_is_a_window_generic(context: ir.Context) -> None:
    module = convert("""
func.func @main(%x: tensor<1x2x8x8xf32>) -> tensor<1x2x4x4xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : tensor<1x2x4x4xf32>
  %f = linalg.fill ins(%ninf : f32) outs(%e : tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %k = tensor.empty() : tensor<2x2xf32>
  %p = linalg.pooling_nchw_max {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>}
      ins(%x, %k : tensor<1x2x8x8xf32>, tensor<2x2xf32>) outs(%f : tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  return %p : tensor<1x2x4x4xf32>
}""")
    pool = [op for op in body(module) if op.operation.name == "linalg.generic"][-1]
    maps = [str(ir.AffineMapAttr(m).value) for m in ir.ArrayAttr(pool.attributes["indexing_maps"])]
    assert maps[0] == "(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2 * 2 + d4, d3 * 2 + d5)"
    assert [str(i) for i in ir.ArrayAttr(pool.attributes["iterator_types"])][-2:] == ["#linalg.iterator_type<reduction>"] * 2


def _lit_cases():
    for path in sorted(LIT.glob("*.mlir")):
        for index, chunk in enumerate(path.read_text().split(f"\n{SPLIT_MARKER}\n")):
            if "func.func" in chunk and "expected-error" not in chunk:
                pipeline = "ipu-import-tosa,ipu-convert-to-ipu" if "tosa." in chunk else "ipu-convert-to-ipu"
                yield pytest.param(chunk, pipeline, id=f"{path.name}#{index}")


@pytest.mark.parametrize("chunk,pipeline", list(_lit_cases()))
def test_output_is_l1_verifies_and_converts_to_itself(context: ir.Context, chunk: str, pipeline: str) -> None:
    chunk = re.sub(r"^//.*$", "", chunk, flags=re.M)
    resources = re.search(r"\{-#.*#-\}", chunk, flags=re.S)
    module = ir.Module.parse(chunk)
    build_pass_manager(f"builtin.module({pipeline})").run(module.operation)
    for function in module.body.operations:
        assert function.operation.name == "func.func"
        for op in function.regions[0].blocks[0].operations:
            assert op.operation.name in L1_OPS
    assert verifier.verify(module.operation) == []
    if resources:
        assert "dialect_resources" in str(module)
    # Converting L1 again changes nothing but the order canonicalize gives constants.
    build_pass_manager("builtin.module(canonicalize)").run(module.operation)
    once = str(module)
    build_pass_manager("builtin.module(ipu-convert-to-ipu,canonicalize)").run(module.operation)
    assert str(module) == once


def test_every_unsupported_op_is_reported_at_its_location(context: ir.Context) -> None:
    with pytest.raises(ir.MLIRError) as failure:
        convert("""
func.func @main(%x: tensor<8x4xf32>) -> (tensor<8x4xi32>, tensor<4x4xf32>, tensor<8xi64>) {
  %c0 = arith.constant 0 : index
  %e = linalg.softmax dimension(1) ins(%x : tensor<8x4xf32>) outs(%x : tensor<8x4xf32>) -> tensor<8x4xf32>
  %splat = tensor.bitcast %e : tensor<8x4xf32> to tensor<8x4xi32>
  %s = tensor.extract_slice %x[0, 0] [4, 4] [2, 1] : tensor<8x4xf32> to tensor<4x4xf32>
  %empty = tensor.empty() : tensor<8xi64>
  %iota = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} outs(%empty : tensor<8xi64>) {
  ^bb0(%out: i64):
    %i = linalg.index 0 : index
    %v = arith.index_cast %i : index to i64
    linalg.yield %v : i64
  } -> tensor<8xi64>
  return %splat, %s, %iota : tensor<8x4xi32>, tensor<4x4xf32>, tensor<8xi64>
}""")
    reported = [(d.location.start_line, d.message) for d in failure.value.error_diagnostics]
    assert reported == [
        (5, "'linalg.softmax' is not supported by ipu-convert-to-ipu"),
        (6, "'tensor.bitcast' is not supported by ipu-convert-to-ipu"),
        (9, "'linalg.generic' is not supported by ipu-convert-to-ipu: linalg.index in the body (ipu-index-to-iota makes it an input)"),
    ]
    assert all(str(d.location).startswith('loc("input.mlir"') for d in failure.value.error_diagnostics)


def test_asserts_stay_in_the_body_unless_dropped(context: ir.Context) -> None:
    text = (
        """
func.func @main(%x: tensor<8xf32>) -> tensor<8xf32> {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<8xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], """
        """iterator_types = ["parallel"]} ins(%x : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %nz = arith.cmpf one, %in, %zero : f32
    cf.assert %nz, "division by zero"
    %q = arith.divf %one, %in : f32
    linalg.yield %q : f32
  } -> tensor<8xf32>
  return %r : tensor<8xf32>
}"""
    )
    converted = convert(text)
    kept = next(op for op in body(converted) if op.operation.name == "linalg.generic")
    assert [op.operation.name for op in kept.regions[0].blocks[0].operations] == ["arith.cmpf", "cf.assert", "arith.divf", "linalg.yield"]
    module = convert(text, "ipu-convert-to-ipu{drop-asserts}")
    generic = next(op for op in body(module) if op.operation.name == "linalg.generic")
    assert [op.operation.name for op in generic.regions[0].blocks[0].operations] == ["arith.divf", "linalg.yield"]


def test_keepdim_reduction_output_is_indexed_by_loops(context: ir.Context) -> None:
    module = convert(
        """
func.func @main(%x: tensor<2x5x16xf32>, %init: tensor<2x5x1xf32>) -> tensor<2x5x1xf32> {
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, 0)>], """
        """iterator_types = ["parallel", "parallel", "reduction"]} ins(%x : tensor<2x5x16xf32>) outs(%init """
        """: tensor<2x5x1xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  } -> tensor<2x5x1xf32>
  return %r : tensor<2x5x1xf32>
}"""
    )
    reduction = next(op for op in body(module) if op.operation.name == "linalg.generic")
    output_map = ir.AffineMapAttr(list(ir.ArrayAttr(reduction.attributes["indexing_maps"]))[-1]).value
    assert all(isinstance(expr, ir.AffineDimExpr) for expr in output_map.results)


def test_tosa_is_imported_then_converted(context: ir.Context) -> None:
    module = convert(
        """
func.func @main(%x: tensor<1x8x8x3xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<4xf32>) -> tensor<1x8x8x4xf32> {
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %c = tosa.conv2d %x, %w, %b, %zp, %zp {acc_type = f32, dilation = array<i64: 1, 1>, pad = array<i64: 1, 1, 1, 1>, """
        """stride = array<i64: 1, 1>}
      : (tensor<1x8x8x3xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x8x8x4xf32>
  return %c : tensor<1x8x8x4xf32>
}""",
        "ipu-import-tosa,ipu-convert-to-ipu",
    )
    conv = next(op for op in body(module) if isinstance(op, ipu.ConvOp))
    assert conv.padding == (1, 1, 1, 1)
    assert not any(name.startswith("tosa.") for name in names(module))


def test_tosa_op_upstream_cannot_lower_is_named(context: ir.Context) -> None:
    with pytest.raises(ir.MLIRError) as failure:
        convert(
            """
func.func @main(%x: tensor<1x8xf32>) -> tensor<1x8xf32> {
  %y = tosa.custom %x {domain_name = "d", operator_name = "o", implementation_attrs = ""} : (tensor<1x8xf32>) -> tensor<1x8xf32>
  return %y : tensor<1x8xf32>
}""",
            "ipu-import-tosa",
        )
    assert [d.message for d in failure.value.error_diagnostics] == ["'tosa.custom' is not supported by ipu-import-tosa"]


def test_torch_model(context: ir.Context) -> None:
    import torch  # a test dependency (pyproject.toml), imported here to keep collection fast
    from torch_mlir import fx

    class Net(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.conv = torch.nn.Conv2d(3, 4, 3, stride=1, padding=1)
            self.pool = torch.nn.MaxPool2d(2)
            self.avg = torch.nn.AvgPool2d(2)
            self.linear = torch.nn.Linear(16, 10)

        def forward(self, x):
            y = self.avg(self.pool(torch.relu(self.conv(x))))
            return torch.softmax(self.linear(y.flatten(1)), dim=1)

    net, x = Net().eval(), torch.randn(1, 3, 8, 8)
    imported = fx.export_and_import(net, x, output_type="linalg-on-tensors", func_name="main")
    module = ir.Module.parse(str(imported))
    build_pass_manager("builtin.module(ipu-convert-to-ipu)").run(module.operation)
    ops = names(module.operation)
    assert set(ops) <= L1_OPS
    assert ops.count("ipu.conv") == 1 and ops.count("ipu.matmul") == 1
    assert "tensor.pad" not in ops and next(op for op in body(module.operation) if isinstance(op, ipu.ConvOp)).padding == (1, 1, 1, 1)
    assert verifier.verify(module.operation) == []

    # End to end: the imported model compiled for gc200 and simulated matches PyTorch itself.
    from ipu_mlir.frontends.api import run

    (got,), profile = run(str(imported), [x.numpy()], target="gc200")
    with torch.no_grad():
        expected = net(x).numpy()
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-6)
    assert profile.supersteps > 1
