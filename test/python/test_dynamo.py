"""`torch.compile(model, backend="ipu")` (frontends/dynamo.py): found through the entry point,
each graph dynamo captures run on the simulator and compared with eager PyTorch."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("torch_mlir.fx")  # before any ExecutionEngine run: the other order aborts (test_strided_slices)

from ipu_mlir.frontends import dynamo  # noqa: E402
from ipu_mlir.target.diagnostics import IpuError  # noqa: E402

OPTIONS = {"target": "tiny"}


@pytest.fixture(autouse=True)
def fresh_dynamo():
    torch._dynamo.reset()  # compiled frames of an earlier test would be reused
    torch.manual_seed(0)
    yield
    torch._dynamo.reset()


class MLP(torch.nn.Module):
    def __init__(self, width: int = 64) -> None:
        super().__init__()
        self.layers = torch.nn.Sequential(torch.nn.Linear(width, 32), torch.nn.ReLU(), torch.nn.Linear(32, 10))

    def forward(self, x):
        return self.layers(x)


class CNN(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.bn = torch.nn.BatchNorm2d(8)
        self.fc = torch.nn.Linear(8 * 4 * 4, 5)

    def forward(self, x):
        y = torch.nn.functional.max_pool2d(torch.relu(self.bn(self.conv(x))), 2)
        return self.fc(y.flatten(1))


class Breaking(torch.nn.Module):
    """Two graphs: dynamo breaks at the branch on a tensor's value."""

    def __init__(self) -> None:
        super().__init__()
        self.first, self.second = torch.nn.Linear(16, 16), torch.nn.Linear(16, 4)

    def forward(self, x):
        y = torch.tanh(self.first(x))
        if y.sum() > 0:  # data-dependent Python: a graph break
            y = y * 2
        return self.second(y)


def _close(model, compiled, x) -> None:
    with torch.no_grad():
        expected, got = model(x), compiled(x)
    assert got.shape == expected.shape
    torch.testing.assert_close(got, expected, rtol=1e-4, atol=1e-5)


def test_the_backend_is_found_by_name() -> None:
    from torch._dynamo.backends.registry import lookup_backend

    assert lookup_backend("ipu") is dynamo.ipu_backend


def test_mlp_matches_eager(tmp_path: Path) -> None:
    model = MLP().eval()
    compiled = torch.compile(model, backend="ipu", options={**OPTIONS, "profile_dir": str(tmp_path)})
    _close(model, compiled, torch.randn(4, 64))
    (profile,) = tmp_path.glob("*.json")
    layers = {entry["layer"] for entry in json.loads(profile.read_text())["program"]["compute_sets"].values()}
    assert {"layers.0", "layers.2"} <= layers, layers  # dynamo's "L['self'].layers._modules['0']" cleaned


def test_cnn_matches_eager(tmp_path: Path) -> None:
    model = CNN().eval()
    with torch.no_grad():
        model.bn.running_mean.uniform_(-1, 1)
        model.bn.running_var.uniform_(0.5, 2)
    compiled = torch.compile(model, backend="ipu", options={**OPTIONS, "profile_dir": str(tmp_path)})
    x = torch.randn(2, 3, 8, 8)
    _close(model, compiled, x)
    (profile,) = tmp_path.glob("*.json")
    assert (
        json.loads(profile.read_text())["summary"]["host_bytes"] == x.numel() * 4 + 2 * 5 * 4
    )  # the input and output only: weights and running statistics are constants


def test_graph_break_compiles_each_graph(tmp_path: Path) -> None:
    model = Breaking().eval()
    compiled = torch.compile(model, backend="ipu", options={**OPTIONS, "profile_dir": str(tmp_path)})
    for sign in (1, -1):  # both sides of the branch
        with torch.no_grad():
            model.first.bias.fill_(5.0 * sign)
        _close(model, compiled, torch.randn(3, 16))
    assert len(list(tmp_path.glob("*.json"))) >= 2  # one program per graph


def test_new_shape_recompiles() -> None:
    model = MLP().eval()
    compiled = torch.compile(model, backend="ipu", options=OPTIONS)
    for batch in (4, 8, 4):  # 8 was `SimulationError: expected 4x64 float32, got 8x64`
        _close(model, compiled, torch.randn(batch, 64))


def test_dynamic_shapes_are_compiled_concrete() -> None:
    """dynamic=True hands over symbolic sizes from the start; each call still compiles for its own."""
    model = MLP().eval()
    compiled = torch.compile(model, backend="ipu", options=OPTIONS, dynamic=True)
    for batch in (3, 5):
        _close(model, compiled, torch.randn(batch, 64))


def test_integer_arguments_are_fixed_per_value() -> None:
    def scale(x, factor):
        return torch.relu(x) * factor

    compiled = torch.compile(scale, backend="ipu", options=OPTIONS)
    x = torch.randn(2, 8)
    for factor in (3, 4, 5):  # from the second, dynamo passes the factor as a symbolic integer
        torch.testing.assert_close(compiled(x, factor), scale(x, factor))


def test_changed_weights_recompile() -> None:
    model = MLP().eval()
    compiled = torch.compile(model, backend="ipu", options=OPTIONS)
    x = torch.randn(2, 64)
    _close(model, compiled, x)
    with torch.no_grad():
        model.layers[2].weight.mul_(-3)
    _close(model, compiled, x)


def test_unsupported_op_is_one_line_naming_it() -> None:
    class Median(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.fc = torch.nn.Linear(8, 8)

        def forward(self, x):
            return self.fc(x).median(1).values

    compiled = torch.compile(Median().eval(), backend="ipu", options=OPTIONS)
    with pytest.raises(IpuError) as raised, torch.no_grad():
        compiled(torch.randn(4, 8))
    message = str(raised.value)
    assert "aten.median" in message and "\n" not in message, message


def test_bad_options_are_refused_by_name() -> None:
    with pytest.raises(IpuError, match="unknown ipu backend option 'tiles'"):
        dynamo.backend_options({"tiles": 4})
    with pytest.raises(IpuError, match="unknown target 'gc201'"):
        dynamo.backend_options({"target": "gc201"})
