"""PyTorch's data-dependent control flow, `torch.cond` and `while_loop`, compiled once and run
on inputs that take each way, against eager."""

from __future__ import annotations

import pytest

from ipu_mlir.target.diagnostics import IpuError

torch = pytest.importorskip("torch")
nn = torch.nn
ipu_torch = pytest.importorskip("ipu_mlir.frontends.torch")

TARGET = "tiny"


class Gate(nn.Module):
    """Branches with parameters of their own, two results, and a cond nested in a branch."""

    def __init__(self) -> None:
        super().__init__()
        self.large, self.small = nn.Linear(4, 4), nn.Linear(4, 4)

    def forward(self, x):  # noqa: ANN001, ANN201
        def large(x):  # noqa: ANN001, ANN202
            return self.large(x).relu(), x.sum()

        def small(x):  # noqa: ANN001, ANN202
            return self.small(x) * 2, x.mean()

        y, t = torch.cond(x.abs().mean() > 0.8, large, small, (x,))
        flip = lambda y: torch.cond(y.sum() > 0, lambda y: y * 3, lambda y: -y, (y,))  # noqa: E731
        return torch.cond(t > 0, lambda y: y + 1, flip, (y,)), t


def test_torch_cond_takes_the_branch_the_data_decides() -> None:
    """torch-mlir's importer refused `cond` ("Higher-order operation 'cond' not implemented")."""
    torch.manual_seed(0)
    model, x = Gate().eval(), torch.randn(3, 4)
    compiled = ipu_torch.compile(model, x, target=TARGET, use_cache=False)
    paths = set()
    for scale in (1.0, 0.1, -3.0, 5.0, -0.01):
        value = x * scale
        got, want = compiled(value), model(value)
        torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-6)
        large = bool(value.abs().mean() > 0.8)
        paths.add((large, bool(want[1] > 0)))
    assert len(paths) == 4  # every way through the two conds was run


class Halving(nn.Module):
    def forward(self, x):  # noqa: ANN001, ANN201
        from torch._higher_order_ops.while_loop import while_loop

        count, y = while_loop(lambda i, y: y.abs().amax() > 1, lambda i, y: (i + 1, y / 2), (torch.zeros((), dtype=torch.int64), x))
        return count, y


def test_while_loop_runs_as_many_times_as_the_data_needs() -> None:
    x = torch.tensor([3.0, -0.5])
    compiled = ipu_torch.compile(Halving(), x, target=TARGET, use_cache=False)
    for value in (x, x * 40, x / 10):
        got, want = compiled(value), Halving()(value)
        assert int(got[0]) == int(want[0])
        torch.testing.assert_close(got[1], want[1])


class Branchy(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x, target):  # noqa: ANN001, ANN201
        y = torch.cond(x.mean() > 0, lambda x: self.fc(x), lambda x: -x, (x,))
        return nn.functional.mse_loss(y, target)


def test_torch_cond_in_a_training_step_is_refused_in_one_line() -> None:
    model = Branchy()
    trained = ipu_torch.trainingModel(model, ipu_torch.Options().target(TARGET), torch.optim.SGD(model.parameters(), lr=0.1))
    with pytest.raises(IpuError) as caught:
        trained(torch.randn(2, 4), torch.randn(2, 4))
    text = str(caught.value)
    line = Branchy.forward.__code__.co_firstlineno + 1
    assert text.startswith(f"error: cannot trace the training step of Branchy at {__file__}:{line} (y = torch.cond(")
    assert "\n" not in text, text
