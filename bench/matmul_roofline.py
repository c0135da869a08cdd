"""Plan quality under the cost model: matmuls against the roofline (issue 3).

    .venv/bin/python bench/matmul_roofline.py [--sizes 512 1024 2048] [--target gc200] [--dtype f32]

Each N x N x N f32 (or f16) matmul is compiled by the default pipeline's planning steps and simulated;
the simulator's estimated device cycles (compute on the slowest tile + exchange + sync of
every superstep; host streams are not device cycles) are compared with the roofline bound
FLOPs / (tiles x FLOPs per cycle per tile). The program's result is checked against numpy.

`bound` is what no one-pass plan (operands exchanged before its compute set, partial sums
after, as ipu-plan and poplin build them) can beat under the same cost model: some tile does
at least F = N^3 / tiles FMAs, at the model's matmul rate, and by the Loomis-Whitney
inequality the A, B and C entries those FMAs touch number at least 3 F^(2/3). If each tile
starts with at most its 1/tiles share of A and B and ends with its share of C (as the planner
places them), that tile receives or sends at least 3 F^(2/3) - 3 N^2 / tiles of them through
exchange phases, which do not overlap compute (BSP). The argument is that of Irony, Toledo
and Tiskin 2004, "Communication lower bounds for distributed-memory matrix multiplication".

`any plan` drops the one-pass shape: a plan may run many supersteps, each tile sending and
receiving at once (a phase costs its busiest tile's max(received, sent), so a tile's traffic
costs at least half its bytes), and may load some tiles with more than N^3 / tiles FMAs. If
the busiest tile does F_max FMAs, the tiles together touch at least 3 N^3 / F_max^(1/3)
entries (x^(2/3) is concave: fewest when every working tile does F_max), of which 3 N^2 start
or end in place, and some tile moves at least the average of the rest. The bound is the
least, over F_max >= N^3 / tiles, of the busiest tile's vertex plus half that traffic.

Both bounds price the busiest tile's FMAs with the cost model's own vertex (`matmul_work`:
poplibs' AMP 1x1 vertex, or the vector path when cheaper), so the bound depends on the shape
of that tile's block: it is the least over blocks of whole vertex chunks (rows a multiple of
the workers, inputs of the conv unit's input channels, outputs of the conv units; capped at
N), searched on a grid of chunk counts and then hill-climbed to neighbouring counts (a search,
not an exhaustive minimum). The roofline is the datasheet peak.

ResNet-50's convolutions (`RESNET50_CONVS`, each distinct shape of torchvision's ResNet-50 at
224 x 224, batch 1) are measured the same way. Their bound is the busiest tile's vertex alone
(an exchange term would need Loomis-Whitney on distinct entries, which im2col columns are not):
the least over blocks of P output positions, C KH KW inputs and F outputs with at least the
average FMAs.
"""

from __future__ import annotations

import argparse
import functools
import itertools
import math
import time

import numpy as np
import torch
from mlir import ir

from ipu_mlir.dialects import make_context
from ipu_mlir.frontends.api import run
from ipu_mlir.lowering.pass_registry import build_pass_manager
from ipu_mlir.target import cost_model, load_target

BYTES = {"f32": 4, "f16": 2}
STEPS = "builtin.module(ipu-plan,ipu-schedule,ipu-fuse-compute-sets,ipu-merge-supersteps,ipu-memory-plan,ipu-verify)"


def matmul_module(n: int, target: str, dtype: str = "f32") -> str:
    t = f"tensor<{n}x{n}x{dtype}>"
    return (
        f'module attributes {{ipu.target = "{target}"}} {{\n'
        f"func.func @main(%a: {t}, %b: {t}) -> {t} {{\n"
        f'  %c = "ipu.matmul"(%a, %b) : ({t}, {t}) -> {t}\n'
        f"  return %c : {t}\n}}\n}}\n"
    )


def _counts(limit: int) -> list[int]:
    """Chunk counts to try: every one up to 12, then a geometric grid up to `limit`."""
    return sorted(set(range(1, min(limit, 12) + 1)) | {int(c) for c in np.geomspace(1, limit, 24).round()})


def least_vertex(m: int, k: int, n: int, fmas: float, target, dtype: str, extra=lambda fmas: 0.0) -> float:
    """The least, over per-tile blocks of an M x K x N product with at least `fmas` FMAs, of
    the vertex's cycles (overhead included) plus `extra(block FMAs)` (module doc)."""
    info = cost_model.dtype_info(dtype)
    chunks = (target.worker_threads, cost_model.amp_in_chans_per_group(info, target), target.amp_conv_units)
    limits = [-(-e // c) for e, c in zip((m, k, n), chunks)]

    @functools.cache
    def price(index: tuple[int, ...]) -> float:
        if any(i < 1 or i > limit for i, limit in zip(index, limits)):
            return math.inf
        rows, inputs, outputs = (min(e, c * i) for e, c, i in zip((m, k, n), chunks, index))
        if rows * inputs * outputs < fmas:
            return math.inf
        vertex = cost_model.matmul_cycles(1, rows, outputs, inputs, dtype, target)
        return vertex + extra(rows * inputs * outputs)

    best = min(itertools.product(*(_counts(limit) for limit in limits)), key=price)
    steps = [d for d in itertools.product((-2, -1, 0, 1, 2), repeat=3) if any(d)]
    while True:  # hill-climb to neighbouring chunk counts
        step = min((tuple(b + d for b, d in zip(best, delta)) for delta in steps), key=price)
        if price(step) >= price(best):
            return float(price(best))
        best = step


def lower_bound(n: int, target, dtype: str = "f32") -> float:
    """Cycles no one-pass plan of an N^3 matmul can beat under the cost model (module doc)."""
    fmas = n**3 / target.num_tiles
    compute = least_vertex(n, n, n, fmas, target, dtype)
    elements = 3 * fmas ** (2 / 3) - 3 * n**2 / target.num_tiles
    return compute + max(0.0, elements) * BYTES[dtype] / target.exchange_bytes_per_cycle


def any_plan_bound(n: int, target, dtype: str = "f32") -> float:
    """Cycles no plan of an N^3 matmul, in any number of supersteps, can beat under the cost
    model (module doc)."""

    def traffic(busiest: float) -> float:  # half the bytes some tile moves when the busiest does `busiest` FMAs
        moved = max(0.0, 3 * n**3 / np.cbrt(busiest) - 3 * n**2) / target.num_tiles
        return moved * BYTES[dtype] / target.exchange_bytes_per_cycle / 2

    return least_vertex(n, n, n, n**3 / target.num_tiles, target, dtype, traffic)


def measure(n: int, target_name: str, dtype: str = "f32", rng: np.random.Generator | None = None) -> dict:
    """Compiles and simulates one N^3 matmul: the estimated cycles beside the roofline and both
    bounds, compile seconds and the largest error against numpy (relative to the largest entry)."""
    target, rng = load_target(target_name), rng or np.random.default_rng(0)
    with make_context() as context:
        module = ir.Module.parse(matmul_module(n, target_name, dtype))
        start = time.perf_counter()
        build_pass_manager(STEPS, context).run(module.operation)
        compile_seconds = time.perf_counter() - start
        a = rng.standard_normal((n, n), dtype=np.float32).astype(dtype.replace("f", "float"))
        b = rng.standard_normal((n, n), dtype=np.float32).astype(a.dtype)
        (c,), profile = run(module, [a, b], target=target_name)
    expected = a.astype(np.float64) @ b.astype(np.float64)
    return {
        "n": n,
        "target": target_name,
        "dtype": dtype,
        "cycles": profile.cycles,
        "roofline": 2 * n**3 / (target.num_tiles * 2 * target.fma_per_cycle(dtype)),
        "bound": lower_bound(n, target, dtype),
        "any_plan": any_plan_bound(n, target, dtype),
        "compute": profile.compute_cycles,
        "exchange": profile.exchange_cycles,
        "sync": profile.sync_cycles,
        "compile_s": compile_seconds,
        "error": float(np.abs(c - expected).max() / np.abs(expected).max()),
    }


# Each distinct convolution of torchvision's ResNet-50 at 224 x 224, batch 1: (input channels,
# output channels, kernel, stride, input height = width); padding keeps the size ("same").
RESNET50_CONVS = (
    (3, 64, 7, 2, 224),
    (64, 64, 1, 1, 56), (64, 64, 3, 1, 56), (64, 256, 1, 1, 56), (256, 64, 1, 1, 56),
    (256, 128, 1, 1, 56), (128, 128, 3, 2, 56), (128, 512, 1, 1, 28), (256, 512, 1, 2, 56),
    (512, 128, 1, 1, 28), (128, 128, 3, 1, 28),
    (512, 256, 1, 1, 28), (256, 256, 3, 2, 28), (256, 1024, 1, 1, 14), (512, 1024, 1, 2, 28),
    (1024, 256, 1, 1, 14), (256, 256, 3, 1, 14),
    (1024, 512, 1, 1, 14), (512, 512, 3, 2, 14), (512, 2048, 1, 1, 7), (1024, 2048, 1, 2, 14),
    (2048, 512, 1, 1, 7), (512, 512, 3, 1, 7),
)  # fmt: skip


def conv_module(c: int, f: int, kernel: int, stride: int, size: int, target: str) -> str:
    pad, out = kernel // 2, (size + 2 * (kernel // 2) - kernel) // stride + 1
    x, w, y = f"tensor<1x{c}x{size}x{size}xf32>", f"tensor<{f}x{c}x{kernel}x{kernel}xf32>", f"tensor<1x{f}x{out}x{out}xf32>"
    return (
        f'module attributes {{ipu.target = "{target}"}} {{\n'
        f"func.func @main(%x: {x}, %w: {w}) -> {y} {{\n"
        f'  %y = "ipu.conv"(%x, %w) {{dilations = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: {pad}, {pad}, {pad}, {pad}>, '
        f"strides = array<i64: {stride}, {stride}>}} : ({x}, {w}) -> {y}\n"
        f"  return %y : {y}\n}}\n}}\n"
    )


def measure_conv(shape: tuple[int, ...], target_name: str = "gc200", rng: np.random.Generator | None = None) -> dict:
    """Compiles and simulates one f32 convolution of `RESNET50_CONVS`: its estimated cycles
    beside the roofline and the busiest tile's least vertex (module doc), checked against torch."""
    c, f, kernel, stride, size = shape
    target, rng = load_target(target_name), rng or np.random.default_rng(0)
    out = (size + 2 * (kernel // 2) - kernel) // stride + 1
    fmas = f * out * out * c * kernel * kernel
    with make_context() as context:
        module = ir.Module.parse(conv_module(*shape, target_name))
        start = time.perf_counter()
        build_pass_manager(STEPS, context).run(module.operation)
        compile_seconds = time.perf_counter() - start
        x = rng.standard_normal((1, c, size, size), dtype=np.float32)
        w = rng.standard_normal((f, c, kernel, kernel), dtype=np.float32)
        (y,), profile = run(module, [x, w], target=target_name)
    expected = torch.nn.functional.conv2d(
        torch.from_numpy(x).double(), torch.from_numpy(w).double(), stride=stride, padding=kernel // 2
    ).numpy()
    return {
        "shape": list(shape),
        "target": target_name,
        "cycles": profile.cycles,
        "roofline": fmas / (target.num_tiles * target.fma_per_cycle("f32")),
        "any_plan": least_vertex(out * out, c * kernel * kernel, f, fmas / target.num_tiles, target, "f32"),
        "compute": profile.compute_cycles,
        "exchange": profile.exchange_cycles,
        "sync": profile.sync_cycles,
        "compile_s": compile_seconds,
        "error": float(np.abs(y - expected).max() / np.abs(expected).max()),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[512, 1024, 2048])
    parser.add_argument("--target", default="gc200")
    parser.add_argument("--dtype", choices=sorted(BYTES), default="f32")
    args = parser.parse_args()
    print(
        f"{'N':>6}{'est. cycles':>13}{'roofline':>11}{'ratio':>7}{'bound':>10}{'bound ratio':>12}{'any plan':>10}"
        f"{'ratio':>7}{'compute':>10}{'exchange':>10}{'sync':>6}{'compile s':>11}{'max err':>10}"
    )
    rng = np.random.default_rng(0)
    for n in args.sizes:
        r = measure(n, args.target, args.dtype, rng)
        roofline = r["roofline"]
        print(
            f"{n:>6}{r['cycles']:>13,}{roofline:>11,.0f}{r['cycles'] / roofline:>7.2f}{r['bound']:>10,.0f}{r['bound'] / roofline:>12.2f}"
            f"{r['any_plan']:>10,.0f}{r['any_plan'] / roofline:>7.2f}"
            f"{r['compute']:>10,}{r['exchange']:>10,}{r['sync']:>6}{r['compile_s']:>11.2f}{r['error']:>10.1e}"
        )


if __name__ == "__main__":
    main()
