"""`linalg.index` as torch-mlir emits it (arange, the causal mask of scaled_dot_product_attention)
runs as iota inputs, sliced across tiles like any operand; checked against PyTorch."""

from __future__ import annotations

import numpy as np
import pytest
import torch  # the test extra installs torch and torch-mlir
from torch_mlir import fx

from ipu_mlir.frontends import api


class CausalAttention(torch.nn.Module):
    def forward(self, q, k, v):
        positions = torch.arange(q.shape[2]).float()
        return torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True) + positions[:, None]


@pytest.mark.parametrize("target", ["tiny", "gc200"])
def test_causal_attention_with_arange_matches_pytorch(target):
    torch.manual_seed(0)
    q, k, v = (torch.randn(1, 2, 16, 8) for _ in range(3))
    text = str(fx.export_and_import(CausalAttention().eval(), q, k, v, output_type="linalg-on-tensors", func_name="main"))
    assert "linalg.index" in text
    (out,), _ = api.run(text, [q.numpy(), k.numpy(), v.numpy()], target=target)
    np.testing.assert_allclose(out, CausalAttention()(q, k, v).numpy(), rtol=1e-5, atol=1e-5)
