"""Iterative solvers run to convergence on the simulated chip (issue 29.4): cycles per iteration
and the share of sync and exchange, beside Louw & McIntosh-Smith's observation that on the IPU
sync dominates a naive halo exchange.

    .venv/bin/python bench/solvers.py [--target gc200] [--sizes 32 64]

- **CG**: conjugate gradient, matrix-free, on the 2-D Poisson problem (5-point Laplacian,
  zero Dirichlet border) of an n x n grid, until r.r <= 1e-8 b.b: each iteration a stencil
  (a tensor.pad and four windows read in place), two dot products to 0-d tensors, the step
  sizes alpha and beta scalar divides on one tile, three axpys reading them by broadcast; the
  loop is scf.while (Poplar's RepeatWhileTrue), its condition a device scalar.
- **Newton**: y <- (y + a / y) / 2 for sqrt(a) on n x n elements, until max |y^2 - a| <= 1e-5:
  one element-wise step and one max-reduction per iteration.

Each program returns its iteration count (an i32 carried through the loop); the solution is
checked against numpy in float64 (CG: the relative residual; Newton: the error against
np.sqrt). Cycles per iteration are the loop's: the whole run less the run's setup and exit, all
divided by the iterations taken. The shares are of the whole run's cycles.

Louw & McIntosh-Smith ("Using the Graphcore IPU for traditional HPC applications", 2021)
found synchronisation, not data movement, to dominate a 2-D stencil with a naive halo exchange
on the IPU. Here exchange leads instead. Measured on gc200 (2026-11-28; `--sizes 32 64`):

    solver  grid     iterations  cycles/iter  supersteps/iter  sync  exchange  compute  error
    cg       32x32           68        4,841             13.0   11%       57%      32%  9.5e-05
    cg       64x64          123        5,820             13.0    9%       57%      34%  9.8e-05
    newton   32x32            4        2,672              5.8    9%       53%      38%  1.7e-07
    newton   64x64            4        3,513              7.0    8%       54%      38%  1.7e-07

Each dot product sums its partial results on the one tile of its 0-d result (32x32: 1,024
partials, 4 KB into one tile, 1,024 cycles, twice an iteration) and the stencil's padded copy
takes 576 cycles; the condition's broadcast and sync 41.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from ipu_mlir.frontends import api

_ID2 = "affine_map<(d0, d1) -> (d0, d1)>"
_ALL = "affine_map<(d0, d1) -> ()>"


def _axpy(name: str, a: str, b: str, sign: str, scalar: str, n: int) -> str:
    """`name = a sign scalar * b` over the grid, `scalar` an f32 captured by the body."""
    op = "arith.addf" if sign == "+" else "arith.subf"
    return f"""    %{name} = linalg.generic {{indexing_maps = [{_ID2}, {_ID2}, {_ID2}], iterator_types = ["parallel", "parallel"]}}
        ins(%{a}, %{b} : tensor<{n}x{n}xf32>, tensor<{n}x{n}xf32>) outs(%e2 : tensor<{n}x{n}xf32>) {{
    ^bb0(%u: f32, %v: f32, %o: f32):
      %t = arith.mulf %{scalar}, %v : f32
      %w = {op} %u, %t : f32
      linalg.yield %w : f32
    }} -> tensor<{n}x{n}xf32>
"""


def _dot(name: str, a: str, b: str, n: int) -> str:
    """`name` (an f32) = sum of a * b over the grid, through a 0-d tensor."""
    return f"""    %{name}_t = linalg.generic {{indexing_maps = [{_ID2}, {_ID2}, {_ALL}], iterator_types = ["reduction", "reduction"]}}
        ins(%{a}, %{b} : tensor<{n}x{n}xf32>, tensor<{n}x{n}xf32>) outs(%z0 : tensor<f32>) {{
    ^bb0(%u: f32, %v: f32, %acc: f32):
      %t = arith.mulf %u, %v : f32
      %s = arith.addf %t, %acc : f32
      linalg.yield %s : f32
    }} -> tensor<f32>
    %{name} = tensor.extract %{name}_t[] : tensor<f32>
"""


def cg_program(n: int, max_iterations: int = 1000) -> str:
    grid = f"tensor<{n}x{n}xf32>"
    windows = "".join(
        f"    %{w} = tensor.extract_slice %pp[{i}, {j}] [{n}, {n}] [1, 1] : tensor<{n + 2}x{n + 2}xf32> to {grid}\n"
        for w, i, j in (("up", 0, 1), ("down", 2, 1), ("left", 1, 0), ("right", 1, 2))
    )
    body = (
        f"""    %pp = tensor.pad %p low[1, 1] high[1, 1] {{
    ^bb0(%i: index, %j: index):
      tensor.yield %zero : f32
    }} : {grid} to tensor<{n + 2}x{n + 2}xf32>
{windows}    %ap = linalg.generic {{indexing_maps = [{", ".join([_ID2] * 6)}], iterator_types = ["parallel", "parallel"]}}
        ins(%p, %up, %down, %left, %right : {grid}, {grid}, {grid}, {grid}, {grid}) outs(%e2 : {grid}) {{
    ^bb0(%c: f32, %nu: f32, %nd: f32, %nl: f32, %nr: f32, %o: f32):
      %c4 = arith.mulf %four, %c : f32
      %s1 = arith.subf %c4, %nu : f32
      %s2 = arith.subf %s1, %nd : f32
      %s3 = arith.subf %s2, %nl : f32
      %s4 = arith.subf %s3, %nr : f32
      linalg.yield %s4 : f32
    }} -> {grid}
"""
        + _dot("pap", "p", "ap", n)
        + "    %alpha = arith.divf %rs, %pap : f32\n"
        + _axpy("xn", "x", "p", "+", "alpha", n)
        + _axpy("rn", "r", "ap", "-", "alpha", n)
        + _dot("rsn", "rn", "rn", n)
        + "    %beta = arith.divf %rsn, %rs : f32\n"
        + _axpy("pn", "rn", "p", "+", "beta", n)
        + "    %kn = arith.addi %k, %one : i32\n"
    )
    carried = f"{grid}, {grid}, {grid}, f32, i32"
    return f"""func.func @main(%b: {grid}) -> ({grid}, tensor<i32>) {{
  %zero = arith.constant 0.0 : f32
  %four = arith.constant 4.0 : f32
  %tol = arith.constant 1.0e-8 : f32
  %k0 = arith.constant 0 : i32
  %one = arith.constant 1 : i32
  %kmax = arith.constant {max_iterations} : i32
  %e2 = tensor.empty() : {grid}
  %x0 = linalg.fill ins(%zero : f32) outs(%e2 : {grid}) -> {grid}
  %e0 = tensor.empty() : tensor<f32>
  %z0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
{_dot("rs0", "b", "b", n)}  %threshold = arith.mulf %rs0, %tol : f32
  %res:5 = scf.while (%x = %x0, %r = %b, %p = %b, %rs = %rs0, %k = %k0) : ({carried}) -> ({carried}) {{
    %big = arith.cmpf ogt, %rs, %threshold : f32
    %more = arith.cmpi slt, %k, %kmax : i32
    %go = arith.andi %big, %more : i1
    scf.condition(%go) %x, %r, %p, %rs, %k : {carried}
  }} do {{
  ^bb0(%x: {grid}, %r: {grid}, %p: {grid}, %rs: f32, %k: i32):
{body}    scf.yield %xn, %rn, %pn, %rsn, %kn : {carried}
  }}
  %iterations = tensor.from_elements %res#4 : tensor<i32>
  return %res#0, %iterations : {grid}, tensor<i32>
}}
"""


def newton_program(n: int, max_iterations: int = 100) -> str:
    grid = f"tensor<{n}x{n}xf32>"
    return f"""func.func @main(%a: {grid}) -> ({grid}, tensor<i32>) {{
  %zero = arith.constant 0.0 : f32
  %half = arith.constant 0.5 : f32
  %tol = arith.constant 1.0e-5 : f32
  %k0 = arith.constant 0 : i32
  %one = arith.constant 1 : i32
  %kmax = arith.constant {max_iterations} : i32
  %ones = arith.constant dense<1.0> : {grid}
  %e2 = tensor.empty() : {grid}
  %e0 = tensor.empty() : tensor<f32>
  %res:2 = scf.while (%y = %ones, %k = %k0) : ({grid}, i32) -> ({grid}, i32) {{
    %z0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
    %worst = linalg.generic {{indexing_maps = [{_ID2}, {_ID2}, {_ALL}], iterator_types = ["reduction", "reduction"]}}
        ins(%y, %a : {grid}, {grid}) outs(%z0 : tensor<f32>) {{
    ^bb0(%u: f32, %v: f32, %acc: f32):
      %sq = arith.mulf %u, %u : f32
      %d = arith.subf %sq, %v : f32
      %ad = math.absf %d : f32
      %m = arith.maximumf %ad, %acc : f32
      linalg.yield %m : f32
    }} -> tensor<f32>
    %err = tensor.extract %worst[] : tensor<f32>
    %big = arith.cmpf ogt, %err, %tol : f32
    %more = arith.cmpi slt, %k, %kmax : i32
    %go = arith.andi %big, %more : i1
    scf.condition(%go) %y, %k : {grid}, i32
  }} do {{
  ^bb0(%y: {grid}, %k: i32):
    %yn = linalg.generic {{indexing_maps = [{_ID2}, {_ID2}, {_ID2}], iterator_types = ["parallel", "parallel"]}}
        ins(%y, %a : {grid}, {grid}) outs(%e2 : {grid}) {{
    ^bb0(%u: f32, %v: f32, %o: f32):
      %q = arith.divf %v, %u : f32
      %s = arith.addf %u, %q : f32
      %h = arith.mulf %s, %half : f32
      linalg.yield %h : f32
    }} -> {grid}
    %kn = arith.addi %k, %one : i32
    scf.yield %yn, %kn : {grid}, i32
  }}
  %iterations = tensor.from_elements %res#1 : tensor<i32>
  return %res#0, %iterations : {grid}, tensor<i32>
}}
"""


def _poisson(u: np.ndarray) -> np.ndarray:
    padded = np.pad(u, 1)
    return 4 * u - padded[:-2, 1:-1] - padded[2:, 1:-1] - padded[1:-1, :-2] - padded[1:-1, 2:]


def measure(kind: str, n: int, target: str) -> dict:
    """Compiles and simulates one solver on an n x n grid; its figures and its error."""
    rng = np.random.default_rng(0)
    if kind == "cg":
        program, data = cg_program(n), rng.standard_normal((n, n)).astype(np.float32)
    else:
        program, data = newton_program(n), rng.uniform(0.5, 4.0, (n, n)).astype(np.float32)
    start = time.perf_counter()
    simulator = api.load_simulator(program, target)
    compiled = time.perf_counter() - start
    start = time.perf_counter()
    solution, iterations = simulator.run([data])
    simulated = time.perf_counter() - start
    profile, iterations = simulator.profile, int(iterations)
    if kind == "cg":
        error = float(np.linalg.norm(_poisson(solution.astype(np.float64)) - data) / np.linalg.norm(data))
    else:
        error = float(np.abs(solution - np.sqrt(data.astype(np.float64))).max())
    loop = [s for s in profile.steps if s.repeat in (iterations, iterations + 1) and iterations > 1]
    loop_cycles = sum(s.cycles * s.repeat for s in loop)
    return {
        "kind": kind,
        "n": n,
        "target": target,
        "iterations": iterations,
        "cycles": profile.cycles,
        "cycles_per_iteration": loop_cycles / max(iterations, 1),
        "sync_share": profile.sync_cycles / profile.cycles,
        "exchange_share": profile.exchange_cycles / profile.cycles,
        "compute_share": profile.compute_cycles / profile.cycles,
        "supersteps_per_iteration": sum(s.repeat for s in loop) / max(iterations, 1),
        "error": error,
        "compile_seconds": compiled,
        "simulate_seconds": simulated,
    }


def rows(quick: bool, row) -> list[dict]:
    """bench/run.py's `solvers` section: CG and Newton to convergence on gc200."""
    found = []
    for kind, what in (("cg", "CG to convergence (2-D Poisson)"), ("newton", "Newton sqrt to convergence")):
        for n in (16,) if quick else (32, 64):
            r = measure(kind, n, "gc200")
            figure = (
                f"{r['iterations']} iterations, {r['cycles_per_iteration']:,.0f} cycles/iteration, "
                f"sync {r['sync_share']:.0%}, exchange {r['exchange_share']:.0%}, error {r['error']:.1e}"
            )
            found.append(row("solvers", what, f"{n}x{n} on gc200", figure, None, "numpy (float64)", **r))
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--target", default="gc200")
    parser.add_argument("--sizes", type=int, nargs="+", default=[32, 64])
    args = parser.parse_args()
    print("solver  grid     iterations  cycles/iter  supersteps/iter  sync  exchange  compute  error     compile  simulate")
    for kind in ("cg", "newton"):
        for n in args.sizes:
            r = measure(kind, n, args.target)
            print(
                f"{kind:7} {n:3}x{n:<4} {r['iterations']:10}  {r['cycles_per_iteration']:11,.0f}  {r['supersteps_per_iteration']:15.1f}"
                f"  {r['sync_share']:4.0%}  {r['exchange_share']:8.0%}  {r['compute_share']:7.0%}  {r['error']:.1e}"
                f"  {r['compile_seconds']:6.1f} s  {r['simulate_seconds']:6.1f} s"
            )


if __name__ == "__main__":
    main()
