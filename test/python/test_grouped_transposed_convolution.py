"""A transposed convolution with groups (aten_rewrites.py's `_grouped_transposed_convolution`):
torch-mlir's lowering built an invalid `tensor.collapse_shape` and the model was refused
(fuzz_pytorch seeds 2867 and 3007); now one transposed convolution per group, concatenated.
Inference against PyTorch, and two SGD steps against PyTorch's loop."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
nn = torch.nn

from test_avg_pool_training import assert_sgd_steps_match_pytorch  # noqa: E402

from ipu_mlir.frontends import torch as ipu_torch  # noqa: E402

CASES = {
    "2d-stride-3": (lambda: nn.ConvTranspose2d(4, 4, (3, 2), stride=3, dilation=2, groups=4, output_padding=1), (2, 4, 5, 6)),
    "2d-groups-2": (lambda: nn.ConvTranspose2d(4, 6, 3, stride=2, padding=1, groups=2), (1, 4, 4, 5)),
    "1d": (lambda: nn.ConvTranspose1d(6, 3, 2, stride=2, groups=3, bias=False), (2, 6, 5)),
}


@pytest.mark.parametrize("name", CASES)
def test_grouped_transposed_convolution_matches_pytorch(name):
    make, shape = CASES[name]
    torch.manual_seed(0)
    model, x = make().eval(), torch.randn(shape)
    got = ipu_torch.compile(model, x, target="tiny", use_cache=False)(x)
    torch.testing.assert_close(got, model(x), rtol=1e-5, atol=1e-5)


class Summed(nn.Module):
    def __init__(self, body: nn.Module) -> None:
        super().__init__()
        self.body = body

    def forward(self, x):  # noqa: ANN001, ANN201
        y = self.body(x)
        return (y * torch.linspace(-1.0, 1.0, y.shape[-1])).sum()


@pytest.mark.parametrize("name", ["2d-groups-2", "1d"])
def test_training_through_grouped_transposed_convolution_matches_pytorch(name):
    make, shape = CASES[name]
    torch.manual_seed(0)
    assert_sgd_steps_match_pytorch(Summed(make()), shape)
