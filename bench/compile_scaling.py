"""Compile time and IR size against model depth and tile count (issue 3, performance).

    .venv/bin/python bench/compile_scaling.py [--layers 25 50 100] [--targets tiny gc2 gc200]

An MLP of `layers` blocks (matmul 128x256 @ 256x256, bias add, ReLU), at L1, goes through
the default pipeline's passes after conversion (plan, schedule, fuse, merge, memory plan,
verify) for each target; the table shows wall time, the ratio to the previous row, the op
count of the L3 module and the time per pass.
"""

from __future__ import annotations

import argparse
import time

from mlir import ir

from ipu_mlir.dialects import make_context
from ipu_mlir.lowering.pass_registry import build_pass_manager

BATCH, WIDTH = 128, 256


def mlp(layers: int, target: str) -> str:
    lines = [
        "#id = affine_map<(d0, d1) -> (d0, d1)>",
        "#col = affine_map<(d0, d1) -> (d1)>",
        f'module attributes {{ipu.target = "{target}"}} {{',
        f"func.func @main(%x: tensor<{BATCH}x{WIDTH}xf32>) -> tensor<{BATCH}x{WIDTH}xf32> {{",
        "  %zero = arith.constant 0.0 : f32",
        f"  %empty = tensor.empty() : tensor<{BATCH}x{WIDTH}xf32>",
    ]
    value = "%x"
    for i in range(layers):
        t, w = f"tensor<{BATCH}x{WIDTH}xf32>", f"tensor<{WIDTH}x{WIDTH}xf32>"
        lines += [
            f"  %w{i} = arith.constant dense<0.01> : {w}",
            f"  %b{i} = arith.constant dense<0.5> : tensor<{WIDTH}xf32>",
            f'  %m{i} = "ipu.matmul"({value}, %w{i}) : ({t}, {w}) -> {t}',
            f'  %y{i} = linalg.generic {{indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]}}'
            f" ins(%m{i}, %b{i} : {t}, tensor<{WIDTH}xf32>) outs(%empty : {t}) {{",
            "  ^bb0(%a: f32, %b: f32, %o: f32):",
            "    %s = arith.addf %a, %b : f32",
            "    %r = arith.maximumf %s, %zero : f32",
            "    linalg.yield %r : f32",
            f"  }} -> {t}",
        ]
        value = f"%y{i}"
    lines += [f"  return {value} : tensor<{BATCH}x{WIDTH}xf32>", "}", "}"]
    return "\n".join(lines)


STEPS = ("ipu-plan", "ipu-schedule", "ipu-fuse-compute-sets", "ipu-merge-supersteps", "ipu-memory-plan", "ipu-verify")


def compile_seconds(layers: int, target: str) -> tuple[float, int, dict[str, float]]:
    """Seconds for the default pipeline after conversion (the input is L1 already), the L3 op
    count, and seconds per pass."""
    per_pass = {}
    with make_context() as context:
        module = ir.Module.parse(mlp(layers, target))
        for step in STEPS:
            start = time.perf_counter()
            build_pass_manager(f"builtin.module({step})", context).run(module.operation)
            per_pass[step] = time.perf_counter() - start
        seconds = sum(per_pass.values())
        ops = 0

        def count(op):
            nonlocal ops
            ops += 1
            return ir.WalkResult.ADVANCE

        module.operation.walk(count)
        return seconds, ops, per_pass


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layers", type=int, nargs="+", default=[25, 50, 100])
    parser.add_argument("--targets", nargs="+", default=["gc2", "gc200"])
    args = parser.parse_args()
    print(f"{'target':<8}{'layers':>8}{'seconds':>10}{'x prev':>8}{'L3 ops':>9}{'ops/layer':>10}  seconds per pass")
    for target in args.targets:
        previous = None
        for layers in args.layers:
            seconds, ops, per_pass = compile_seconds(layers, target)
            ratio = f"{seconds / previous:.2f}" if previous else "-"
            passes = " ".join(f"{name.removeprefix('ipu-')}={t:.2f}" for name, t in per_pass.items())
            print(f"{target:<8}{layers:>8}{seconds:>10.2f}{ratio:>8}{ops:>9}{ops / layers:>10.1f}  {passes}")
            previous = seconds


if __name__ == "__main__":
    main()
