"""`ipu-fold-batch-norm` end to end: MobileNetV2's Conv2dNormActivation (convolution, BatchNorm,
ReLU6) as a plain, a depthwise (with a bias) and a grouped convolution, through the default
pipeline and the simulator, against PyTorch and against upstream MLIR's ExecutionEngine on
torch-mlir's unfolded output; and the same model compiled without the pass, to show the
BatchNorm's work is gone from the program and that the results moved by rounding only."""

from __future__ import annotations

import numpy as np
import pytest
import torch  # torch and torch-mlir are test dependencies (pyproject.toml): no skip without them
from torch import nn

from ipu_mlir.frontends import api
from ipu_mlir.frontends import torch as torch_frontend
from ipu_mlir.lowering import build_pass_manager
from ipu_mlir.lowering.pipelines import default_pipeline
from ipu_mlir.runtime.simulator import Simulator

TARGET = "gc200"


def _model() -> tuple[nn.Module, torch.Tensor]:
    torch.manual_seed(0)
    model = nn.Sequential(
        nn.Conv2d(3, 8, 3, padding=1, bias=False), nn.BatchNorm2d(8), nn.ReLU6(),
        nn.Conv2d(8, 8, 3, stride=2, padding=1, groups=8, bias=True), nn.BatchNorm2d(8), nn.ReLU6(),
        nn.Conv2d(8, 12, 1, groups=2, bias=False), nn.BatchNorm2d(12),
    ).eval()  # fmt: skip
    with torch.no_grad():  # running statistics and affine parameters away from the identity
        for layer in model:
            if isinstance(layer, nn.BatchNorm2d):
                n = layer.num_features
                layer.running_mean.copy_(torch.randn(n) * 0.5)
                layer.running_var.copy_(torch.rand(n) * 2 + 0.1)
                layer.weight.copy_(torch.rand(n) * 2 - 1)
                layer.bias.copy_(torch.randn(n) * 0.5)
    return model, torch.randn(1, 3, 16, 16)


def _simulate(program, x: torch.Tensor) -> np.ndarray:
    return Simulator(program).run([x.numpy()])[0]


def test_conv_batchnorm_relu6_matches_pytorch_and_reference() -> None:
    model, x = _model()
    compiled = torch_frontend.compile(model, x, target=TARGET)
    got = compiled(x).numpy()
    np.testing.assert_allclose(got, torch_frontend.run_eager(model, x).numpy(), rtol=1e-5, atol=1e-5)
    (reference,) = api.reference_outputs(compiled.imported, [x.numpy()], "main")
    np.testing.assert_allclose(got, reference, rtol=1e-5, atol=1e-5)


def test_batchnorm_work_leaves_the_program() -> None:
    model, x = _model()
    imported = torch_frontend.export(model, x)
    folded = api.compile_to_program(imported, TARGET)
    with imported.context:
        unfolded = api.copy_module(imported)
        pipeline = default_pipeline(TARGET)
        assert "ipu-fold-batch-norm," in pipeline
        build_pass_manager(pipeline.replace("ipu-fold-batch-norm,", ""), imported.context).run(unfolded.operation)
    # The BatchNorm's `x - mean` is in the unfolded program's codelets, in no folded one.
    assert "arith.subf" in str(unfolded) and "arith.subf" not in str(folded)
    a, b = _simulate(folded, x), _simulate(unfolded, x)
    assert not np.array_equal(a, b)  # the filters changed: the sums round differently
    np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)


OUTS = """
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @main(%x: tensor<1x1x2x2xf32>) -> tensor<1x2x2x2xf32> {
  %zero = arith.constant 0.0 : f32
  %three = arith.constant 3.0 : f32
  %w = arith.constant dense<[[[[1.0]]], [[[2.0]]]]> : tensor<2x1x1x1xf32>
  %e = tensor.empty() : tensor<1x2x2x2xf32>
  %fill = linalg.fill ins(%zero : f32) outs(%e : tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  %y = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
    ins(%x, %w : tensor<1x1x2x2xf32>, tensor<2x1x1x1xf32>) outs(OUTS : tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  %0 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
    ins(%y : tensor<1x2x2x2xf32>) outs(%e : tensor<1x2x2x2xf32>) {
  ^bb0(%in: f32, %out: f32):
    %a = arith.mulf %in, %three : f32
    linalg.yield %a : f32
  } -> tensor<1x2x2x2xf32>
  return %0 : tensor<1x2x2x2xf32>
}
"""


@pytest.mark.parametrize("outs, folds", [("%fill", True), ("%e", False)])
def test_convolution_into_tensor_empty_stays(outs: str, folds: bool) -> None:
    """A convolution accumulating into `tensor.empty` (undefined contents: no bias to fold the
    shift into) is left alone; into a zero fill, the same one folds. Here, not in
    test/lit/fold-batch-norm/unchanged.mlir: test_differential.py runs every lit input against
    the ExecutionEngine, which refuses a result depending on undefined contents."""
    module = api.load_module(OUTS.replace("OUTS", outs))
    before = str(module)
    build_pass_manager("builtin.module(ipu-fold-batch-norm)", module.context).run(module.operation)
    assert ("arith.mulf" not in str(module)) == folds
    assert (str(module) == before) != folds
