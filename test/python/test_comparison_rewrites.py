"""A tensor compared with a number (frontends/comparison_rewrites.py), against PyTorch. torch-mlir
folds the comparison of a one-element parameter, and folded a float one with an int wrongly
(`weight > 0` false for any weight: fuzz_pytorch seed 3322's `torch.where(weight > 0, x, -x)`
took -x everywhere), crashed on an int one with a float and sign-extended a bool one; its
lowering compared an f32 tensor with a float in f64, an int32 one with an int in i64 and a bool
one with a negative int as unsigned."""

from __future__ import annotations

import random

import pytest

torch = pytest.importorskip("torch")
nn = torch.nn

from ipu_mlir.frontends import torch as ipu_torch  # noqa: E402
from ipu_mlir.frontends.comparison_rewrites import number_as  # noqa: E402

COMPARISONS = ("eq", "ne", "lt", "le", "gt", "ge")


class Compared(nn.Module):
    """Each comparison of `weight` with each number as the condition of a `where`."""

    def __init__(self, weight: torch.Tensor, numbers: tuple) -> None:
        super().__init__()
        self.register_buffer("weight", weight)
        self.numbers = numbers

    def forward(self, x):  # noqa: ANN001, ANN201
        conditions = [getattr(torch, name)(self.weight, number) for number in self.numbers for name in COMPARISONS]
        return tuple(torch.where(condition, x, -x) for condition in conditions)


f32_tenth = float(torch.tensor(0.1, dtype=torch.float32))
CASES = {  # weight, numbers: one element (folded) and more (a blob, compared at run time)
    "f32-splat-int": (torch.tensor([[0.012]]), (0, 1, -1)),
    "f32-splat-above-one-int": (torch.tensor([1.5]), (0, 1, 2)),
    "f32-splat-negative-int": (torch.tensor([-0.5]), (0, -1)),
    "f32-float-not-f32": (torch.tensor([f32_tenth, -f32_tenth]), (0.1, -0.1)),
    "f16-float-not-f16": (torch.tensor([0.1, 1.0], dtype=torch.float16), (0.1, 1)),
    "bf16-float-not-bf16": (torch.tensor([0.1], dtype=torch.bfloat16), (0.1, 0)),
    "i64-splat-float": (torch.tensor([3]), (2.5, 3.0, -7.5)),
    "i32-wrapped-int": (torch.tensor([3, -3], dtype=torch.int32), (2**40, 2**32 + 3)),
    "bool-splat": (torch.tensor([True]), (0, 1, False, True, 0.5)),
    "bool-few": (torch.tensor([True, False]), (0, -1, False)),
    "u8-splat": (torch.tensor([255], dtype=torch.uint8), (255, -1, 200.5)),
}


@pytest.mark.parametrize("name", CASES)
def test_a_constant_compared_with_a_number_matches_pytorch(name) -> None:  # noqa: ANN001
    weight, numbers = CASES[name]
    model = Compared(weight, numbers).eval()
    x = torch.arange(1.0, 1.0 + 2 * weight.numel()).reshape(2, *weight.shape)
    expected = model(x)
    got = ipu_torch.compile(model, x, target="tiny", use_cache=False)(x)
    for index, (ours, theirs) in enumerate(zip(got, expected)):
        number, name = numbers[index // len(COMPARISONS)], COMPARISONS[index % len(COMPARISONS)]
        assert torch.equal(ours, theirs), f"{weight.tolist()} {name} {number!r}: {ours.tolist()} != {theirs.tolist()}"


INPUTS = {  # an input compared with numbers: the lowering's comparison
    "f32": (torch.tensor([f32_tenth, -f32_tenth, 0.2, 1.0]), (0.1, -0.1, 1)),
    "f16": (torch.tensor([0.1, 1.0], dtype=torch.float16), (0.1, 1.0)),
    "bf16": (torch.tensor([0.1, 2.0], dtype=torch.bfloat16), (0.1,)),
    "bool": (torch.tensor([True, False]), (-1, 0, 1, True, False, 0.5)),
    "i64": (torch.tensor([3, -3]), (2.5, -3.0)),
    "i32": (torch.tensor([3, -3], dtype=torch.int32), (2.5, 2**40)),
    "u8": (torch.tensor([0, 1, 255], dtype=torch.uint8), (-1, 256, 0.5)),
}


class ComparedInput(nn.Module):
    def __init__(self, numbers: tuple) -> None:
        super().__init__()
        self.numbers = numbers

    def forward(self, x):  # noqa: ANN001, ANN201
        return tuple(getattr(torch, name)(x, number) for number in self.numbers for name in COMPARISONS)


@pytest.mark.parametrize("name", INPUTS)
def test_an_input_compared_with_a_number_matches_pytorch(name) -> None:  # noqa: ANN001
    x, numbers = INPUTS[name]
    model = ComparedInput(numbers)
    got = ipu_torch.compile(model, x, target="tiny", use_cache=False)(x)
    for index, (ours, theirs) in enumerate(zip(got, model(x))):
        number, name = numbers[index // len(COMPARISONS)], COMPARISONS[index % len(COMPARISONS)]
        assert torch.equal(ours, theirs), f"{x.tolist()} {name} {number!r}: {ours.tolist()} != {theirs.tolist()}"


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float32])
def test_number_as_rounds_as_aten(dtype) -> None:  # noqa: ANN001
    """A tensor of `dtype` compares with `value` as with `number_as(value, dtype)` in f64: the
    tensor holds the values around it, so a rounding off by one place shows."""
    rng = random.Random(0)
    for _ in range(200):
        value = rng.choice([rng.uniform(-4, 4), rng.uniform(-1e5, 1e5), rng.uniform(-1e-3, 1e-3), 65519.9, 3.4e38])
        near = torch.tensor(value, dtype=dtype)
        around = torch.stack([torch.nextafter(near, torch.tensor(side, dtype=dtype)) for side in (-float("inf"), float("inf"))] + [near])
        number = number_as(value, dtype)
        assert torch.equal(around > value, around.double() > number), (value, around.tolist(), number)
        assert torch.equal(around == value, around.double() == number), (value, around.tolist(), number)
