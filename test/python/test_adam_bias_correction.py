"""Adam's bias correction 1 - beta ** step to a few ulps (frontends/optimizers.py): a parameter
whose gradient is exactly 0 moves only by Adam's weight decay, two steps of lr that nearly
cancel, as fuzz_pytorch seed 1948's d_model=1 TransformerEncoderLayer did (a LayerNorm over one
element: its input's gradient is 0)."""

from __future__ import annotations

import copy

import pytest

torch = pytest.importorskip("torch")
nn = torch.nn

from ipu_mlir.frontends import torch as ipu_torch  # noqa: E402


class Normalized(nn.Module):
    """A LayerNorm over one element: its output is its bias, the linear's gradients exactly 0."""

    def __init__(self) -> None:
        super().__init__()
        self.linear, self.norm = nn.Linear(1, 1), nn.LayerNorm(1)

    def forward(self, x):  # noqa: ANN001, ANN201
        return (self.norm(self.linear(x)) * torch.arange(1.0, 3.0)).sum()


def test_a_weight_decayed_parameter_near_zero_matches_pytorch():
    model = Normalized()
    with torch.no_grad():
        model.linear.weight.fill_(0.25)
        model.linear.bias.fill_(-0.1036745)  # seed 1948's: after two steps of 0.05 it is -0.0068
    reference = copy.deepcopy(model)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.05, weight_decay=0.01)  # L2: the gradient is 0.01 x
    reference_optimizer = torch.optim.Adam(reference.parameters(), lr=0.05, weight_decay=0.01)
    trained = ipu_torch.trainingModel(model, options=ipu_torch.Options().target("tiny"), optimizer=optimizer)
    x = torch.tensor([[0.5], [-1.5]])
    for _ in range(2):
        trained(x)
        reference_optimizer.zero_grad()
        reference(x).backward()
        reference_optimizer.step()
    trained.copyWeightsToHost()
    ours, theirs = model.linear.bias.item(), reference.linear.bias.item()
    # PyTorch's f32 loop lands within 1.1e-8 of its f64 one; a bias correction of f32 powers
    # (1 - 0.999 ** 2 with 0.999 rounded: 1.3e-5 off) put ours 7.5e-7 away
    assert abs(ours - theirs) <= 1e-7, (ours, theirs)
