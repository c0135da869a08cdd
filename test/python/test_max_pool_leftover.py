"""MaxPool2d over an input whose last rows or columns no window reaches (floor mode), with its
indices (as training keeps them): fuzz_pytorch seed 2301 (3 columns, kernel 2) was refused with
an invalid linalg.generic, and 5 rows failed to trace (a view of the input gradient)."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
nn = torch.nn
F = torch.nn.functional

from test_avg_pool_training import assert_sgd_steps_match_pytorch  # noqa: E402

from ipu_mlir.frontends import torch as ipu_torch  # noqa: E402


@pytest.mark.parametrize("shape, kernel, stride, padding", [((4, 3), 2, 2, 0), ((5, 3), 2, 2, 0), ((8, 7), 3, 3, 0), ((7, 6), 3, 2, 1)])
def test_pool_with_indices_matches_pytorch(shape, kernel, stride, padding):
    class Pool(nn.Module):
        def forward(self, x):  # noqa: ANN001, ANN202
            return F.max_pool2d(x, kernel, stride, padding, return_indices=True)

    x = torch.randn(2, 3, *shape, generator=torch.Generator().manual_seed(0))
    got, want = ipu_torch.compile(Pool(), x, target="tiny", use_cache=False)(x), Pool()(x)
    assert torch.equal(got[0], want[0]) and torch.equal(got[1], want[1])


class Pooled(nn.Module):
    def __init__(self, width: int) -> None:
        super().__init__()
        self.linear, self.after = nn.Linear(width, width), nn.Linear(width // 2, 2)

    def forward(self, x):  # noqa: ANN001, ANN201
        return self.after(F.max_pool2d(self.linear(x), 2)).square().mean()


@pytest.mark.parametrize("shape", [(4, 3), (5, 3), (5, 4)])
def test_training_through_the_pool_matches_pytorch(shape):
    torch.manual_seed(0)
    assert_sgd_steps_match_pytorch(Pooled(shape[1]), (2, 3, *shape))
