"""A trainable parameter the loss does not reach (a head the forward never calls, a parameter
read only through a comparison) has no gradient in PyTorch (`.grad` None), and torch.optim's
SGD, Adam and AdamW leave it as it is: no weight decay, no momentum. The compiled step applied
AdamW's decay to the zero gradient `grad_and_value` gives it (fuzz_pytorch seed 2888: a
`torch.where(self.weight > 0, x, -x)` weight 4e-4 off after four steps). Two calls of two
device iterations against PyTorch's loop."""

from __future__ import annotations

import copy

import pytest

torch = pytest.importorskip("torch")
nn = torch.nn

from ipu_mlir.frontends import torch as ipu_torch  # noqa: E402

OPTIMIZERS = {
    "sgd-decay-momentum": lambda params: torch.optim.SGD(params, lr=0.1, momentum=0.9, weight_decay=0.05),
    "adamw": lambda params: torch.optim.AdamW(params, lr=0.05, weight_decay=0.1),
    "adam-decay": lambda params: torch.optim.Adam(params, lr=0.05, weight_decay=0.1),
}


class WithUnused(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.linear, self.unused_head = nn.Linear(4, 3), nn.Linear(4, 2)
        self.sign = nn.Parameter(torch.tensor([0.5, -0.5, 1.0]))  # read only through a comparison

    def forward(self, x):  # noqa: ANN001, ANN201
        y = self.linear(x)
        y = torch.where(self.sign > 0, y, -y)
        return y, (y * y).mean()


@pytest.mark.parametrize("name", OPTIMIZERS)
def test_parameters_without_gradient_stay_as_pytorchs_do(name):
    torch.manual_seed(0)
    model = WithUnused()
    reference = copy.deepcopy(model)
    make = OPTIMIZERS[name]
    options = ipu_torch.Options().target("tiny").deviceIterations(2)
    trained = ipu_torch.trainingModel(model, options=options, optimizer=make(model.parameters()))
    reference_optimizer = make(reference.parameters())
    for call in range(2):
        x = torch.randn(4, 4, generator=torch.Generator().manual_seed(call))
        trained(x)
        for micro in x.chunk(2):
            reference_optimizer.zero_grad()
            reference(micro)[1].backward()
            reference_optimizer.step()
    trained.copyWeightsToHost()
    assert reference.unused_head.weight.grad is None and reference.sign.grad is None
    for (label, ours), theirs in zip(model.named_parameters(), reference.parameters()):
        torch.testing.assert_close(ours, theirs, rtol=1e-4, atol=1e-4 * float(theirs.abs().max()), msg=label)
