"""A unit-scaled MLP trained in f16 on the simulated IPU, without loss scaling, beside f32.

    .venv/bin/python examples/unit_scaling.py [--steps N]

Unit scaling (Blake et al., "Unit Scaling: Out-of-the-Box Low-Precision Training", Graphcore
Research, ICML 2023, arXiv:2303.11257) scales each op so that its outputs, and the gradients
it passes back, have unit variance at initialisation: weights drawn from N(0, 1), each linear
layer's output multiplied by 1 / sqrt(fan_in) and its input gradient by 1 / sqrt(fan_out) (the
paper's separate forward and backward scales, here by `scaled`'s identity-in-value trick), ReLU
by sqrt(2), and the loss's gradient by the number of outputs, so that the gradient reaching the
last layer has unit scale rather than 1 / N. Every tensor then sits near the middle of f16's
range: the model trains in f16 as it does in f32, with no loss scale to tune.

The run prints, per step, the simulated f16 loss beside the simulated f32 loss of the same
model and batches (a teacher MLP's outputs as the targets). With `--fp8` the third column is
the model with every linear layer's products in FP8 (`Precision.setFP8Training`: E4M3 forward,
E5M2 gradients) and no scale at all, every log2 scale 0: unit scaling keeps the tensors near 1,
inside E4M3's and E5M2's range, which is what makes FP8 work without per-tensor scales.
"""

from __future__ import annotations

import argparse
import copy
import math

import torch
from torch import nn

import ipu_mlir.frontends.torch as ipu_torch


def scaled(x: torch.Tensor, forward: float, backward: float) -> torch.Tensor:
    """`x * forward` whose gradient is multiplied by `backward` instead. The forward value is
    exactly `x * forward` (`a - a` is 0 in any precision; `x * b + (x * f - x * b)` would carry
    the rounding of `x * b`, 0.25 of an f16 unit at b = 512)."""
    by_backward = x * backward
    return x.detach() * forward + (by_backward - by_backward.detach())


class UnitLinear(nn.Module):
    def __init__(self, fan_in: int, fan_out: int) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.randn(fan_out, fan_in))
        self.fan_in, self.fan_out = fan_in, fan_out

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = scaled(x, 1.0, math.sqrt(self.fan_in / self.fan_out))  # the input gradient: 1 / sqrt(fan_out) in all
        return scaled(nn.functional.linear(x, self.weight), 1 / math.sqrt(self.fan_in), 1 / math.sqrt(self.fan_in))


class UnitScaledMLP(nn.Module):
    def __init__(self, sizes: tuple[int, ...] = (64, 256, 256, 16)) -> None:
        super().__init__()
        self.layers = nn.ModuleList(UnitLinear(a, b) for a, b in zip(sizes, sizes[1:]))

    def forward(self, x: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        for index, layer in enumerate(self.layers):
            x = layer(x)
            if index < len(self.layers) - 1:
                x = torch.relu(x) * math.sqrt(2.0)  # unit variance after a ReLU of a unit normal
        x = scaled(x, 1.0, float(x.numel()))  # the loss gradient at unit scale, not 1 / N
        return nn.functional.mse_loss(x, target)


def data(steps: int, batch: int = 32, seed: int = 1) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """Batches of unit-normal inputs and a fixed random teacher's outputs as targets."""
    generator = torch.Generator().manual_seed(seed)
    teacher = torch.randn(64, 16, generator=generator) / 8
    batches = []
    for _ in range(steps):
        x = torch.randn(batch, 64, generator=generator)
        batches.append((x, torch.tanh(x @ teacher)))
    return batches


NO_SCALES = {"weight": 0, "activation": 0, "gradient": 0}  # FP8 casts of the values as they are


def train(model: nn.Module, batches: list, dtype: torch.dtype, lr: float, target: str = "gc200", **precision: bool) -> list[float]:
    """The simulated losses of `model` in `dtype` over `batches` (SGD, `lr`); `fp8=True`: its
    linear layers' products in FP8 without scales."""
    model = copy.deepcopy(model).to(dtype)
    options = ipu_torch.Options().target(target).randomSeed(0)
    if precision.get("stochastic_rounding"):
        options.Precision.enableStochasticRounding(True)
    if precision.get("fp8"):
        options.Precision.setFP8Training(True, NO_SCALES)
    trained = ipu_torch.trainingModel(model, options, torch.optim.SGD(model.parameters(), lr=lr))
    return [float(trained(x.to(dtype), t.to(dtype))) for x, t in batches]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--lr", type=float, default=2e-3)
    parser.add_argument("--fp8", action="store_true", help="also train with FP8 linear layers and no scales")
    args = parser.parse_args()
    torch.manual_seed(0)
    model, batches = UnitScaledMLP(), data(args.steps)
    f32 = train(model, batches, torch.float32, args.lr)
    f16 = train(model, batches, torch.float16, args.lr, stochastic_rounding=True)
    fp8 = train(model, batches, torch.float32, args.lr, fp8=True) if args.fp8 else []
    print("step  f32 loss   f16 loss (no loss scaling, stochastic rounding)" + ("   FP8 loss (no scales)" if fp8 else ""))
    for step, (a, b) in enumerate(zip(f32, f16)):
        print(f"{step:4d}  {a:.5f}   {b:.5f}" + (f"   {fp8[step]:.5f}" if fp8 else ""))


if __name__ == "__main__":
    main()
