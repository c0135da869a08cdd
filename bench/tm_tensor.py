"""torch-mlir's TMTensor ops (cumsum, sort, topk, scatter_add, index_put, index_add) compiled
from PyTorch and simulated: compile time, simulation time (the first, checked run), estimated
cycles and the error against PyTorch.

    .venv/bin/python bench/tm_tensor.py [--target gc200] [--only cumsum] [--linalg-only]

`ipu-convert-tm-tensor` makes sort quadratic (n^2 per sorted row), a scan either a masked
reduction or log2(n) shifted adds, by size, and a scatter `ipu.scatter`, linear in the
updates; this shows what that costs at sizes models use. `--linalg-only` compiles the
reference's form instead, where a scatter compares every update with every position (the
form before `ipu.scatter`); it skips scatters of more than `QUADRATIC_LIMIT` points, which
need more memory than this machine has. On gc200 (2026-11-24, a shared 2-core machine at a
load of 5-7; simulate is the first, checked run):

    case                               linalg-only: cycles  simulate   ipu.scatter: cycles  simulate
    scatter_add 64x512 <- 64x128                 1,017,307    21.3 s                14,196     0.5 s
    scatter_add 128x512 <- 128x256     killed at 21 GB of memory                    30,850     0.8 s
    index_put acc 4096x64 <- 2048          (skipped, 537M points)                    7,341    0.05 s
    index_put 4096x64 <- 2048              (skipped, 537M points)                    8,869     0.1 s
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch

from ipu_mlir.frontends import torch as ipu_torch
from ipu_mlir.lowering.pass_registry import build_pass_manager
from ipu_mlir.target.diagnostics import IpuError


class Cumsum(torch.nn.Module):
    def forward(self, x):
        return torch.cumsum(x, dim=-1)


class Sort(torch.nn.Module):
    def forward(self, x):
        return torch.sort(x, dim=-1)


class Topk(torch.nn.Module):
    def forward(self, x):
        return torch.topk(x, k=5)


class ScatterAdd(torch.nn.Module):
    def forward(self, x, index, src):
        return x.scatter_add(1, index, src)


class IndexPut(torch.nn.Module):
    def __init__(self, accumulate: bool):
        super().__init__()
        self.accumulate = accumulate

    def forward(self, x, rows, values):
        return x.index_put((rows,), values, accumulate=self.accumulate)


# Under --linalg-only, scatters of more updates x positions than this are skipped: 128x512 <-
# 128x256 (2.1G) was killed at 21 GB; 64x512 <- 64x128 (268M) runs.
QUADRATIC_LIMIT = 300_000_000


def quadratic_points(model: torch.nn.Module, inputs: tuple) -> int:
    """The points of a scatter's quadratic form: every update (index) with every element of
    the original; 0 for the other cases."""
    return inputs[1].numel() * inputs[0].numel() if isinstance(model, ScatterAdd | IndexPut) else 0


def cases() -> list[tuple[str, torch.nn.Module, tuple[torch.Tensor, ...]]]:
    torch.manual_seed(0)
    return [
        ("cumsum 3x8", Cumsum(), (torch.randn(3, 8),)),
        ("cumsum 8x128", Cumsum(), (torch.randn(8, 128),)),
        ("cumsum 8x1024", Cumsum(), (torch.randn(8, 1024),)),
        ("cumsum 1x4096", Cumsum(), (torch.randn(1, 4096),)),
        ("sort 8x1024", Sort(), (torch.randn(8, 1024),)),
        ("topk5 1x4096", Topk(), (torch.randn(1, 4096),)),
        ("scatter_add 64x512 <- 64x128", ScatterAdd(), (torch.randn(64, 512), torch.randint(0, 512, (64, 128)), torch.randn(64, 128))),
        ("scatter_add 128x512 <- 128x256", ScatterAdd(), (torch.randn(128, 512), torch.randint(0, 512, (128, 256)), torch.randn(128, 256))),
        ("index_put acc 4096x64 <- 2048", IndexPut(True), (torch.randn(4096, 64), torch.randint(0, 4096, (2048,)), torch.randn(2048, 64))),
        ("index_put 4096x64 <- 2048", IndexPut(False), (torch.randn(4096, 64), torch.randperm(4096)[:2048], torch.randn(2048, 64))),
    ]


def measure(name: str, model: torch.nn.Module, inputs: tuple, target: str, linalg_only: bool = False) -> dict:
    """Compile and simulation seconds, estimated cycles and the largest error against PyTorch
    of one case, or the compiler's refusal (e.g. a rank generic of topk over 4,096 on tiny's
    64 KiB tiles). `linalg_only`: the TMTensor ops rewritten as for the reference."""
    start = time.perf_counter()
    try:
        imported = ipu_torch.export(model, *inputs)
        if linalg_only:
            build_pass_manager("builtin.module(ipu-convert-tm-tensor{linalg-only=true})", imported.context).run(imported.operation)
        compiled = ipu_torch.CompiledModule(ipu_torch.compile_program(imported, target, model), target, imported)
    except IpuError as error:
        return {"case": name, "target": target, "refused": error.message.splitlines()[0]}
    compiled_at = time.perf_counter()
    got = compiled(*inputs)
    ran_at = time.perf_counter()
    expected = model(*inputs)
    got, expected = (got if isinstance(got, tuple) else (got,)), (expected if isinstance(expected, tuple) else (expected,))
    error = max(float(np.max(np.abs(g.numpy().astype(np.float64) - e.numpy().astype(np.float64)))) for g, e in zip(got, expected))
    return {
        "case": name,
        "target": target,
        "compile_s": compiled_at - start,
        "simulate_s": ran_at - compiled_at,
        "cycles": compiled.profile.cycles,
        "error": error,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--target", default="gc200")
    parser.add_argument("--only", default="", help="run only the cases whose name contains this")
    parser.add_argument("--linalg-only", action="store_true", help="compile the reference's form (scatters quadratic)")
    args = parser.parse_args()
    for name, model, inputs in cases():
        if args.only not in name:
            continue
        if args.linalg_only and quadratic_points(model, inputs) > QUADRATIC_LIMIT:
            print(f"{args.target} {name:30s} skipped: {quadratic_points(model, inputs):,} points in the quadratic form", flush=True)
            continue
        r = measure(name, model, inputs, args.target, args.linalg_only)
        if "refused" in r:
            print(f"{args.target} {name:30s} refused: {r['refused']}", flush=True)
            continue
        print(
            f"{args.target} {name:30s} compile {r['compile_s']:5.1f} s  simulate {r['simulate_s']:5.1f} s  "
            f"cycles {r['cycles']:>10,}  max |error| {r['error']:.1e}",
            flush=True,
        )


if __name__ == "__main__":
    main()
