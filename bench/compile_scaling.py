"""Compile time and IR size against model depth and tile count (issues 3 and 11, performance).

    .venv/bin/python bench/compile_scaling.py [--layers 25 50 100] [--targets tiny gc2 gc200]
    .venv/bin/python bench/compile_scaling.py --model bert_encoder [--layers 1 2 4 8 12]

An MLP of `layers` blocks (matmul 128x256 @ 256x256, bias add, ReLU), at L1, goes through
the default pipeline's passes after conversion (plan, schedule, fuse, merge, memory plan,
verify) for each target; the table shows CPU seconds, the ratio to the previous row, the op
count of the L3 module and the time per pass.

`--model bert_encoder`: BERT-base's encoder (hidden 768, seq 128) of `layers` layers, exported
by torch-mlir (timed apart), then every pass of the default pipeline in turn, on gc200 unless
`--targets` says otherwise. Compile seconds are wall and CPU; the ratio per doubling of the
layers between rows ("per 2x", 2.0 is linear), the verifier's share and the seconds per pass
are CPU seconds, steadier than wall time on a shared machine.
"""

from __future__ import annotations

import argparse
import gc
import math
import re
import time

from mlir import ir

from ipu_mlir.dialects import make_context
from ipu_mlir.frontends import torch as torch_frontend
from ipu_mlir.frontends import zoo
from ipu_mlir.lowering.pass_registry import build_pass_manager
from ipu_mlir.lowering.pipelines import default_pipeline

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


def op_count(module: ir.Module) -> int:
    ops = 0

    def count(op):
        nonlocal ops
        ops += 1
        return ir.WalkResult.ADVANCE

    module.operation.walk(count)
    return ops


def compile_seconds(layers: int, target: str) -> tuple[float, int, dict[str, float]]:
    """CPU seconds for the default pipeline after conversion (the input is L1 already), the L3
    op count, and CPU seconds per pass (steadier than wall time on a shared machine)."""
    per_pass = {}
    with make_context() as context:
        module = ir.Module.parse(mlp(layers, target))
        gc.collect()  # a caller's garbage (bench/run.py's loaded models) is not this compile's
        for step in STEPS:
            start = time.process_time()
            build_pass_manager(f"builtin.module({step})", context).run(module.operation)
            per_pass[step] = time.process_time() - start
        return sum(per_pass.values()), op_count(module), per_pass


def pipeline_steps(target: str) -> list[str]:
    """The default pipeline's passes, each with its options."""
    inner = default_pipeline(target).removeprefix("builtin.module(").removesuffix(")")
    return re.split(r",(?![^{]*\})", inner)


def bert_seconds(layers: int, target: str, **options) -> dict:
    """Export and compile seconds (wall and CPU) of the BERT-base encoder of `layers` layers
    (`options`: zoo.build's, e.g. a smaller hidden size), with the L3 op count and CPU seconds
    per pass."""
    module, inputs = zoo.build("bert_encoder", layers=layers, **options)
    start = time.perf_counter()
    imported = torch_frontend.export(module, *inputs)
    export = time.perf_counter() - start
    gc.collect()  # the export's garbage is not the compile's
    per_pass, wall, cpu = {}, time.perf_counter(), time.process_time()
    with imported.context:  # as compile_program runs it: passes build attributes
        for step in pipeline_steps(target):
            start = time.process_time()
            build_pass_manager(f"builtin.module({step})", imported.context).run(imported.operation)
            per_pass[step.split("{")[0]] = time.process_time() - start
    return {
        "export": export,
        "seconds": time.perf_counter() - wall,
        "cpu": time.process_time() - cpu,
        "ops": op_count(imported),
        "per_pass": per_pass,
    }


def bert_table(layers_list: list[int], targets: list[str]) -> None:
    print(f"{'target':<8}{'layers':>7}{'export s':>10}{'compile s':>11}{'cpu s':>8}{'per 2x':>8}{'L3 ops':>9}{'verify':>8}  slowest passes")
    for target in targets:
        previous = None
        for layers in layers_list:
            row = bert_seconds(layers, target)
            per_doubling = f"{(row['cpu'] / previous[1]) ** (1 / math.log2(layers / previous[0])):.2f}" if previous else "-"
            verify = row["per_pass"]["ipu-verify"] / row["cpu"]
            slowest = sorted(row["per_pass"].items(), key=lambda item: -item[1])[:4]
            passes = " ".join(f"{name.removeprefix('ipu-')}={t:.2f}" for name, t in slowest)
            print(
                f"{target:<8}{layers:>7}{row['export']:>10.1f}{row['seconds']:>11.2f}{row['cpu']:>8.2f}{per_doubling:>8}"
                f"{row['ops']:>9}{verify:>8.0%}  {passes}",
                flush=True,
            )
            previous = (layers, row["cpu"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", choices=["mlp", "bert_encoder"], default="mlp")
    parser.add_argument("--layers", type=int, nargs="+", default=None, help="default: 25 50 100 (mlp), 1 2 4 8 12 (bert_encoder)")
    parser.add_argument("--targets", nargs="+", default=None, help="default: gc2 gc200 (mlp), gc200 (bert_encoder)")
    args = parser.parse_args()
    if args.model == "bert_encoder":
        bert_table(args.layers or [1, 2, 4, 8, 12], args.targets or ["gc200"])
        return
    print(f"{'target':<8}{'layers':>8}{'seconds':>10}{'x prev':>8}{'L3 ops':>9}{'ops/layer':>10}  seconds per pass")
    for target in args.targets or ["gc2", "gc200"]:
        previous = None
        for layers in args.layers or [25, 50, 100]:
            seconds, ops, per_pass = compile_seconds(layers, target)
            ratio = f"{seconds / previous:.2f}" if previous else "-"
            passes = " ".join(f"{name.removeprefix('ipu-')}={t:.2f}" for name, t in per_pass.items())
            print(f"{target:<8}{layers:>8}{seconds:>10.2f}{ratio:>8}{ops:>9}{ops / layers:>10.1f}  {passes}")
            previous = seconds


if __name__ == "__main__":
    main()
