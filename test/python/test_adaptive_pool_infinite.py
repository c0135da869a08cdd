"""An adaptive average pool whose output does not divide its input, in a training step, with an
infinite input: ATen's window that holds it is infinite and its other windows finite. The
joint step computed the pool as products with averaging matrices, whose zeros times the
infinity made every window of that row NaN (fuzz_pytorch seed 3153, AdaptiveAvgPool1d(2) of a
length-5 row); frontends/backward_rewrites.py now takes each window's mean."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
nn = torch.nn

from ipu_mlir.frontends import torch as ipu_torch  # noqa: E402


class Pooled(nn.Module):
    def __init__(self, pool: nn.Module) -> None:
        super().__init__()
        self.scale, self.pool = nn.Parameter(torch.tensor(1.5)), pool

    def forward(self, x):  # noqa: ANN001, ANN201
        y = self.pool(x * self.scale)
        return y, y.nan_to_num(0.0, 0.0, 0.0).sum()


@pytest.mark.parametrize("pool", [nn.AdaptiveAvgPool1d(2), nn.AdaptiveAvgPool2d((3, 2))])
def test_infinite_input_stays_in_its_windows(pool):
    torch.manual_seed(0)
    shape = (2, 3, 5) if isinstance(pool, nn.AdaptiveAvgPool1d) else (2, 3, 4, 5)
    x = torch.randn(shape)
    x[(0,) * (len(shape) - 1) + (4,)] = float("inf")
    model = Pooled(pool)
    expected = model(x)[0].detach()
    trained = ipu_torch.trainingModel(
        model, options=ipu_torch.Options().target("tiny"), optimizer=torch.optim.SGD(model.parameters(), lr=0.0)
    )
    got = trained(x)[0]
    assert expected.isinf().any() and not expected.isnan().any()
    torch.testing.assert_close(got, expected, rtol=1e-5, atol=1e-5)
