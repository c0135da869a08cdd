"""Low-precision training against f32 (issue 30, points 3 and 4, training part): loss and weight
drift over N simulated training steps (30; --quick 8), for f16 with and without f32 master
weights and stochastic rounding, FP8 linear layers with static and amax scales, and the
unit-scaled example model in f16 and in FP8; and the simulated time of one step of each recipe
on the c600, the chip with FP8 arithmetic.

    .venv/bin/python bench/precision_training.py [--quick]

Each configuration trains the same model from the same initial weights on the same batches on
the simulated gc200 (SGD, `trainingModel`), and is compared with the f32 run of its model from
the same weights rounded to the narrow type (so that the drift is training's, not the initial
rounding's):

- loss drift: the largest |loss - f32 loss| / f32 loss over the steps;
- weight drift: after the last step, the largest over the weight tensors of
  ||w - w_f32|| / ||w_f32 - w_initial||: how far the weights are from f32's, relative to how far
  f32's moved (1.0: as far off as the whole of the training's movement);
- movement made: the weights' movement projected on f32's, as a share of it (1.0: on average
  as far as f32's went; stochastic rounding is unbiased, so its noise, which the weight drift
  counts, averages out here);
- the simulated step's time on gc200 against the f32 step's: what f16 saves, and what the
  master weights' update and the rounding's draws cost (they are priced as the element-wise ops
  they are made of: see docs/training.md, "Low precision").

The standard MLP (nn.Linear's initialisation, 64-256-256-16, batch 32, MSE on a random
teacher's outputs) trains at lr 0.001: most updates are below half an f16 ulp of their weight,
so plain f16 (the update rounded to nearest) loses them, and stochastic rounding or master
weights keep them. The last row trains the reduced zoo ResNet-18 (BatchNorm in train mode, `ipu-run --train`'s
cross-entropy and batches, 5 steps at lr 0.001) in f16 with master weights and a static loss
scale of 1024 (dynamic scaling from 2^15 skips its first two steps, overflowing: a different
trajectory, not a drift). Measured: 4.05% loss drift, weights 1.81 of f32's movement off, 0.71
of it made; PyTorch's own f16 loop with f32 master weights on the same, by hand
(test_mixed_precision.py's `reference_loop`): 3.72%, 1.96 and 0.77. BatchNorm's statistics in
f16 move a ResNet that far from f32 in either.

The FP8 rows train the f32 model with `Precision.setFP8Training` (docs/precision.md, "Training in
FP8"): the drift is FP8's casts alone, the weights and update being f32. The step-time rows
run one step of each recipe on c600 for the standard MLP and a wide one (1024-1024-1024-1024,
batch 256; not with --quick), where the products outweigh the casts and the amax reductions.
"""

from __future__ import annotations

import argparse
import copy
import os
import sys
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import torch  # noqa: E402
from torch import nn  # noqa: E402

from ipu_mlir.frontends import zoo  # noqa: E402
from ipu_mlir.frontends.torch import Options, trainingModel  # noqa: E402
from ipu_mlir.tools.train import _batch, _WithLoss  # noqa: E402 (ipu-run --train's loss and synthetic batch)

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))
import unit_scaling  # noqa: E402

TARGET = "gc200"
LR = 1e-3  # the standard MLP's: most updates below half an f16 ulp of their weight
SIZES = (64, 256, 256, 16)  # the standard MLP's widths
UNIT_LR = 2e-3  # the unit-scaled MLP's (its weights are N(0, 1), 10x nn.Linear's)
RESNET_LR = 1e-3  # at 1e-2 its training is chaotic: PyTorch's f32 and f64 loops end 13% apart after 5 steps


class MLP(nn.Module):
    def __init__(self, sizes: tuple[int, ...] | None = None) -> None:
        super().__init__()
        sizes = sizes or SIZES
        self.layers = nn.ModuleList(nn.Linear(a, b) for a, b in zip(sizes, sizes[1:]))

    def forward(self, x: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        for index, layer in enumerate(self.layers):
            x = layer(x)
            x = torch.relu(x) if index < len(self.layers) - 1 else x
        return nn.functional.mse_loss(x, target)


# (label, model kind, dtype, Options.Precision / Training settings)
CONFIGURATIONS = (
    ("f16, update rounded to nearest", "mlp", torch.float16, {}),
    ("f16, stochastic rounding", "mlp", torch.float16, {"stochastic_rounding": True}),
    ("f16, f32 master weights", "mlp", torch.float16, {"master_weights": True}),
    ("f16, f32 master weights, dynamic loss scaling", "mlp", torch.float16, {"master_weights": True, "automatic": True}),
    ("bf16, stochastic rounding", "mlp", torch.bfloat16, {"stochastic_rounding": True}),
    ("unit-scaled f16, update rounded to nearest", "unit", torch.float16, {}),
    ("unit-scaled f16, stochastic rounding", "unit", torch.float16, {"stochastic_rounding": True}),
    ("FP8 linear layers, scales from each tensor's amax", "mlp", torch.float32, {"fp8": "amax"}),
    ("FP8 linear layers, static scales", "mlp", torch.float32, {"fp8": "static"}),
    ("FP8 linear layers, no scales (all 2^0)", "mlp", torch.float32, {"fp8": "none"}),
    ("unit-scaled FP8, no scales (all 2^0)", "unit", torch.float32, {"fp8": "none"}),
    ("unit-scaled FP8, scales from each tensor's amax", "unit", torch.float32, {"fp8": "amax"}),
    ("f16, f32 master weights, loss scale 1024", "resnet18", torch.float16, {"master_weights": True, "loss_scale": 1024.0}),
)
# FP8's static log2 scales for the standard MLP: each role's smallest of the amax scales at its
# first step (weights 11 to 12, activations 6 to 8, gradients 23 to 26), the gradients' lowered
# to 20 so that each product's scale, -(20 + 11), stays within Poplar's [-32, 32)
FP8_SCALES = {
    "static": {"weight": 11, "activation": 6, "gradient": 20},
    "none": {"weight": 0, "activation": 0, "gradient": 0},  # unit scaling's claim: no scale needed
    "amax": None,
}
RESNET_STEPS = 5
RESNET_LABEL = "ResNet-18 (zoo, width 1/8, 32x32, BatchNorm in train mode, cross-entropy), batch 8"


def resnet18(steps: int) -> tuple:
    """(model, lr, batches) of the reduced zoo ResNet-18 with `ipu-run --train`'s loss and batches."""
    net, example = zoo.build("resnet18", batch=8, **dict(zoo.MODELS["resnet18"].reduced))
    with torch.no_grad():
        probe = copy.deepcopy(net).eval()(*example)
    model = _WithLoss(net, "resnet18")
    return model, RESNET_LR, [_batch(example, model, "resnet18", tuple(probe.shape), step) for step in range(steps)]


def train(model: nn.Module, batches: list, dtype: torch.dtype, lr: float, settings: dict, target: str | None = None) -> dict:
    """Losses, final weights (f32) and the simulated step's seconds of `model` in `dtype`."""
    model = copy.deepcopy(model).to(dtype)
    options = Options().target(target or TARGET).randomSeed(0)
    options.Precision.enableStochasticRounding(settings.get("stochastic_rounding", False))
    options.Precision.setMasterWeights(settings.get("master_weights", False))
    if settings.get("fp8"):
        options.Precision.setFP8Training(True, FP8_SCALES[settings["fp8"]])
    if settings.get("loss_scale"):
        options.Training.setLossScaling(settings["loss_scale"])
    if settings.get("automatic"):
        options.Training.setAutomaticLossScaling(True, growth_interval=4)
    trained = trainingModel(model, options, torch.optim.SGD(model.parameters(), lr=lr))
    losses = [float(trained(*(v.to(dtype) if v.is_floating_point() else v for v in batch))) for batch in batches]
    trained.copyWeightsToHost()
    masters = trained.masterWeights()
    weights = {name: torch.from_numpy(masters[name]) if name in masters else p.detach().float() for name, p in model.named_parameters()}
    return {"losses": losses, "weights": weights, "device_s": trained.profile.seconds, "cycles": trained.profile.cycles}


def drift(run: dict, f32: dict, initial: dict) -> tuple[float, float, float]:
    """(loss drift, weight drift, the share of f32's movement made: see the module's doc)."""
    loss = max(abs(a - b) / b for a, b in zip(run["losses"], f32["losses"]))
    weight = max(
        float((run["weights"][name] - f32["weights"][name]).norm() / (f32["weights"][name] - initial[name]).norm()) for name in initial
    )
    ours = torch.cat([(run["weights"][name] - initial[name]).flatten() for name in initial]).double()
    theirs = torch.cat([(f32["weights"][name] - initial[name]).flatten() for name in initial]).double()
    return loss, weight, float(ours @ theirs / (theirs @ theirs))


def rows(quick: bool, row) -> list[dict]:  # noqa: ANN001 (bench/run.py's row)
    """The section's rows, made by `row(section, what, input, figure, ratio, peer, goal, met, **raw)`."""
    steps = 8 if quick else 30
    torch.manual_seed(0)
    data = unit_scaling.data(steps)
    models = {"mlp": (MLP(), LR, data), "unit": (unit_scaling.UnitScaledMLP(), UNIT_LR, data)}
    if any(kind == "resnet18" for _, kind, _, _ in CONFIGURATIONS):
        models["resnet18"] = resnet18(min(steps, RESNET_STEPS))
    f32, initial = {}, {}
    for kind, dtype in dict.fromkeys((kind, dtype) for _, kind, dtype, _ in CONFIGURATIONS):
        # f32's run starts from the weights rounded to the narrow type: the drift is training's alone
        model, lr, batches = models[kind]
        start = copy.deepcopy(model).to(dtype).float()
        initial[kind, dtype] = {n: p.detach().clone() for n, p in start.named_parameters()}
        f32[kind, dtype] = train(start, batches, torch.float32, lr, {})
    out = []
    for label, kind, dtype, settings in CONFIGURATIONS:
        model, lr, batches = models[kind]
        baseline = f32[kind, dtype]
        try:
            run = train(model, batches, dtype, lr, settings)
        except Exception as error:  # noqa: BLE001 (a refused configuration is a row, not the end of the bench)
            first = str(error).strip().splitlines()[0]
            out.append(
                row("precision_training", f"{label}: training", f"{kind}, {steps} steps", f"refused: {first}", None, "f32", "trains", False)
            )
            continue
        loss, weight, made = drift(run, baseline, initial[kind, dtype])
        time_ratio = run["device_s"] / baseline["device_s"]
        raw = {"loss_drift": loss, "weight_drift": weight, "movement_made": made, "losses": run["losses"], "f32_losses": baseline["losses"]}
        raw.update(device_s=run["device_s"], f32_device_s=baseline["device_s"])
        out.append(
            row(
                "precision_training",
                f"{label}: loss and weight drift after {len(batches)} steps",
                RESNET_LABEL + f", SGD lr {lr:g}"
                if kind == "resnet18"
                else f"{'unit-scaled ' if kind == 'unit' else ''}MLP {'-'.join(map(str, SIZES))}, batch 32, SGD lr {lr:g}",
                f"loss {loss:.2%} off; weights {weight:.2f} of f32's movement off, {made:.2f} of it made; final loss"
                f" {run['losses'][-1]:.4f} vs {baseline['losses'][-1]:.4f}; step {time_ratio:.2f}x f32's simulated time",
                weight,
                "the f32 run",
                "-",
                None,
                **raw,
            )
        )
    return out + step_times(row, quick)


# The step-time rows: (label, dtype, settings) on TIME_TARGET, the chip with FP8 arithmetic, for
# the standard MLP and a wide one (widths, batch), whose products outweigh the casts
STEP_TIMES = (
    ("f32", torch.float32, {}),
    ("f16, f32 master weights", torch.float16, {"master_weights": True}),
    ("FP8, amax scales", torch.float32, {"fp8": "amax"}),
    ("FP8, static scales", torch.float32, {"fp8": "static"}),
)
TIME_TARGET = "c600"
WIDE = ((1024, 1024, 1024, 1024), 256)


def step_times(row, quick: bool) -> list[dict]:  # noqa: ANN001 (bench/run.py's row)
    """The simulated time of one SGD step per recipe of the standard MLP (batch 32) and, unless
    `quick`, the wide one, on TIME_TARGET, against f32's. The static scales are the standard
    MLP's (the wide one's weights are smaller, nn.Linear's 1 / sqrt(1024): no overflow)."""
    out = []
    for sizes, batch in [(SIZES, 32)] + ([] if quick else [WIDE]):
        torch.manual_seed(0)
        generator = torch.Generator().manual_seed(1)
        example = (torch.randn(batch, sizes[0], generator=generator), torch.randn(batch, sizes[-1], generator=generator))
        runs = {label: train(MLP(sizes), [example], dtype, LR, settings, TIME_TARGET) for label, dtype, settings in STEP_TIMES}
        f32 = runs.get("f32")
        for label, run in runs.items():
            ratio = run["device_s"] / f32["device_s"] if f32 else None
            out.append(
                row(
                    "precision_training",
                    f"{label}: simulated training step on {TIME_TARGET}",
                    f"MLP {'-'.join(map(str, sizes))}, batch {batch}, SGD",
                    f"{run['cycles']:,} cycles = {run['device_s'] * 1e6:.1f} us" + (f", {ratio:.2f}x f32's" if ratio else ""),
                    ratio,
                    "the f32 step",
                    "-",
                    None,
                    cycles=run["cycles"],
                    device_s=run["device_s"],
                )
            )
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="8 steps rather than 30")
    args = parser.parse_args()

    def row(section, what, input_, figure, ratio, peer, goal="-", met=None, **raw):  # noqa: ANN001, ANN202, ARG001
        return {"what": what, "input": input_, "figure": figure}

    for item in rows(args.quick, row):
        print(f"{item['what']}\n    {item['figure']}")


if __name__ == "__main__":
    main()
