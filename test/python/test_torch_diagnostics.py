"""A diagnostic about a PyTorch model names the layer (`layers.0.linear1`) and, where the model
has code of its own, its line; never a line of torch's own source (docs/ipu-run.md)."""

from __future__ import annotations

import os

import pytest

from ipu_mlir.target.diagnostics import IpuError

torch = pytest.importorskip("torch")
pytest.importorskip("torch_mlir")
ipu_torch = pytest.importorskip("ipu_mlir.frontends.torch")


def test_out_of_memory_names_layers_not_torch_source() -> None:
    torch.manual_seed(0)
    layer = torch.nn.TransformerEncoderLayer(128, 4, 512, dropout=0.0, batch_first=True)
    model = torch.nn.TransformerEncoder(layer, 2, enable_nested_tensor=False).eval()
    with pytest.raises(IpuError) as caught:
        ipu_torch.compile(model, torch.randn(1, 16, 128), target="tiny")
    text = str(caught.value)
    first = text.splitlines()[0]
    assert f"{os.sep}torch{os.sep}" not in text, text  # every frame of a torch-built model is torch's
    assert first.startswith("layers.0.") and ": error: Out of memory on tile" in first, first
    assert "placed by layers.0." in first and "activations and inputs live at superstep" in first, first


class _Own(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = torch.nn.Linear(1024, 512)  # 2 MiB of weights: more than the 16 tiles hold

    def forward(self, x):  # noqa: ANN001, ANN201
        return torch.relu(self.fc(x))  # the line the diagnostic points at


def test_a_models_own_line_is_the_location() -> None:
    with pytest.raises(IpuError) as caught:
        ipu_torch.compile(_Own().eval(), torch.randn(8, 1024), target="tiny")
    first = str(caught.value).splitlines()[0]
    line = next(n for n, text in enumerate(open(__file__), 1) if "the line the diagnostic points at" in text)
    assert first.startswith(f"{__file__}:{line}:0: error: "), first
    assert "placed by fc (aten." in first, first


class _Branchy(torch.nn.Module):
    def forward(self, x):  # noqa: ANN001, ANN201
        return x * 2 if x.sum() > 0 else x  # data-dependent control flow: torch.export refuses it


class _Inverse(torch.nn.Module):
    def forward(self, x):  # noqa: ANN001, ANN201
        return torch.linalg.inv(x)  # its singular-matrix check runs as a side effect


class _NonZero(torch.nn.Module):
    def forward(self, x):  # noqa: ANN001, ANN201
        return torch.nonzero(x)  # a result whose shape depends on the data


def test_an_export_failure_is_one_line() -> None:
    with pytest.raises(IpuError) as caught:
        ipu_torch.compile(_Branchy(), torch.randn(4, 4))
    text = str(caught.value)
    assert text.startswith("error: cannot export _Branchy with torch.export and torch-mlir: "), text
    assert "\n" not in text, text


def test_a_side_effect_is_refused_naming_the_op_and_line() -> None:
    """torch.export wraps `torch.linalg.inv`'s error check in `with_effects`, which torch-mlir's
    importer does not import: the refusal names the ATen op and the model's line, not the HOP."""
    with pytest.raises(IpuError) as caught:
        ipu_torch.compile(_Inverse(), torch.randn(4, 4))
    text = str(caught.value)
    line = next(n for n, source in enumerate(open(__file__), 1) if "its singular-matrix check runs" in source)
    assert text == (
        f"{__file__}:{line}:0: error: aten._linalg_check_errors runs for its side effect (torch.export wraps it "
        "in with_effects), which torch-mlir's importer does not import"
    ), text


def test_a_data_dependent_shape_is_refused_naming_the_op() -> None:
    """`torch.nonzero` crashed ipu-fold-constants (a body yielding a captured value) with a
    KeyError; it is refused for its dynamic shapes, naming aten.nonzero."""
    with pytest.raises(IpuError) as caught:
        ipu_torch.compile(_NonZero(), torch.randn(4, 4))
    text = str(caught.value)
    assert "dynamic shapes" in text and "from PyTorch: aten.nonzero" in text, text


def test_ctrl_c_inside_torch_export_stays_an_interrupt() -> None:
    """A KeyboardInterrupt that torch's clean-up turns into another exception while unwinding
    (seen: "AssertionError: Trying to pop empty mode stack") ends the export as the interrupt,
    so the tools say "interrupted" with status 130, not "cannot export"."""

    class Interrupted(torch.nn.Module):
        def forward(self, x):
            try:
                raise KeyboardInterrupt
            finally:
                raise AssertionError("Trying to pop empty mode stack")  # noqa: B012 (torch's clean-up, as seen)

    with pytest.raises(KeyboardInterrupt):
        ipu_torch.export(Interrupted(), torch.ones(2))
