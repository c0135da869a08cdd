"""What a forward takes, as PopTorch takes it (frontends/inputs.py): Python values compiled in as
constants, keyword arguments, tensors in tuples and dicts, float64 data cast to float32 by
`inferenceModel` and `trainingModel`; a later call that does not match is one line naming the
argument."""

from __future__ import annotations

import copy

import pytest

from ipu_mlir.target.diagnostics import IpuError

torch = pytest.importorskip("torch")
nn = torch.nn
ipu_torch = pytest.importorskip("ipu_mlir.frontends.torch")

TARGET = "tiny"


class Scaled(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(4, 3)

    def forward(self, x, alpha, shift=0, extra=None):  # noqa: ANN001, ANN201
        y = self.fc(x) * alpha + shift
        return y if extra is None else y + extra["bias"] * extra["pair"][1]


def test_python_values_are_compiled_in_and_a_new_value_is_refused_by_name() -> None:
    torch.manual_seed(0)
    model, x = Scaled().eval(), torch.randn(2, 4)
    compiled = ipu_torch.compile(model, x, 0.5, example_kwargs={"shift": 3}, target=TARGET, use_cache=False)
    torch.testing.assert_close(compiled(x, 0.5, shift=3), model(x, 0.5, shift=3))
    with pytest.raises(IpuError, match=r"^error: argument alpha: compiled as the constant 0.5, got float 2.0 "):
        compiled(x, 2.0, shift=3)
    with pytest.raises(IpuError, match=r"^error: argument shift: compiled as the constant 3, got float 3.0 "):
        compiled(x, 0.5, shift=3.0)
    with pytest.raises(IpuError, match=r"^error: argument x: compiled for 2x4 float32, got 3x4 float32;"):
        compiled(torch.randn(3, 4), 0.5, shift=3)


def test_keyword_arguments_tuples_and_dicts_of_tensors() -> None:
    torch.manual_seed(0)
    model, x = Scaled().eval(), torch.randn(2, 4)
    extra = {"bias": torch.randn(3), "pair": (1.5, torch.randn(2, 3))}
    compiled = ipu_torch.compile(model, x, 0.5, example_kwargs={"extra": extra}, target=TARGET, use_cache=False)
    other = {"bias": torch.randn(3), "pair": (1.5, torch.randn(2, 3))}
    torch.testing.assert_close(compiled(x, alpha=0.5, extra=other), model(x, 0.5, extra=other))
    with pytest.raises(IpuError, match=r"^error: argument extra\['pair'\]\[0\]: compiled as the constant 1.5, got float 2.5 "):
        compiled(x, 0.5, extra={**other, "pair": (2.5, other["pair"][1])})


def test_inference_model_takes_keywords_python_values_and_float64_data() -> None:
    torch.manual_seed(0)
    model = Scaled().eval()
    options = ipu_torch.Options().deviceIterations(2).target(TARGET)
    x, extra = torch.randn(4, 4, dtype=torch.float64), {"bias": torch.randn(4, 3), "pair": (2.0, torch.randn(4, 3))}
    got = ipu_torch.inferenceModel(model, options)(x, 0.5, extra=extra)
    assert got.dtype == torch.float32  # PopTorch's: the IPU has no 64-bit floats
    torch.testing.assert_close(got, model(x.float(), 0.5, extra=extra))


def test_training_model_takes_float64_data_as_float32() -> None:
    class Regression(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.fc = nn.Linear(8, 4)

        def forward(self, x, target):  # noqa: ANN001, ANN201
            y = self.fc(x)
            return y, nn.functional.mse_loss(y, target)

    torch.manual_seed(0)
    net = Regression()
    reference = copy.deepcopy(net)
    model = ipu_torch.trainingModel(net, ipu_torch.Options().target(TARGET), torch.optim.SGD(net.parameters(), lr=0.1))
    x, target = torch.randn(4, 8, dtype=torch.float64), torch.randn(4, 4, dtype=torch.float64)  # numpy's data
    torch_optimizer = torch.optim.SGD(reference.parameters(), lr=0.1)
    for _ in range(3):
        model(x, target)
        torch_optimizer.zero_grad()
        reference(x.float(), target.float())[1].backward()
        torch_optimizer.step()
    model.copyWeightsToHost()
    for ours, theirs in zip(net.parameters(), reference.parameters()):
        torch.testing.assert_close(ours, theirs, rtol=1e-5, atol=1e-6)


class Branch(nn.Module):
    def forward(self, x):  # noqa: ANN001, ANN201
        if x.sum() > 0:  # data-dependent: torch.export refuses it
            return x + 1
        return x - 1


def test_an_export_refusal_is_one_line_naming_the_model_line(capfd) -> None:  # noqa: ANN001
    """torch.export logs and prints its traced graph before it raises: nothing of it is shown."""
    with pytest.raises(IpuError) as refusal:
        ipu_torch.compile(Branch(), torch.randn(3, 4), target=TARGET, use_cache=False)
    assert f"test_torch_inputs.py:{Branch.forward.__code__.co_firstlineno + 1}: if x.sum() > 0:" in str(refusal.value)
    assert "\n" not in str(refusal.value)
    assert "def forward" not in capfd.readouterr().err


class ComplexMagnitude(nn.Module):
    def forward(self, x):  # noqa: ANN001, ANN201
        spectrum = torch.fft.rfft(x)
        return spectrum.abs()  # torch-mlir refuses math.absf of a complex value


def test_a_torch_mlir_refusal_names_the_model_line() -> None:
    """torch-mlir's own refusal (here of a complex `abs`) names the ATen op and the model's line."""
    with pytest.raises(IpuError) as refusal:
        ipu_torch.compile(ComplexMagnitude(), torch.randn(8), target=TARGET, use_cache=False)
    line = ComplexMagnitude.forward.__code__.co_firstlineno + 2
    assert f"torch-mlir cannot lower aten.abs at {__file__}:{line} to linalg: " in str(refusal.value)
    assert "\n" not in str(refusal.value)
