"""Scaled FP8 convolutions (docs/precision.md, issue 30): a PyTorch CNN quantizing activations
and weights to float8_e4m3fn with power-of-two scales runs its convolutions as FP8 `ipu.conv`s
with QUARTER metadata (lowering/fp8_conv.py), bit for bit the program without that pass, within
f32's tolerance of PyTorch, and faster on the C600."""

from __future__ import annotations

import numpy as np
import pytest
from mlir import ir  # noqa: F401  (upstream MLIR's libraries before torch-mlir's: test_torch_precision)

torch = pytest.importorskip("torch")
pytest.importorskip("torch_mlir.fx")

import torch.nn.functional as F  # noqa: E402
from torch import nn  # noqa: E402

import ipu_mlir.frontends.torch as ipu_torch  # noqa: E402
from ipu_mlir.frontends import api  # noqa: E402
from ipu_mlir.lowering.pass_registry import build_pass_manager  # noqa: E402
from ipu_mlir.lowering.pipelines import default_pipeline  # noqa: E402
from ipu_mlir.runtime import api as runtime_api  # noqa: E402
from ipu_mlir.runtime import oracle  # noqa: E402

F8 = torch.float8_e4m3fn
F8_MAX = float(torch.finfo(F8).max)  # 448


class Pow2FP8Conv(nn.Module):
    """`conv2d(x, W) + b` with x and W in float8_e4m3fn scaled by fixed powers of two (Graphcore's
    static scaling), dequantized to f32 for the convolution as PyTorch writes it."""

    def __init__(self, weight, bias, weight_log2: int, input_log2: int, **conv):
        super().__init__()
        self.weight_log2, self.input_log2, self.conv = weight_log2, input_log2, conv
        self.register_buffer("wq", (weight * 2.0**weight_log2).to(F8))
        self.bias = None if bias is None else nn.Parameter(bias)

    def forward(self, x):
        xq = (x * 2.0**self.input_log2).clamp(-F8_MAX, F8_MAX).to(F8)
        return F.conv2d(xq.float() * 2.0**-self.input_log2, self.wq.float() * 2.0**-self.weight_log2, self.bias, **self.conv)


def fp8_cnn() -> nn.Module:
    """A padded convolution with a bias, a strided grouped one, a 1x1 one: the forms torch-mlir
    exports (a tensor.pad, an expand_shape into conv_2d_ngchw_gfchw, a broadcast bias as outs)."""
    torch.manual_seed(4)
    return nn.Sequential(
        Pow2FP8Conv(torch.randn(16, 3, 3, 3) / 4, torch.randn(16) / 8, 6, 5, padding=1),
        nn.ReLU(),
        Pow2FP8Conv(torch.randn(32, 8, 3, 3) / 8, torch.randn(32) / 8, 7, 4, stride=2, padding=1, groups=2),
        nn.ReLU(),
        Pow2FP8Conv(torch.randn(8, 32, 1, 1) / 8, None, 6, 4),
    ).eval()


def _compiled(imported, target: str, rewrite: bool):
    with imported.context:
        program = api.copy_module(imported)
        pipeline = default_pipeline(target)
        build_pass_manager(pipeline if rewrite else pipeline.replace("ipu-fp8-conv,", ""), imported.context).run(program.operation)
    return program


def _fp8_convs(program) -> list[str]:
    return [line for line in str(program).splitlines() if '"ipu.conv"' in line and "ipu.quarter" in line]


@pytest.mark.parametrize("target", ["c600", "gc200"])
def test_fp8_cnn_runs_as_fp8_convolutions(target):
    """Every convolution becomes an FP8 `ipu.conv` with its scales' sum as log2 scale; the
    outputs are the bits of the same program compiled without ipu-fp8-conv, PyTorch's and the
    reference's at f32's tolerance; on c600 the FP8 program takes fewer cycles."""
    model, x = fp8_cnn(), torch.randn(2, 3, 12, 12, generator=torch.Generator().manual_seed(1))
    imported = ipu_torch.export(model, x)
    runs = {}
    for rewrite in (True, False):
        program = _compiled(imported, target, rewrite)
        simulator = runtime_api.load_simulator(program, target, "main", verified=True)
        (output,) = simulator.run([x.numpy()])
        runs[rewrite] = (program, np.asarray(output), simulator.profile.cycles)
    (program, got, cycles), (plain, wide, wide_cycles) = runs[True], runs[False]
    scales = {int(line.split("log2_scale = ")[1].split(" ")[0]) for line in _fp8_convs(program)}
    assert scales == {-11, -10}, scales  # 6 + 5, 7 + 4, 6 + 4
    assert len(_fp8_convs(program)) == str(program).count('"ipu.conv"'), "a convolution left in f32"
    assert not _fp8_convs(plain)
    np.testing.assert_array_equal(got, wide)
    with torch.no_grad():
        comparison = oracle.compare(got, model(x).numpy())
    assert comparison.ok, comparison.describe()
    (reference,) = api.reference_outputs(imported, [x.numpy()], "main")
    comparison = oracle.compare(got, reference)
    assert comparison.ok, comparison.describe()
    if target == "c600":
        assert cycles < wide_cycles, (cycles, wide_cycles)
