"""Matmul vertex groups against BLAS calls on whole operands (issue 12): where a matmul-heavy
program's steady run loses to numpy.

    .venv/bin/python bench/matmul_tiles.py [--model mlp|bert_encoder|gpt2|...] [--size 224]
        [--layers 1] [--repeat 7] [--cache /tmp/ipu-speed] [--target gc200]

`mlp` is bench/simulator_vs_numpy.py's 12 x (256x512 @ 512x512 + bias + ReLU); the others are
zoo models, compiled and cached as bench/simulator_speed.py does. Each step of a steady run is
then timed alone on its bound views (CPU time, best of `--repeat`; alone, its operands are
warmer in cache than inside a run):
- every `ipu.matmul` vertex group writing in place: its tiles' product (M x K x N, one BLAS
  call each in numpy's matmul loop), their count and rate; against `shared`, the same products
  with each operand used once along the grid axes that share it (the m tiles share rhs, the n
  tiles lhs): per index of the other axes (k pieces, batch) one (M m-tiles x K) @ (K x N
  n-tiles) call, alone and with its gather and its scatter into the tiles' layout. The calls
  alone are the rate BLAS reaches when it packs each operand once; the scatter is what the
  group would pay for it (checked against the group's products);
- the groups combining the partial sums (`matmul_combine...`) and the copies moving them.

On gc200 (2 cores shared by several jobs: compare within a row, not across runs), ms:

| program | matmul groups | shared calls | with gather + scatter | combine | partial copies |
|---|---|---|---|---|---|
| MLP | 37.1 | 24.1 | 40.1 | 12.4 | 4.5 |
| BERT-base encoder, 1 layer | 84.5 | 52.8 | 83.7 | 12.6 | 13.0 |

The tiles' products reach 15-29 GMAC/s where one call of the whole matmul reaches 45 (quiet
machine): each call packs both its operands again (lhs once per n tile sharing it), for few
multiply-adds (K of 32-112, N of 15-32). Packing each operand once gains a third; gathering
the operands and scattering the products (rows of 15-32 floats) costs that again, except on
the smallest tiles (BERT's 28 x 64 x 15 attention products, 3.2 -> 1.9 ms) and BERT's FFN
with its 102 n tiles (22.0 -> 20.0 ms). Neither the order of the calls nor either operand's
layout (numpy passes transposes to BLAS: the same bytes) helps. Fewer k pieces would (a plan
change: the MLP's 11 pieces of 48 as one of 512, 2.8 -> 1.9 ms a layer; BERT's FFN 10%).
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # before numpy loads its BLAS

import argparse  # noqa: E402
import math  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
from simulator_speed import program_file  # noqa: E402
from simulator_vs_numpy import model as mlp_text  # noqa: E402

from ipu_mlir.dialects.ops.arrays import assign  # noqa: E402
from ipu_mlir.frontends import zoo  # noqa: E402
from ipu_mlir.lowering.pipelines import compile_module  # noqa: E402
from ipu_mlir.runtime import steps  # noqa: E402
from ipu_mlir.runtime.api import load_module  # noqa: E402
from ipu_mlir.runtime.simulator import Simulator  # noqa: E402


def cpu(repeat: int, function, *arguments) -> float:
    """The best CPU time of `repeat` calls of `function(*arguments)`, in seconds."""
    best = math.inf
    for _ in range(repeat):
        start = time.process_time()
        function(*arguments)
        best = min(best, time.process_time() - start)
    return best


def load(args: argparse.Namespace) -> tuple[Simulator, list[np.ndarray]]:
    if args.model == "mlp":
        module = load_module(mlp_text(12, 256, 512, args.target))
        with module.context:
            compile_module(module)
        simulator = Simulator(module)
        rng = np.random.default_rng(0)
        arrays = [(rng.standard_normal(shape, dtype=np.float32) / np.sqrt(512)).astype(dtype) for shape, dtype in simulator.arguments]
        return simulator, arrays
    layers = args.layers if zoo.MODELS[args.model].kind == "text" else None
    module, inputs = zoo.build(args.model, size=args.size, layers=layers)
    simulator = Simulator(load_module(str(program_file(args.model, args, module, inputs))))
    return simulator, [value.detach().numpy() for value in inputs]


def run_steps(simulator: Simulator, arrays: list[np.ndarray]) -> list:
    """The copies and vertex groups of one steady run, in run order, each once."""
    seen: dict[int, object] = {}
    originals = {cls: cls.run for cls in (steps.Copy, steps.VertexGroup)}

    def recording(run):
        def wrapper(self, *args):
            seen.setdefault(id(self), self)
            run(self, *args)

        return wrapper

    try:
        for cls, run in originals.items():
            cls.run = recording(run)
        simulator.run(arrays)
    finally:
        for cls, run in originals.items():
            cls.run = run
    return list(seen.values())


class Shared:
    """A group's tiles' products with each operand used once: the grid axes only lhs varies
    along (m tiles) join its rows, those only rhs varies along (n tiles) join its columns, the
    others (k pieces, batch) stay a batch of BLAS calls (`gemm`). A call gathers both operands
    so, multiplies and scatters the products into the tiles' (*grid, M, N) layout."""

    def __init__(self, lhs: np.ndarray, rhs: np.ndarray):
        grid = lhs.ndim - 2
        sizes = np.broadcast_shapes(lhs.shape[:grid], rhs.shape[:grid])
        rows = [a for a in range(grid) if rhs.shape[a] == 1 < lhs.shape[a]]
        columns = [a for a in range(grid) if lhs.shape[a] == 1 < rhs.shape[a]]
        batch = [a for a in range(grid) if a not in rows + columns]
        (m, k), n = lhs.shape[grid:], rhs.shape[-1]
        count = [math.prod(sizes[a] for a in axes) for axes in (batch, rows, columns)]
        # lhs as (batch.., rows.., M, K), rhs as (batch.., K, columns.., N): once per tile sharing them
        kept = [a for a in range(grid) if a not in columns]
        self.lhs = lhs[tuple(0 if a in columns else slice(None) for a in range(grid))].transpose(
            *[kept.index(a) for a in batch + rows], len(kept), len(kept) + 1
        )
        kept = [a for a in range(grid) if a not in rows]
        self.rhs = rhs[tuple(0 if a in rows else slice(None) for a in range(grid))].transpose(
            *[kept.index(a) for a in batch], len(kept), *[kept.index(a) for a in columns], len(kept) + 1
        )
        self.a = np.empty(self.lhs.shape, lhs.dtype)
        self.b = np.empty(self.rhs.shape, rhs.dtype)
        self.calls = (self.a.reshape(count[0], count[1] * m, k), self.b.reshape(count[0], k, count[2] * n))
        self.c = np.empty((count[0], count[1] * m, count[2] * n), lhs.dtype)
        # the products' (batch.., rows.., M, columns.., N) as the tiles' (*grid, M, N)
        order = batch + rows + [grid] + columns + [grid + 1]
        split = [sizes[a] for a in batch + rows] + [m] + [sizes[a] for a in columns] + [n]
        self.products = self.c.reshape(split).transpose([order.index(a) for a in range(grid + 2)])
        self.out = np.empty((*sizes, m, n), lhs.dtype)

    def gemm(self) -> None:
        np.matmul(*self.calls, out=self.c)

    def __call__(self) -> np.ndarray:
        assign(self.a, self.lhs)
        assign(self.b, self.rhs)
        self.gemm()
        assign(self.out, self.products)
        return self.out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="mlp", choices=["mlp", *sorted(zoo.MODELS)])
    parser.add_argument("--size", type=int, default=224)
    parser.add_argument("--layers", type=int, default=1, help="transformers' layer count")
    parser.add_argument("--target", default="gc200")
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--cache", type=Path, default=Path("/tmp/ipu-speed"))
    args = parser.parse_args()
    simulator, arrays = load(args)
    for _ in range(2):  # the checked run, then one on the later plan
        simulator.run(arrays)
    run = cpu(args.repeat, simulator.run, arrays)
    print(f"{args.model}: {simulator.profile.cycles:,} estimated cycles; steady run {run * 1e3:.1f} ms CPU")
    print("| group | tiles | tile M x K x N | ms | GMAC/s | shared calls ms | GMAC/s | with gather + scatter ms |")
    print("|---|---|---|---|---|---|---|---|")
    totals = dict(matmul=0.0, calls=0.0, shared=0.0, combine=0.0, copies=0.0)
    for step in run_steps(simulator, arrays):
        if isinstance(step, steps.Copy):
            if "partials" in step.dest.name:
                totals["copies"] += cpu(args.repeat, step.run, [], False)
            continue
        if step.codelet.startswith("matmul_combine"):
            totals["combine"] += cpu(args.repeat, step.run, False)
            continue
        if not step.codelet.startswith("matmul_v") or step.direct is None:
            continue
        lhs, rhs = step.views[0]
        seconds = cpu(args.repeat, step.run, False)
        shared = Shared(lhs, rhs)
        error = np.abs(shared() - step.direct).max() / max(1e-30, float(np.abs(step.direct).max()))
        assert error < 1e-5, f"@{step.codelet}: the shared products differ from the group's by {error:.1e}"
        times = seconds, cpu(args.repeat, shared.gemm), cpu(args.repeat, shared)
        for key, value in zip(("matmul", "calls", "shared"), times):
            totals[key] += value
        (m, k), n = lhs.shape[-2:], rhs.shape[-1]
        macs = step.direct[..., 0, 0].size * m * k * n
        print(
            f"| {step.codelet} | {step.direct[..., 0, 0].size} | {m} x {k} x {n} | {times[0] * 1e3:.2f} | {macs / times[0] / 1e9:.1f} | "
            f"{times[1] * 1e3:.2f} | {macs / times[1] / 1e9:.1f} | {times[2] * 1e3:.2f} |"
        )
    print(
        f"matmul groups {totals['matmul'] * 1e3:.1f} ms (shared calls {totals['calls'] * 1e3:.1f}, with gather + scatter "
        f"{totals['shared'] * 1e3:.1f}), combining partial sums {totals['combine'] * 1e3:.1f} ms, copying them "
        f"{totals['copies'] * 1e3:.1f} ms"
    )


if __name__ == "__main__":
    main()
