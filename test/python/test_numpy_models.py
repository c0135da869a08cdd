"""bench/numpy_models.py, the numpy baseline of bench/run.py's zoo rows: each zoo model's
numpy forward pass (reduced configuration) against PyTorch eager, its erf against math.erf,
and the refusal of an op it has no numpy function for."""

from __future__ import annotations

import importlib.util
import math
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from torch.utils import _pytree

from ipu_mlir.frontends import zoo

REPO = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("numpy_models", REPO / "bench" / "numpy_models.py")
numpy_models = sys.modules["numpy_models"] = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(numpy_models)


@pytest.mark.parametrize("name", ["alexnet", "resnet18", "resnet50", "mobilenet_v2", "bert_encoder", "gpt2"])
def test_zoo_model_matches_pytorch(name: str) -> None:
    module, inputs = zoo.build(name, **zoo.MODELS[name].reduced)
    with torch.no_grad():
        expected = [t.numpy() for t in _pytree.tree_leaves(module(*inputs)) if isinstance(t, torch.Tensor)]
    got = numpy_models.NumpyModel(module, inputs)(*(t.numpy() for t in inputs))
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        assert g.shape == e.shape and g.dtype == e.dtype
        assert np.abs(g - e).max() <= 2e-6 * np.abs(e).max(), name  # seen: 2.3e-7 (BERT), 1.3e-7 (GPT-2)


def test_grouped_strided_convolution() -> None:
    """Groups between 1 and depthwise, stride 2 and uneven padding of the window: against torch."""
    rng = np.random.default_rng(0)
    x, w, b = (rng.standard_normal(s, dtype=np.float32) for s in ((2, 6, 9, 7), (4, 3, 3, 2), (4,)))
    got = numpy_models.convolution(x, w, b, (2, 1), (1, 0), (1, 1), False, (0, 0), 2)
    expected = torch.nn.functional.conv2d(*map(torch.from_numpy, (x, w, b)), stride=(2, 1), padding=(1, 0), groups=2).numpy()
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)


def test_adaptive_pool_uneven_bins() -> None:
    x = np.random.default_rng(0).standard_normal((1, 2, 7, 5), dtype=np.float32)
    expected = torch.nn.functional.adaptive_avg_pool2d(torch.from_numpy(x), (3, 2)).numpy()
    np.testing.assert_allclose(numpy_models.adaptive_avg_pool2d(x, (3, 2)), expected, rtol=1e-6, atol=1e-6)


def test_erf_to_float32_precision() -> None:
    x = np.linspace(-6, 6, 20001)
    exact = np.array([math.erf(v) for v in x])
    assert np.abs(numpy_models._erf(x) - exact).max() < 2e-7


def test_unsupported_op_is_refused_by_name() -> None:
    class Cumulative(torch.nn.Module):
        def forward(self, x):
            return torch.cumsum(x, 0)

    with pytest.raises(NotImplementedError, match=r"no numpy function for aten\.cumsum\.default .*torch\.cumsum"):
        numpy_models.NumpyModel(Cumulative(), (torch.ones(3),))


@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu(approximate: str) -> None:
    """Both forms on inputs where they differ (the reduced models' GELU inputs are too small to tell)."""
    x = np.linspace(-6, 6, 2001, dtype=np.float32)
    expected = torch.nn.functional.gelu(torch.from_numpy(x), approximate=approximate).numpy()
    np.testing.assert_allclose(numpy_models.gelu(x, approximate), expected, rtol=0, atol=1e-6)
