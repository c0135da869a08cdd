"""`cf.assert` as torch-mlir emits it: decided at compile time on constants (ipu-fold-constants),
checked by the simulator on every element otherwise, with its message and location."""

from __future__ import annotations

import numpy as np
import pytest

from ipu_mlir.frontends import api
from ipu_mlir.runtime.memory import SimulationError
from ipu_mlir.target.diagnostics import IpuError, format_location

RECIPROCAL = """
func.func @main(%x: tensor<64xf32>) -> tensor<64xf32> {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<64xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%x : tensor<64xf32>) outs(%e : tensor<64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %nz = arith.cmpf one, %in, %zero : f32
    cf.assert %nz, "division by zero"
    %q = arith.divf %one, %in : f32
    linalg.yield %q : f32
  } -> tensor<64xf32>
  CONSUMER
}
"""
DIRECT = RECIPROCAL.replace("CONSUMER", "return %r : tensor<64xf32>")
# A consumer elementwise fusion folds the reciprocal into: the assert travels with it.
FUSED = RECIPROCAL.replace(
    "CONSUMER",
    """%s = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%r : tensor<64xf32>) outs(%e : tensor<64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %q = arith.mulf %in, %in : f32
    linalg.yield %q : f32
  } -> tensor<64xf32>
  return %s : tensor<64xf32>""",
)


@pytest.mark.parametrize("program,power", [(DIRECT, -1), (FUSED, -2)], ids=["direct", "fused"])
@pytest.mark.parametrize("target", ["tiny", "gc200"])
def test_run_time_assert_holds(program, power, target):
    x = np.linspace(0.5, 2.0, 64, dtype=np.float32)
    (out,), _ = api.run(program, [x], target=target)
    np.testing.assert_allclose(out, x.astype(np.float64) ** power, rtol=1e-6)


@pytest.mark.parametrize("program", [DIRECT, FUSED], ids=["direct", "fused"])
def test_run_time_assert_fails_with_its_message_at_its_location(program):
    x = np.linspace(0.5, 2.0, 64, dtype=np.float32)
    x[[3, 40]] = 0
    simulator = api.load_simulator(program, target="tiny")
    with pytest.raises(SimulationError, match=r"'cf.assert' failed on 2 of 64 elements: \"division by zero\"") as failure:
        simulator.run([x])
    assert format_location(failure.value.location) == "-:10:5"  # the cf.assert line of the source


def test_constant_assert_failing_is_a_compile_time_error():
    program = DIRECT.replace("ins(%x : tensor<64xf32>)", "ins(%c : tensor<64xf32>)").replace(
        "%e = tensor.empty()", "%c = arith.constant dense<0.0> : tensor<64xf32>\n  %e = tensor.empty()"
    )
    with pytest.raises(IpuError, match=r"'cf.assert' fails at compile time on 64 of 64 constant elements: \"division by zero\""):
        api.load_simulator(program, target="tiny")


def test_torch_batchnorm_runs_unmodified():
    import torch  # the test extra installs torch and torch-mlir
    from torch_mlir import fx

    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3), torch.nn.BatchNorm2d(8), torch.nn.ReLU()).eval()
    with torch.no_grad():
        model[1].running_var.uniform_(0.5, 2.0)
        model[1].running_mean.uniform_(-1, 1)
    x = torch.randn(1, 3, 10, 10)
    text = str(fx.export_and_import(model, x, output_type="linalg-on-tensors", func_name="main"))
    assert "cf.assert" in text  # the assert is torch-mlir's, unmodified
    (out,), _ = api.run(text, [x.numpy()], target="tiny")
    np.testing.assert_allclose(out, model(x).detach().numpy(), rtol=1e-4, atol=1e-5)
