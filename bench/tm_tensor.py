"""torch-mlir's TMTensor ops (cumsum, sort, topk, scatter_add) compiled from PyTorch and
simulated: compile time, simulation time, estimated cycles and the error against PyTorch.

    .venv/bin/python bench/tm_tensor.py [--target gc200] [--only cumsum]

`ipu-convert-tm-tensor` makes sort and scatter quadratic (n^2 per sorted row, updates x
positions) and a scan either a masked reduction or log2(n) shifted adds, by size; this shows
what that costs at sizes models use.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch

from ipu_mlir.frontends import torch as ipu_torch
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
    ]


def measure(name: str, model: torch.nn.Module, inputs: tuple, target: str) -> dict:
    """Compile and simulation seconds, estimated cycles and the largest error against PyTorch
    of one case, or the compiler's refusal (e.g. a rank generic of topk over 4,096 on tiny's
    64 KiB tiles)."""
    start = time.perf_counter()
    try:
        compiled = ipu_torch.compile(model, *inputs, target=target)
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
    args = parser.parse_args()
    for name, model, inputs in cases():
        if args.only not in name:
            continue
        r = measure(name, model, inputs, args.target)
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
