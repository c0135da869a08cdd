"""Full-size ResNet-50's largest micro-batch on one gc200 (issue 25, point 7): whether a
training step with SGD momentum fits at a micro-batch, memory proportion and precision, its
peak memory a tile, its simulated time and images per second beside Graphcore's figures.

    .venv/bin/python bench/training_fit.py --batch 3 [--proportion 0.45] [--dtype f32|f16] [--size 224]

Heavy (about 5.5 GB resident, minutes): on a shared machine under its heavy-job lock. One step
is run. In f32 the parameters after it are compared with PyTorch's f32 step and both with
PyTorch's f64 step from the same weights on the same batch: one step of ResNet-50 at lr 1e-3 is
ill-conditioned enough that PyTorch's own f32 and f64 differ by several 1e-3 of a tensor's
largest value (docs/training.md#conditioning), so the f64 step tells rounding from error.
In f16 (`model.half()`) nothing is compared: PyTorch's own f16 loop is no reference.
"""

from __future__ import annotations

import argparse
import copy
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

import torch  # noqa: E402
from training import PUBLISHED, parameter_error  # noqa: E402

from ipu_mlir.frontends import zoo  # noqa: E402
from ipu_mlir.frontends.options import Options  # noqa: E402
from ipu_mlir.frontends.torch import trainingModel  # noqa: E402
from ipu_mlir.target.diagnostics import IpuError  # noqa: E402
from ipu_mlir.tools.train import _batch, _WithLoss  # noqa: E402 (ipu-run --train's loss and synthetic batch)

LR, MOMENTUM = 1e-3, 0.9  # bench/training.py's


def step_in(model: torch.nn.Module, inputs: tuple, dtype: torch.dtype) -> None:
    """PyTorch's SGD momentum step on `model` in `dtype`."""
    optimizer = torch.optim.SGD(model.parameters(), lr=LR, momentum=MOMENTUM)
    optimizer.zero_grad()
    model(*(x.to(dtype) if x.is_floating_point() else x for x in inputs)).backward()
    optimizer.step()


def against_f64(model: torch.nn.Module, f32: torch.nn.Module, f64: torch.nn.Module) -> tuple[str, float, float]:
    """The parameter whose difference from the f64 step, relative to its largest value, is the
    largest multiple of PyTorch f32's: (its name, ours, PyTorch f32's)."""
    exact, theirs = dict(f64.named_parameters()), dict(f32.named_parameters())
    rows = []
    for name, mine in model.named_parameters():
        reference = exact[name].detach()
        scale = max(float(reference.abs().max()), 1e-12)
        ours = float((mine.detach().double() - reference).abs().max()) / scale
        pytorch = float((theirs[name].detach().double() - reference).abs().max()) / scale
        rows.append((ours / max(pytorch, 1e-12), name, ours, pytorch))
    _, name, ours, pytorch = max(rows)
    return name, ours, pytorch


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--batch", type=int, required=True, help="the micro-batch")
    parser.add_argument("--proportion", type=float, default=None, help="setAvailableMemoryProportion (default: the target's, 0.6)")
    parser.add_argument("--dtype", choices=("f32", "f16"), default="f32")
    parser.add_argument("--size", type=int, default=224, help="the image side (a smaller one for a quick try)")
    args = parser.parse_args()

    net, example = zoo.build("resnet50", batch=args.batch, size=args.size)
    with torch.no_grad():
        probe = copy.deepcopy(net).eval()(*example)
    model = _WithLoss(net, "resnet50")
    inputs = _batch(example, model, "resnet50", tuple(probe.shape), 0)
    if args.dtype == "f16":
        model = model.half()
        inputs = tuple(x.half() if x.is_floating_point() else x for x in inputs)
    f32, f64 = copy.deepcopy(model).train(), copy.deepcopy(model).train().double()
    options = Options().target("gc200")
    if args.proportion is not None:
        options.setAvailableMemoryProportion({"IPU0": args.proportion})
    ours = trainingModel(model, options, torch.optim.SGD(model.parameters(), lr=LR, momentum=MOMENTUM))
    proportion = args.proportion or 0.6
    label = f"ResNet-50 {args.size}x{args.size}, micro-batch {args.batch}, {args.dtype}, SGD momentum, memory proportion {proportion}"
    start = time.perf_counter()
    try:
        ours(*inputs)
    except IpuError as error:
        print(f"{label}: refused: {str(error).splitlines()[0]}")
        return
    profile = ours.profile
    rate = args.batch / profile.seconds
    print(f"{label}: fits, peak {profile.peak_memory_per_tile:,} bytes a tile; {profile.seconds * 1e6:,.1f} us a step, {rate:,.0f} img/s")
    print("  " + "; ".join(f"{rate / per_ipu:.3f} of {system}'s {per_ipu:,.0f} img/s per IPU" for system, per_ipu in PUBLISHED))
    print(f"  compiled, loaded and run in {time.perf_counter() - start:.0f} s", flush=True)
    if args.dtype == "f32":
        ours.copyWeightsToHost()
        step_in(f32, inputs, torch.float32)
        step_in(f64, inputs, torch.float64)
        name, error = parameter_error(model, f32)
        print(f"  parameters after the step vs PyTorch f32: largest difference {error:.2g} of its tensor's largest value ({name})")
        name, mine, theirs = against_f64(model, f32, f64)
        print(f"  vs PyTorch f64, the tensor furthest past PyTorch f32's rounding: {name}, ours {mine:.2g}, PyTorch f32 {theirs:.2g}")


if __name__ == "__main__":
    sys.exit(main())
