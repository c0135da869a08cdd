"""Data-dependent control flow in the simulator (runtime/steps.py If and While): the profile
counts each block as often as it ran, a loop that never ends stops with an error, and
bench/solvers.py's solvers converge to numpy's answers."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

from ipu_mlir.frontends import api
from ipu_mlir.runtime import steps
from ipu_mlir.runtime.memory import SimulationError

REPO = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("solvers", REPO / "bench" / "solvers.py")
solvers = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(solvers)

# y <- y / 2 while the sum of y is above 1: the number of halvings depends on the input.
HALVE = """
#id = affine_map<(d0) -> (d0)>
#all = affine_map<(d0) -> ()>
func.func @main(%x: tensor<64xf32>) -> (tensor<64xf32>, tensor<i32>) {
  %zero = arith.constant 0.0 : f32
  %limit = arith.constant 1.0 : f32
  %half = arith.constant 0.5 : f32
  %k0 = arith.constant 0 : i32
  %one = arith.constant 1 : i32
  %e = tensor.empty() : tensor<64xf32>
  %e0 = tensor.empty() : tensor<f32>
  %r:2 = scf.while (%y = %x, %k = %k0) : (tensor<64xf32>, i32) -> (tensor<64xf32>, i32) {
    %z = linalg.fill ins(%zero : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
    %s = linalg.generic {indexing_maps = [#id, #all], iterator_types = ["reduction"]} ins(%y : tensor<64xf32>) outs(%z : tensor<f32>) {
    ^bb0(%v: f32, %acc: f32):
      %a = arith.addf %v, %acc : f32
      linalg.yield %a : f32
    } -> tensor<f32>
    %sum = tensor.extract %s[] : tensor<f32>
    %go = arith.cmpf ogt, %sum, %limit : f32
    scf.condition(%go) %y, %k : tensor<64xf32>, i32
  } do {
  ^bb0(%y: tensor<64xf32>, %k: i32):
    %h = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%y : tensor<64xf32>) outs(%e : tensor<64xf32>) {
    ^bb0(%v: f32, %o: f32):
      %w = arith.mulf %v, %half : f32
      linalg.yield %w : f32
    } -> tensor<64xf32>
    %k1 = arith.addi %k, %one : i32
    scf.yield %h, %k1 : tensor<64xf32>, i32
  }
  %t = tensor.from_elements %r#1 : tensor<i32>
  return %r#0, %t : tensor<64xf32>, tensor<i32>
}
"""


def _halvings(x: np.ndarray) -> int:
    k = 0
    while x.sum(dtype=np.float32) > 1:
        x, k = x * np.float32(0.5), k + 1
    return k


def test_while_runs_as_often_as_its_condition_says_and_the_profile_counts_it() -> None:
    simulator = api.load_simulator(HALVE, "tiny")
    assert simulator.profile.cycles > 0  # before a run: the blocks count for nothing yet
    profiles = []
    for scale in (1.0, 8.0, 64.0):
        x = np.full(64, scale, np.float32)
        y, k = simulator.run([x])
        assert int(k) == _halvings(x)
        np.testing.assert_array_equal(y, x * np.float32(0.5) ** int(k))
        profiles.append((int(k), simulator.profile.cycles, simulator.profile.supersteps))
    (k1, c1, s1), (k2, c2, s2), (k3, c3, s3) = profiles
    assert k1 < k2 < k3
    # Each iteration adds the same cycles and supersteps: the body's and one more condition's.
    assert (c3 - c2) * (k2 - k1) == (c2 - c1) * (k3 - k2) and c2 > c1
    assert (s3 - s2) * (k2 - k1) == (s2 - s1) * (k3 - k2) and s2 > s1


def test_a_loop_whose_condition_stays_true_stops_with_an_error(monkeypatch) -> None:
    monkeypatch.setattr(steps, "MAX_WHILE_ITERATIONS", 5)
    simulator = api.load_simulator(HALVE, "tiny")
    with pytest.raises(SimulationError, match="ran 5 iterations without its condition turning false"):
        simulator.run([np.full(64, 1e6, np.float32)])


@pytest.mark.parametrize("kind", ["cg", "newton"])
def test_solvers_converge_to_numpys_answer(kind: str) -> None:
    r = solvers.measure(kind, 8, "tiny")
    assert 1 < r["iterations"] < (64 if kind == "cg" else 20)
    assert r["error"] < (2e-4 if kind == "cg" else 1e-5)
    assert 0 < r["cycles_per_iteration"] < r["cycles"]
    assert abs(r["sync_share"] + r["exchange_share"] + r["compute_share"] - 1) < 1e-9
