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
least, over F_max >= N^3 / tiles, of F_max at the model's matmul rate plus half that traffic.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
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


def lower_bound(n: int, target, dtype: str = "f32") -> float:
    """Cycles no one-pass plan of an N^3 matmul can beat under the cost model (module doc)."""
    fmas = n**3 / target.num_tiles
    compute = cost_model.VERTEX_OVERHEAD_CYCLES + fmas / (target.fma_per_cycle(dtype) * cost_model.MATMUL_EFFICIENCY)
    elements = 3 * fmas ** (2 / 3) - 3 * n**2 / target.num_tiles
    return compute + max(0.0, elements) * BYTES[dtype] / target.exchange_bytes_per_cycle


def any_plan_bound(n: int, target, dtype: str = "f32") -> float:
    """Cycles no plan of an N^3 matmul, in any number of supersteps, can beat under the cost
    model (module doc)."""
    rate = target.fma_per_cycle(dtype) * cost_model.MATMUL_EFFICIENCY
    busiest = np.geomspace(n**3 / target.num_tiles, n**3, 4096)  # FMAs on the busiest tile
    moved = np.maximum(0.0, 3 * n**3 / np.cbrt(busiest) - 3 * n**2) / target.num_tiles
    cycles = cost_model.VERTEX_OVERHEAD_CYCLES + busiest / rate + moved * BYTES[dtype] / target.exchange_bytes_per_cycle / 2
    return float(cycles.min())


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
