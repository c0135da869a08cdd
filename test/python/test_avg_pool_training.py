"""Training through average pooling (aten_rewrites.py's avg_pool2d_backward): torch-mlir's own
lowering of the gradient failed to legalize (fuzz_pytorch seeds 859 and 2262, AvgPool1d), so
AvgPool1d / AvgPool2d in a training step were refused. Two SGD steps against PyTorch's loop."""

from __future__ import annotations

import copy

import pytest

torch = pytest.importorskip("torch")
nn = torch.nn

from ipu_mlir.frontends import torch as ipu_torch  # noqa: E402

POOLS = {
    "1d-no-pad-count": (lambda: nn.AvgPool1d(3, stride=1, padding=1, count_include_pad=False), (2, 3, 5)),
    "1d-ceil": (lambda: nn.AvgPool1d(2, ceil_mode=True), (2, 3, 5)),
    "2d-stride-2": (lambda: nn.AvgPool2d(3, stride=2, padding=1), (2, 3, 5, 6)),
    "2d-ceil-override": (lambda: nn.AvgPool2d(2, ceil_mode=True, divisor_override=3), (2, 3, 5, 5)),
}


class Pooled(nn.Module):
    def __init__(self, pool: nn.Module, width: int) -> None:
        super().__init__()
        self.linear, self.pool = nn.Linear(width, width), pool

    def forward(self, x):  # noqa: ANN001, ANN201
        return (self.pool(self.linear(x)) * torch.linspace(-1.0, 2.0, 3)[:, None].expand(3, 1).reshape(3, *([1] * (x.dim() - 2)))).sum()


@pytest.mark.parametrize("name", POOLS)
def test_training_through_average_pooling_matches_pytorch(name):
    make, shape = POOLS[name]
    torch.manual_seed(0)
    assert_sgd_steps_match_pytorch(Pooled(make(), shape[-1]), shape)


def assert_sgd_steps_match_pytorch(model: nn.Module, shape: tuple[int, ...]) -> None:
    """Two SGD steps of `model` on `tiny` on random batches of `shape` against PyTorch's."""
    reference = copy.deepcopy(model)
    optimizer, reference_optimizer = torch.optim.SGD(model.parameters(), lr=0.1), torch.optim.SGD(reference.parameters(), lr=0.1)
    trained = ipu_torch.trainingModel(model, options=ipu_torch.Options().target("tiny"), optimizer=optimizer)
    for step in range(2):
        x = torch.randn(*shape, generator=torch.Generator().manual_seed(step))
        trained(x)
        reference_optimizer.zero_grad()
        reference(x).backward()
        reference_optimizer.step()
    trained.copyWeightsToHost()
    for ours, theirs in zip(model.parameters(), reference.parameters()):
        torch.testing.assert_close(ours, theirs, rtol=1e-4, atol=1e-4 * float(theirs.abs().max()))
