"""Inference in f32, f16 and scaled FP8 (issue 30, point 4): simulated time of a BERT-base layer,
a GPT-2 block and a small CNN on gc200 and c600, and each one's error against the f32 PyTorch
output; and the BERT-base layer in f16 with f16 against f32 partials.

    .venv/bin/python bench/precision.py [--seq 128] [--targets gc200 c600] [--models bert gpt2 cnn partials]

- **f32**: the layer as the zoo builds it (frontends/zoo.py, full size: hidden 768, 12 heads).
- **f16**: the same weights, `module.half()`, the input in f16.
- **fp8**: every linear layer's product and every convolution in float8_e4m3fn with
  per-tensor power-of-two scales, as Graphcore runs FP8 (static scaling): the weight's scale
  from its largest magnitude, the input's calibrated once on the example input, each
  `2^floor(log2(448 / amax))`; the rest (attention's products, softmax, LayerNorm, GELU,
  pooling) in f32. `ipu-fp8-matmul` and `ipu-fp8-conv` make each one FP8 product
  (docs/precision.md). `fp8, unrecognized` compiles the same program without those passes: the
  dequantized operands in f32, the product priced at the f32 rate.
- **f16 partials / f32 partials** (BERT-base, f16): the f16 model with its products' partial
  sums in f16 or f32 (`ipu-partials-type`, PopTorch's `Precision.setPartialsType`).

Error: the largest absolute difference from the f32 PyTorch output over its largest magnitude.
The FP8 simulation also matches PyTorch's own run of the FP8 model at f32's tolerance
(test/python/test_torch_precision.py checks that on a smaller block).
"""

from __future__ import annotations

import argparse
import copy
import math
import time

import numpy as np
import torch
from torch import nn

import ipu_mlir.frontends.torch as ipu_torch
from ipu_mlir.dialects.attrs import PARTIALS_ATTR, encode_partials
from ipu_mlir.frontends import api, zoo
from ipu_mlir.lowering.pass_registry import build_pass_manager
from ipu_mlir.lowering.pipelines import default_pipeline
from ipu_mlir.runtime import api as runtime_api

F8 = torch.float8_e4m3fn
F8_MAX = float(torch.finfo(F8).max)  # 448
PRECISIONS = ("f32", "f16", "fp8", "fp8, unrecognized")
PARTIALS = ("f16, f16 partials", "f16, f32 partials")
FP8_PASSES = ("ipu-fp8-matmul,", "ipu-fp8-conv,")


def log2_scale(amax: float) -> int:
    """The power of two putting `amax` at or below E4M3's largest value, as close as it goes."""
    return math.floor(math.log2(F8_MAX / max(amax, 2.0**-100)))


class FP8Linear(nn.Module):
    """`x @ W^T + b` with x and W in float8_e4m3fn, each scaled by a power of two: the input
    quantized on every call with its calibrated scale, the weight stored quantized. Written as
    PyTorch exports a dequantized product: `(xq.float() * 2^-sx) @ (wq.float() * 2^-sw)^T`,
    on a 2-D x (a 3-D one would be a batched product of a broadcast weight)."""

    def __init__(self, weight: torch.Tensor, bias: torch.Tensor | None, input_amax: float):
        super().__init__()
        self.weight_log2 = log2_scale(float(weight.abs().max()))
        self.input_log2 = log2_scale(input_amax)
        self.register_buffer("wq", (weight.float() * 2.0**self.weight_log2).to(F8))
        self.bias = None if bias is None else nn.Parameter(bias.detach().float().clone())

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        flat = x.reshape(-1, x.shape[-1])
        xq = (flat * 2.0**self.input_log2).clamp(-F8_MAX, F8_MAX).to(F8)
        y = nn.functional.linear(xq.float() * 2.0**-self.input_log2, self.wq.float() * 2.0**-self.weight_log2)
        y = y if self.bias is None else y + self.bias
        return y.reshape(*x.shape[:-1], y.shape[-1])


class FP8Conv2d(nn.Module):
    """An nn.Conv2d with its input and weight in float8_e4m3fn, scaled as FP8Linear's: written
    as PyTorch exports a dequantized convolution, which ipu-fp8-conv makes one FP8 ipu.conv."""

    def __init__(self, conv: nn.Conv2d, input_amax: float):
        super().__init__()
        self.weight_log2 = log2_scale(float(conv.weight.detach().abs().max()))
        self.input_log2 = log2_scale(input_amax)
        self.register_buffer("wq", (conv.weight.detach().float() * 2.0**self.weight_log2).to(F8))
        self.bias = None if conv.bias is None else nn.Parameter(conv.bias.detach().float().clone())
        self.options = dict(stride=conv.stride, padding=conv.padding, dilation=conv.dilation, groups=conv.groups)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        xq = (x * 2.0**self.input_log2).clamp(-F8_MAX, F8_MAX).to(F8)
        w = self.wq.float() * 2.0**-self.weight_log2
        return nn.functional.conv2d(xq.float() * 2.0**-self.input_log2, w, self.bias, **self.options)


def linears(module: nn.Module) -> list[tuple[nn.Module, str, nn.Module]]:
    """Every linear layer (nn.Linear, GPT-2's Conv1D) and convolution (nn.Conv2d) with its
    parent and attribute name."""
    found = []
    for parent in module.modules():
        for name, child in parent.named_children():
            if isinstance(child, (nn.Linear, nn.Conv2d)) or type(child).__name__ == "Conv1D":
                found.append((parent, name, child))
    return found


def to_fp8(module: nn.Module, example: torch.Tensor) -> nn.Module:
    """`module` with each linear layer an FP8Linear and each convolution an FP8Conv2d, input
    scales calibrated on `example`."""
    amax: dict[nn.Module, float] = {}
    hooks = [
        child.register_forward_pre_hook(lambda m, args: amax.__setitem__(m, float(args[0].abs().max()))) for _, _, child in linears(module)
    ]
    with torch.no_grad():
        module(example)
    for hook in hooks:
        hook.remove()
    for parent, name, child in linears(module):
        if isinstance(child, nn.Conv2d):
            setattr(parent, name, FP8Conv2d(child, amax[child]))
            continue
        weight = child.weight if isinstance(child, nn.Linear) else child.weight.t()  # Conv1D stores (in, out)
        setattr(parent, name, FP8Linear(weight.detach(), child.bias, amax[child]))
    return module.eval()


def small_cnn() -> tuple[nn.Module, torch.Tensor]:
    """A CIFAR-sized CNN: three 3x3 convolutions (16, 32, 64 channels, the last two strided),
    ReLUs, global average pooling and a linear classifier, on 8 images of 3 x 32 x 32."""
    torch.manual_seed(0)
    model = nn.Sequential(
        nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(),
        nn.Conv2d(16, 32, 3, stride=2, padding=1), nn.ReLU(),
        nn.Conv2d(32, 64, 3, stride=2, padding=1), nn.ReLU(),
        nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(64, 10),
    )  # fmt: skip
    return model.eval(), torch.randn(8, 3, 32, 32, generator=torch.Generator().manual_seed(1))


def models(seq: int, chosen: tuple[str, ...] = ("bert", "gpt2", "cnn")) -> dict[str, tuple[nn.Module, torch.Tensor]]:
    """The BERT-base layer and the GPT-2 (small) block, full size, on one sequence of `seq`; the
    small CNN."""
    found = {}
    if "bert" in chosen:
        bert, (x,) = zoo.build("bert_encoder", seq=seq, layers=1)
        found["BERT-base layer"] = (bert.eval(), x)
    if "gpt2" in chosen:
        gpt2, _ = zoo.build("gpt2", seq=seq, layers=1)
        found["GPT-2 block"] = (gpt2.transformer.h[0].eval(), torch.randn(1, seq, 768, generator=torch.Generator().manual_seed(3)))
    if "cnn" in chosen:
        found["small CNN"] = small_cnn()
    return found


def variant(module: nn.Module, x: torch.Tensor, precision: str) -> tuple[nn.Module, torch.Tensor]:
    module = copy.deepcopy(module)
    if precision.startswith("f16"):
        return module.half(), x.half()
    if precision.startswith("fp8"):
        return to_fp8(module, x), x
    return module, x


def simulate(
    module: nn.Module, x: torch.Tensor, target: str, recognize: bool, partials: str | None = None
) -> tuple[np.ndarray, int, float]:
    """Output, simulated cycles and device seconds of `module` on `x`; `recognize` False
    compiles without ipu-fp8-matmul and ipu-fp8-conv; `partials` the f16 products' partials type."""
    imported = ipu_torch.export(module, x)
    with imported.context:
        program = api.copy_module(imported)
        if partials is not None:
            program.operation.attributes[PARTIALS_ATTR] = encode_partials(partials)
        pipeline = default_pipeline(target)
        for name in () if recognize else FP8_PASSES:
            pipeline = pipeline.replace(name, "")
        build_pass_manager(pipeline, imported.context).run(program.operation)
    simulator = runtime_api.load_simulator(program, target, "main", verified=True)
    (output,) = simulator.run([x.numpy()])
    profile = simulator.profile
    return np.asarray(output), profile.cycles, profile.seconds


def measure(seq: int, targets: list[str], chosen: tuple[str, ...] = ("bert", "gpt2", "cnn", "partials")) -> list[dict]:
    """Every model of `chosen` in every precision on every target; "partials": the BERT-base
    layer in f16 with f16 and with f32 partials."""
    cases = [(name, model, x, PRECISIONS) for name, (model, x) in models(seq, chosen).items()]
    if "partials" in chosen:
        cases += [(name, model, x, PARTIALS) for name, (model, x) in models(seq, ("bert",)).items()]
    results = []
    for name, module, x, precisions in cases:
        with torch.no_grad():
            reference = module(x).numpy().astype(np.float64)
        for precision in precisions:
            model, inputs = variant(module, x, precision)
            partials = precision.split(", ")[1].split()[0] if precision in PARTIALS else None
            for target in targets:
                start = time.perf_counter()
                output, cycles, seconds = simulate(model, inputs, target, precision != "fp8, unrecognized", partials)
                error = float(np.abs(output.astype(np.float64) - reference).max() / np.abs(reference).max())
                results.append(dict(model=name, precision=precision, target=target, seq=seq, cycles=cycles, seconds=seconds, error=error,
                                    wall=time.perf_counter() - start))  # fmt: skip
    return results


def rows(quick: bool, row) -> list[dict]:
    """bench/run.py's `precision` section: full-size layers, 128 positions (quick: 32); the small CNN."""
    seq = 32 if quick else 128
    found = []
    for r in measure(seq, ["gc200", "c600"]):
        figure = f"{r['cycles']:,} cycles = {r['seconds'] * 1e6:,.1f} us; error {r['error']:.1e} of the largest output"
        shape = "8x3x32x32" if r["model"] == "small CNN" else f"1x{seq}x768"
        found.append(row("precision", f"{r['model']} inference, {r['precision']}", f"{shape} on {r['target']}", figure, None,
                         "PyTorch f32 (error)", **r))  # fmt: skip
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seq", type=int, default=128)
    parser.add_argument("--targets", nargs="+", default=["gc200", "c600"])
    parser.add_argument("--models", nargs="+", default=["bert", "gpt2", "cnn", "partials"], choices=["bert", "gpt2", "cnn", "partials"])
    args = parser.parse_args()
    print("model            precision          target  cycles       time (us)  error vs f32  wall")
    for r in measure(args.seq, args.targets, tuple(args.models)):
        figures = f"{r['cycles']:11,}  {r['seconds'] * 1e6:9.1f}  {r['error']:12.1e}  {r['wall']:4.0f} s"
        print(f"{r['model']:16} {r['precision']:18} {r['target']:7} {figures}", flush=True)


if __name__ == "__main__":
    main()
