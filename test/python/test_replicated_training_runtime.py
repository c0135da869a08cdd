"""runtime/replicated.py without torch: replicas meeting at an all-reduce, checked against numpy,
and a replica that fails ending the run with its own error, not a hang."""

from __future__ import annotations

import numpy as np
import pytest

from ipu_mlir.frontends import api
from ipu_mlir.runtime.replicated import ReplicatedSimulator
from ipu_mlir.target import load_target
from ipu_mlir.target.diagnostics import IpuError

PROGRAM = """
func.func @main(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %e = tensor.empty() : tensor<8x16xf32>
  %y = linalg.exp ins(%x : tensor<8x16xf32>) outs(%e : tensor<8x16xf32>) -> tensor<8x16xf32>
  %r = "ipu.all_reduce"(%y) {replicas = 4 : i64, reduction = "REDUCTION", ipu.ipu_id = 0 : i64} : (tensor<8x16xf32>) -> tensor<8x16xf32>
  %z = linalg.add ins(%r, %x : tensor<8x16xf32>, tensor<8x16xf32>) outs(%e : tensor<8x16xf32>) -> tensor<8x16xf32>
  return %z : tensor<8x16xf32>
}
"""


def replicated(reduction: str) -> ReplicatedSimulator:
    program = api.compile_to_program(api.load_module(PROGRAM.replace("REDUCTION", reduction)), "m2000", replicas=4)
    return ReplicatedSimulator(program, load_target("m2000"), 4, verified=True)


@pytest.mark.parametrize("reduction", ["sum", "mean"])
def test_each_replica_gets_the_reduction_of_all(reduction):
    device = replicated(reduction)
    inputs = [np.random.default_rng(r).standard_normal((2, 8, 16)).astype(np.float32) for r in range(4)]
    outputs = device.run([[x] for x in inputs], iterations=2)
    total = sum(np.exp(x) for x in inputs)
    reduced = total / 4 if reduction == "mean" else total
    # numpy sums in replica order, the ring from another replica per chunk (GCL's): a rounding
    # of the sum apart, an absolute error that adding x (near -reduced in places) does not shrink
    for x, (out,) in zip(inputs, outputs):
        np.testing.assert_allclose(out, reduced + x, rtol=1e-6, atol=1e-6 * float(np.abs(reduced).max()))


def test_a_failing_replica_ends_the_run_with_its_error():
    device = replicated("sum")
    inputs = [[np.zeros((8, 16), np.float32)] for _ in range(4)]
    inputs[2] = [np.zeros((8, 15), np.float32)]
    with pytest.raises(IpuError, match=r"input #0 of @main: expected 8x16 float32, got 8x15 float32"):
        device.run(inputs)  # the other three wait at the all-reduce: released, not hung
