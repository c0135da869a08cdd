"""What `compile` and `inferenceModel` give back is what the forward returns: its structure (a
dict, a list, nesting), its unsigned integers, and nothing the export added to it."""

from __future__ import annotations

import pytest

from ipu_mlir.target.diagnostics import IpuError

torch = pytest.importorskip("torch")
nn = torch.nn
ipu_torch = pytest.importorskip("ipu_mlir.frontends.torch")

TARGET = "tiny"


class Nested(nn.Module):
    def forward(self, x):  # noqa: ANN001, ANN201
        return {"sum": x + 1, "parts": [x * 2, (x - 1, x.amax())]}


def test_a_dict_and_a_list_come_back_as_the_forward_returns_them() -> None:
    x = torch.randn(2, 3)
    got = ipu_torch.compile(Nested(), x, target=TARGET, use_cache=False)(x)
    want = Nested()(x)
    assert isinstance(got, dict) and list(got) == ["sum", "parts"]
    assert isinstance(got["parts"], list) and isinstance(got["parts"][1], tuple)
    torch.testing.assert_close(got, want)


def test_inference_model_concatenates_each_leaf_over_device_iterations() -> None:
    options = ipu_torch.Options().deviceIterations(2).target(TARGET)
    x = torch.randn(4, 3)
    got = ipu_torch.inferenceModel(Nested(), options)(x)
    assert isinstance(got, dict)
    torch.testing.assert_close(got["sum"], x + 1)
    torch.testing.assert_close(got["parts"][1][1], torch.stack([x[:2].amax(), x[2:].amax()]))


class OneTuple(nn.Module):
    def forward(self, x):  # noqa: ANN001, ANN201
        return (x * 2,)


def test_a_tuple_of_one_tensor_comes_back_a_tuple() -> None:
    """fuzz_pytorch seed 2264: it came back as the tensor, so `model(x)[0]` was its first row."""
    x = torch.randn(3, 2)
    got = ipu_torch.compile(OneTuple(), x, target=TARGET, use_cache=False)(x)
    assert isinstance(got, tuple) and len(got) == 1
    torch.testing.assert_close(got[0], x * 2)


class Pixels(nn.Module):
    def forward(self, image):  # noqa: ANN001, ANN201
        return image.float() / 255, image + 100, (image.float() * 1.5).to(torch.uint8)


def test_unsigned_bytes_in_and_out() -> None:
    """torch-mlir's integers are signless: a uint8 input was refused ("expected int8"), and a
    uint8 output came back as int8 (200 as -56)."""
    image = torch.tensor([[0, 100, 200], [255, 128, 127]], dtype=torch.uint8)
    compiled = ipu_torch.compile(Pixels(), image, target=TARGET, use_cache=False)
    for got, want in zip(compiled(image), Pixels()(image)):
        assert got.dtype == want.dtype
        assert torch.equal(got, want)
    assert compiled(image.numpy())[1].dtype.name == "uint8"


class Counting(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.register_buffer("calls", torch.zeros(()))

    def forward(self, x):  # noqa: ANN001, ANN201
        self.calls += 1
        return x * self.calls


class InPlace(nn.Module):
    def forward(self, x):  # noqa: ANN001, ANN201
        x.add_(1)
        return x * 2


@pytest.mark.parametrize(
    "model, message",
    [
        (nn.BatchNorm1d(3).train(), "BatchNorm1d's forward changes its buffers (num_batches_tracked, running_mean, running_var)"),
        (Counting(), "Counting's forward changes its buffers (calls)"),
        (InPlace(), "InPlace's forward changes its input x in place"),
    ],
)
def test_a_forward_that_changes_state_is_refused(model, message: str) -> None:  # noqa: ANN001
    """BatchNorm in train mode came back as (running_mean, running_var, num_batches_tracked,
    output); a counting buffer was frozen at its first value (x * 1 on every call)."""
    with pytest.raises(IpuError) as caught:
        ipu_torch.compile(model, torch.randn(4, 3), target=TARGET, use_cache=False)
    assert message in str(caught.value) and "\n" not in str(caught.value), str(caught.value)


class Constant(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.randn(3))

    def forward(self):  # noqa: ANN201
        return self.weight * 2


def test_a_forward_without_inputs_returns_a_tensor() -> None:
    model = Constant()
    got = ipu_torch.compile(model, target=TARGET, use_cache=False)()
    assert isinstance(got, torch.Tensor)
    torch.testing.assert_close(got, model().detach())
