"""PyTorch ops whose torch-mlir export gathers at computed coordinates (interpolate, adaptive
pooling with non-dividing sizes, GroupNorm) or reduces to a (value, index) pair (argmax,
max along a dim), and the causal mask of scaled_dot_product_attention: exported unmodified,
compiled, simulated, and checked against PyTorch and against upstream MLIR's ExecutionEngine
on the same export."""

from __future__ import annotations

import numpy as np
import pytest
import torch  # the test extra installs torch and torch-mlir
import torch.nn.functional as F

from ipu_mlir.frontends import api
from ipu_mlir.frontends import torch as ipu_torch


class Interpolate(torch.nn.Module):
    def __init__(self, **options):
        super().__init__()
        self.options = options

    def forward(self, x):
        return F.interpolate(x, **self.options)


class Argmax(torch.nn.Module):
    def forward(self, x):
        return torch.argmax(x, dim=1)


class MaxDim(torch.nn.Module):
    def forward(self, x):
        return torch.max(x, dim=-1)


class Causal(torch.nn.Module):
    def forward(self, q, k, v):
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)


def _ties(shape):
    """Integers as floats: many equal maxima, so the first index on ties is checked."""
    return torch.randint(0, 4, shape).float()


CASES = {
    "nearest-x2": (Interpolate(scale_factor=2, mode="nearest"), [(1, 3, 5, 6)]),
    "nearest-to-7x5": (Interpolate(size=(7, 5), mode="nearest"), [(2, 2, 4, 3)]),
    "bilinear-x2": (Interpolate(scale_factor=2, mode="bilinear", align_corners=False), [(1, 3, 5, 6)]),
    "bilinear-x1.5": (Interpolate(scale_factor=1.5, mode="bilinear", align_corners=False), [(1, 2, 4, 6)]),
    "bilinear-corners-x2": (Interpolate(scale_factor=2, mode="bilinear", align_corners=True), [(1, 3, 5, 6)]),
    "bilinear-corners-to-7x9": (Interpolate(size=(7, 9), mode="bilinear", align_corners=True), [(2, 2, 4, 5)]),
    "adaptive-7-to-3": (torch.nn.AdaptiveAvgPool2d(3), [(1, 4, 7, 7)]),
    "adaptive-5-to-7": (torch.nn.AdaptiveAvgPool2d(7), [(2, 3, 5, 5)]),
    "adaptive-10x9-to-4x3": (torch.nn.AdaptiveAvgPool2d((4, 3)), [(1, 2, 10, 9)]),
    "groupnorm-2-of-4": (torch.nn.GroupNorm(2, 4), [(1, 4, 3, 3)]),
    "groupnorm-4-of-8": (torch.nn.GroupNorm(4, 8), [(2, 8, 5, 6)]),
    "argmax": (Argmax(), [(3, 17)]),
    "argmax-ties": (Argmax(), [(4, 40, 3)]),
    "max-dim": (MaxDim(), [(5, 33)]),
    "max-dim-ties": (MaxDim(), [(2, 6, 50)]),
    "causal-attention": (Causal(), [(1, 2, 8, 4)] * 3),
}


def _inputs(name, shapes):
    torch.manual_seed(len(name))
    if name.endswith("ties"):
        return [_ties(s) for s in shapes]
    return [torch.randn(s) for s in shapes]


def _as_list(outputs):
    return [o.detach().numpy() for o in (outputs if isinstance(outputs, tuple) else (outputs,))]


def _check(actual, expected):
    for a, e in zip(actual, expected, strict=True):
        assert a.shape == e.shape and a.dtype == e.dtype
        if np.issubdtype(e.dtype, np.integer):
            np.testing.assert_array_equal(a, e)
        else:
            np.testing.assert_allclose(a, e, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("target", ["tiny", "gc200"])
@pytest.mark.parametrize("name", list(CASES))
def test_matches_pytorch_and_the_reference(name, target):
    module, shapes = CASES[name]
    module.eval()
    inputs = _inputs(name, shapes)
    compiled = ipu_torch.compile(module, *inputs, target=target)
    simulated = _as_list(compiled(*inputs))
    _check(simulated, _as_list(ipu_torch.run_eager(module, *inputs)))
    if target == "tiny":  # the reference does not depend on the target
        arrays = [x.numpy() for x in inputs]
        _check(simulated, api.reference_outputs(compiled.imported, arrays, "main"))
