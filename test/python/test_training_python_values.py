"""trainingModel takes Python values as PopTorch does (frontends/inputs.py, frontends/joint.py
`build_step`'s `bind`): ints, floats, bools and None, positional or keyword, compiled into the
training step as constants; a later call with another value is one line naming the argument.
Checked against PyTorch's own loop over 3 steps."""

from __future__ import annotations

import copy

import pytest

from ipu_mlir.target.diagnostics import IpuError

torch = pytest.importorskip("torch")
nn = torch.nn
ipu_torch = pytest.importorskip("ipu_mlir.frontends.torch")

TARGET = "tiny"


class Flagged(nn.Module):
    """A value used arithmetically (`scale`, `power`) and one as a flag (`relu`, `bias`)."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(4, 3)

    def forward(self, x, y, scale=0.5, relu=False, power=1, bias=None):  # noqa: ANN001, ANN201, PLR0913
        out = self.fc(x) * scale
        if relu:
            out = torch.relu(out)
        if bias is not None:
            out = out + bias
        return ((out - y) ** 2).mean() * power


def _trained_like_pytorch(make_optimizer, args: tuple, kwargs: dict) -> None:  # noqa: ANN001
    torch.manual_seed(0)
    net = Flagged()
    reference = copy.deepcopy(net)
    x, y = torch.randn(4, 4), torch.randn(4, 3)
    model = ipu_torch.trainingModel(net, ipu_torch.Options().target(TARGET), make_optimizer(net.parameters()))
    torch_optimizer = make_optimizer(reference.parameters())
    for _ in range(3):
        loss = model(x, y, *args, **kwargs)
        torch_optimizer.zero_grad()
        expected = reference(x, y, *args, **kwargs)
        expected.backward()
        torch_optimizer.step()
        torch.testing.assert_close(loss, expected.detach(), rtol=1e-5, atol=1e-6)
    model.copyWeightsToHost()
    for ours, theirs in zip(net.parameters(), reference.parameters()):
        torch.testing.assert_close(ours, theirs, rtol=1e-5, atol=1e-6)


def test_sgd_with_positional_python_values() -> None:
    _trained_like_pytorch(lambda params: torch.optim.SGD(params, lr=0.1, momentum=0.9), (2.5, True, 3), {})


def test_adam_with_keyword_python_values_and_none() -> None:
    _trained_like_pytorch(lambda params: torch.optim.Adam(params, lr=0.01), (), {"scale": 0.25, "relu": False, "bias": None})


def test_adam_with_a_tensor_keyword_beside_python_values() -> None:
    _trained_like_pytorch(lambda params: torch.optim.Adam(params, lr=0.01), (1.5,), {"power": 2, "bias": torch.ones(3)})


def test_a_changed_python_value_is_refused_by_name() -> None:
    net = Flagged()
    model = ipu_torch.trainingModel(net, ipu_torch.Options().target(TARGET), torch.optim.SGD(net.parameters(), lr=0.1))
    x, y = torch.randn(4, 4), torch.randn(4, 3)
    model(x, y, 0.5, relu=True)
    with pytest.raises(IpuError, match=r"^error: argument scale: compiled as the constant 0.5, got float 2.0 "):
        model(x, y, 2.0, relu=True)
    with pytest.raises(IpuError, match=r"^error: argument relu: compiled as the constant True, got int 1 "):
        model(x, y, 0.5, relu=1)
    with pytest.raises(IpuError, match=r"^error: argument power: compiled as the constant 1, got int 3 "):
        model(x, y, 0.5, relu=True, power=3)
    model(x, y, 0.5, relu=True)  # the compiled values still run


def test_a_default_passed_or_left_out_is_the_same_constant() -> None:
    net = Flagged()
    model = ipu_torch.trainingModel(net, ipu_torch.Options().target(TARGET), torch.optim.SGD(net.parameters(), lr=0.1))
    x, y = torch.randn(4, 4), torch.randn(4, 3)
    model(x, y)
    model(x, y, 0.5, power=1, bias=None)  # the defaults' own values: the compiled constants
    with pytest.raises(IpuError, match=r"^error: argument bias: compiled as the constant None, got 3 float32 "):
        model(x, y, bias=torch.ones(3))
