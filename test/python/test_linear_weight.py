"""A linear layer whose weight fits the target only once (VGG-16's 25088x4096 classifier on
gc200, here 512 -> 256 on tiny: 512 KiB of weight, 16 tiles x 64 KiB). torch-mlir permutes the
(out, in) weight before the matmul; that transpose of a constant is folded at compile time, so the
program holds the weight once. Run as a transpose, each tile held a piece of the weight and of its
transpose and `ipu-plan` refused it: "does not fit in 39321 bytes per tile however it is cut"."""

from __future__ import annotations

import numpy as np
import torch  # torch and torch-mlir are test dependencies (pyproject.toml): no skip without them

from ipu_mlir.frontends import torch as torch_frontend


def test_linear_weight_held_once_fits_tiny() -> None:
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(512, 256), torch.nn.ReLU()).eval()
    x = torch.randn(1, 512)
    compiled = torch_frontend.compile(model, x, target="tiny")
    out = compiled(x)
    np.testing.assert_allclose(out.numpy(), torch_frontend.run_eager(model, x).numpy(), rtol=1e-5, atol=1e-5)
    weight_bytes = (512 * 256 + 256) * 4
    assert compiled.profile.load_bytes == weight_bytes  # the weight and the bias, no transposed copy
