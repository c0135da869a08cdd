"""cummax / cummin through `compile` (aten_rewrites.py's scan): torch-mlir refused them
(fuzz_pytorch seeds 2328, 2481). Values and indices exactly as ATen's, with ties (the later
index), NaN (it stays, later NaNs take its place) and infinities."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from ipu_mlir.frontends import torch as ipu_torch  # noqa: E402

NAN, INF = float("nan"), float("inf")


class Running(torch.nn.Module):
    def __init__(self, op, dim: int) -> None:  # noqa: ANN001
        super().__init__()
        self.op, self.dim = op, dim

    def forward(self, x):  # noqa: ANN001, ANN201
        values, indices = self.op(x, self.dim)
        return values, indices


@pytest.mark.parametrize("op", [torch.cummax, torch.cummin])
@pytest.mark.parametrize("dim", [-1, 0])
def test_running_extreme_matches_aten(op, dim):
    x = torch.tensor([[1.0, 3.0, 3.0, -INF, 2.0, NAN, 5.0], [0.0, -1.0, -1.0, NAN, NAN, INF, 4.0], [2.0, 2.0, 7.0, 1.0, -2.0, 0.5, 0.5]])
    got, want = ipu_torch.compile(Running(op, dim), x, target="tiny", use_cache=False)(x), Running(op, dim)(x)
    torch.testing.assert_close(got[0], want[0], equal_nan=True, rtol=0, atol=0)
    assert torch.equal(got[1], want[1])
