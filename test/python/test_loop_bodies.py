"""What an `scf.for` body may hold beyond element-wise ops and matmuls: `linalg.index` (made an
iota input), gathers at computed coordinates, arg-reductions, torch-mlir's TMTensor ops and
strided slices; and the loops themselves at the edges: trip counts 0 and 1, a step other than
1, several carried tensors, nested loops, constants inside the body. Each program runs on
`tiny` and `gc200` against MLIR's ExecutionEngine (`frontends.api.reference_outputs`, which
also rewrites TMTensor ops for it)."""

from __future__ import annotations

from pathlib import Path
from string import Template

import numpy as np
import pytest
from mlir import ir

from ipu_mlir.dialects import make_context
from ipu_mlir.frontends import api
from ipu_mlir.lowering.pass_registry import build_pass_manager
from ipu_mlir.lowering.pipelines import STEPS, compile_module
from ipu_mlir.runtime.api import load_simulator

# u <- u + i / n: the loop index of the body's generic (linalg.index) is an iota input.
INDEX = """
func.func @main(%u0: tensor<${n}xf32>) -> tensor<${n}xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %ct = arith.constant ${t} : index
  %r = scf.for %s = %c0 to %ct step %c1 iter_args(%u = %u0) -> tensor<${n}xf32> {
    %e = tensor.empty() : tensor<${n}xf32>
    %v = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
        ins(%u : tensor<${n}xf32>) outs(%e : tensor<${n}xf32>) {
    ^bb0(%a: f32, %o: f32):
      %i = linalg.index 0 : index
      %i64 = arith.index_cast %i : index to i64
      %f = arith.sitofp %i64 : i64 to f32
      %k = arith.constant ${inv} : f32
      %d = arith.mulf %f, %k : f32
      %w = arith.addf %a, %d : f32
      linalg.yield %w : f32
    } -> tensor<${n}xf32>
    scf.yield %v : tensor<${n}xf32>
  }
  return %r : tensor<${n}xf32>
}
"""

# u <- u + reverse(u) / 2: a tensor.extract at coordinates computed from the loop index (a
# gather from the carried tensor).
GATHER = """
func.func @main(%u0: tensor<${n}xf32>) -> tensor<${n}xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %ct = arith.constant ${t} : index
  %r = scf.for %s = %c0 to %ct step %c1 iter_args(%u = %u0) -> tensor<${n}xf32> {
    %e = tensor.empty() : tensor<${n}xf32>
    %v = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
        ins(%u : tensor<${n}xf32>) outs(%e : tensor<${n}xf32>) {
    ^bb0(%a: f32, %o: f32):
      %i = linalg.index 0 : index
      %last = arith.constant ${last} : index
      %j = arith.subi %last, %i : index
      %b = tensor.extract %u[%j] : tensor<${n}xf32>
      %h = arith.constant 0.5 : f32
      %bh = arith.mulf %b, %h : f32
      %w = arith.addf %a, %bh : f32
      linalg.yield %w : f32
    } -> tensor<${n}xf32>
    scf.yield %v : tensor<${n}xf32>
  }
  return %r : tensor<${n}xf32>
}
"""

# x <- x / 2 + argmax(x, dim 1) broadcast along dim 1, the argmax as torch-mlir exports it
# (one generic with the maximum and its index, the index from linalg.index).
ARGMAX = """
func.func @main(%x0: tensor<4x${n}xf32>) -> tensor<4x${n}xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %ct = arith.constant ${t} : index
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0 : i64
  %r = scf.for %s = %c0 to %ct step %c1 iter_args(%x = %x0) -> tensor<4x${n}xf32> {
    %e = tensor.empty() : tensor<4xf32>
    %m0 = linalg.fill ins(%ninf : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
    %ei = tensor.empty() : tensor<4xi64>
    %i0 = linalg.fill ins(%zero : i64) outs(%ei : tensor<4xi64>) -> tensor<4xi64>
    %m:2 = linalg.generic {
        indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0)>],
        iterator_types = ["parallel", "reduction"]}
        ins(%x : tensor<4x${n}xf32>) outs(%m0, %i0 : tensor<4xf32>, tensor<4xi64>) {
    ^bb0(%in: f32, %acc: f32, %idx: i64):
      %k = linalg.index 1 : index
      %k64 = arith.index_cast %k : index to i64
      %mx = arith.maximumf %in, %acc : f32
      %gt = arith.cmpf ogt, %in, %acc : f32
      %sel = arith.select %gt, %k64, %idx : i64
      linalg.yield %mx, %sel : f32, i64
    } -> (tensor<4xf32>, tensor<4xi64>)
    %ex = tensor.empty() : tensor<4x${n}xf32>
    %y = linalg.generic {
        indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>],
        iterator_types = ["parallel", "parallel"]}
        ins(%x, %m#1 : tensor<4x${n}xf32>, tensor<4xi64>) outs(%ex : tensor<4x${n}xf32>) {
    ^bb0(%a: f32, %i: i64, %o: f32):
      %f = arith.sitofp %i : i64 to f32
      %h = arith.constant 0.5 : f32
      %ah = arith.mulf %a, %h : f32
      %w = arith.addf %ah, %f : f32
      linalg.yield %w : f32
    } -> tensor<4x${n}xf32>
    scf.yield %y : tensor<4x${n}xf32>
  }
  return %r : tensor<4x${n}xf32>
}
"""

# x <- cumsum(x, dim 1) / n, the cumsum as torch-mlir exports it (tm_tensor.scan).
CUMSUM = """
func.func @main(%x0: tensor<3x${n}xf32>) -> tensor<3x${n}xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %ct = arith.constant ${t} : index
  %r = scf.for %s = %c0 to %ct step %c1 iter_args(%x = %x0) -> tensor<3x${n}xf32> {
    %0 = tensor.empty() : tensor<3x${n}xf32>
    %1 = tensor.empty() : tensor<3xf32>
    %2:2 = "tm_tensor.scan"(%x, %0, %1) <{dimension = 1 : i64, inclusive = true, operandSegmentSizes = array<i32: 1, 2>}> ({
    ^bb0(%a: f32, %b: f32):
      %3 = arith.addf %a, %b : f32
      "tm_tensor.yield"(%3) : (f32) -> ()
    }) : (tensor<3x${n}xf32>, tensor<3x${n}xf32>, tensor<3xf32>) -> (tensor<3x${n}xf32>, tensor<3xf32>)
    %k = arith.constant dense<${inv}> : tensor<3x${n}xf32>
    %y = arith.mulf %2#0, %k : tensor<3x${n}xf32>
    scf.yield %y : tensor<3x${n}xf32>
  }
  return %r : tensor<3x${n}xf32>
}
"""

# u <- u with its odd elements replaced by (even + odd) / 2: strided slices out of and into the
# carried tensor.
STRIDED = """
func.func @main(%u0: tensor<${n}xf32>) -> tensor<${n}xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %ct = arith.constant ${t} : index
  %r = scf.for %s = %c0 to %ct step %c1 iter_args(%u = %u0) -> tensor<${n}xf32> {
    %even = tensor.extract_slice %u[0] [${half}] [2] : tensor<${n}xf32> to tensor<${half}xf32>
    %odd = tensor.extract_slice %u[1] [${half}] [2] : tensor<${n}xf32> to tensor<${half}xf32>
    %sum = arith.addf %even, %odd : tensor<${half}xf32>
    %k = arith.constant dense<0.5> : tensor<${half}xf32>
    %mean = arith.mulf %sum, %k : tensor<${half}xf32>
    %v = tensor.insert_slice %mean into %u[1] [${half}] [2] : tensor<${half}xf32> into tensor<${n}xf32>
    scf.yield %v : tensor<${n}xf32>
  }
  return %r : tensor<${n}xf32>
}
"""

# Three carried tensors, one of them a matmul's result, read by each other: (a, b, c) <-
# (a W + c, a * b, b); the step is 2 from 1, so the trip count is ceil((t - 1) / 2) (0 for t = 0).
SEVERAL = """
func.func @main(%a0: tensor<8x${n}xf32>, %b0: tensor<8x${n}xf32>, %w: tensor<${n}x${n}xf32>)
    -> (tensor<8x${n}xf32>, tensor<8x${n}xf32>, tensor<8x${n}xf32>) {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %ct = arith.constant ${t} : index
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant dense<0.25> : tensor<8x${n}xf32>
  %r:3 = scf.for %s = %c1 to %ct step %c2 iter_args(%a = %a0, %b = %b0, %c = %c0)
      -> (tensor<8x${n}xf32>, tensor<8x${n}xf32>, tensor<8x${n}xf32>) {
    %e = tensor.empty() : tensor<8x${n}xf32>
    %fill = linalg.fill ins(%zero : f32) outs(%e : tensor<8x${n}xf32>) -> tensor<8x${n}xf32>
    %aw = linalg.matmul ins(%a, %w : tensor<8x${n}xf32>, tensor<${n}x${n}xf32>) outs(%fill : tensor<8x${n}xf32>) -> tensor<8x${n}xf32>
    %na = arith.addf %aw, %c : tensor<8x${n}xf32>
    %nb = arith.mulf %a, %b : tensor<8x${n}xf32>
    scf.yield %na, %nb, %b : tensor<8x${n}xf32>, tensor<8x${n}xf32>, tensor<8x${n}xf32>
  }
  return %r#0, %r#1, %r#2 : tensor<8x${n}xf32>, tensor<8x${n}xf32>, tensor<8x${n}xf32>
}
"""

# Nested loops, the inner one with a constant tensor of its own and a trip count of its own,
# the outer one carrying two tensors, one of them unchanged by the inner loop.
NESTED = """
func.func @main(%x: tensor<${n}xf32>, %y: tensor<${n}xf32>) -> (tensor<${n}xf32>, tensor<${n}xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %ct = arith.constant ${t} : index
  %r:2 = scf.for %i = %c0 to %ct step %c1 iter_args(%a = %x, %b = %y) -> (tensor<${n}xf32>, tensor<${n}xf32>) {
    %s = scf.for %j = %c0 to %c3 step %c1 iter_args(%p = %a) -> tensor<${n}xf32> {
      %k = arith.constant dense<0.5> : tensor<${n}xf32>
      %q = arith.mulf %p, %k : tensor<${n}xf32>
      %n = arith.addf %q, %b : tensor<${n}xf32>
      scf.yield %n : tensor<${n}xf32>
    }
    %nb = arith.subf %b, %s : tensor<${n}xf32>
    scf.yield %s, %nb : tensor<${n}xf32>, tensor<${n}xf32>
  }
  return %r#0, %r#1 : tensor<${n}xf32>, tensor<${n}xf32>
}
"""

# The body yields its carried tensor unchanged and a tensor defined before the loop.
PASSTHROUGH = """
func.func @main(%x: tensor<${n}xf32>, %y: tensor<${n}xf32>) -> (tensor<${n}xf32>, tensor<${n}xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %ct = arith.constant ${t} : index
  %r:2 = scf.for %i = %c0 to %ct step %c1 iter_args(%a = %x, %b = %x) -> (tensor<${n}xf32>, tensor<${n}xf32>) {
    scf.yield %a, %y : tensor<${n}xf32>, tensor<${n}xf32>
  }
  return %r#0, %r#1 : tensor<${n}xf32>, tensor<${n}xf32>
}
"""

# v <- v * (row sums of A), a reduction over A's rows yielded as it is (on gc200 cut across
# tiles: its second stage writes the carried tensor).
REDUCTION = """
func.func @main(%v0: tensor<${n}xf32>, %a: tensor<${n}x${n}xf32>) -> tensor<${n}xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %ct = arith.constant ${t} : index
  %zero = arith.constant 0.0 : f32
  %r = scf.for %s = %c0 to %ct step %c1 iter_args(%v = %v0) -> tensor<${n}xf32> {
    %e = tensor.empty() : tensor<${n}xf32>
    %fill = linalg.fill ins(%zero : f32) outs(%e : tensor<${n}xf32>) -> tensor<${n}xf32>
    %w = linalg.generic {
        indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0)>],
        iterator_types = ["parallel", "reduction"]}
        ins(%a, %v : tensor<${n}x${n}xf32>, tensor<${n}xf32>) outs(%fill : tensor<${n}xf32>) {
    ^bb0(%x: f32, %y: f32, %acc: f32):
      %p = arith.mulf %x, %y : f32
      %q = arith.addf %p, %acc : f32
      linalg.yield %q : f32
    } -> tensor<${n}xf32>
    scf.yield %w : tensor<${n}xf32>
  }
  return %r : tensor<${n}xf32>
}
"""

PROGRAMS = {
    "index": (INDEX, 64),
    "gather": (GATHER, 64),
    "argmax": (ARGMAX, 16),
    "cumsum": (CUMSUM, 8),
    "strided": (STRIDED, 64),
    "several": (SEVERAL, 16),
    "nested": (NESTED, 32),
    "passthrough": (PASSTHROUGH, 32),
    "reduction": (REDUCTION, 256),
}


def source(template: str, n: int, trips: int) -> str:
    return Template(template).substitute(n=n, t=trips, half=n // 2, last=n - 1, inv=f"{1 / n:e}")


def inputs(text: str) -> list[np.ndarray]:
    """Uniform values in [-1, 1) for every argument, a matrix scaled so that repeated products
    stay bounded."""
    rng = np.random.default_rng(0)
    with make_context() as context:
        context.allow_unregistered_dialects = True
        function = ir.Module.parse(text).body.operations[0]
        types = ir.FunctionType(ir.TypeAttr(function.attributes["function_type"]).value).inputs
        shapes = [tuple(ir.RankedTensorType(t).shape) for t in types]
    return [rng.uniform(-1, 1, s).astype(np.float32) / (s[0] if s[0] == s[-1] else 1) for s in shapes]


def run_both(text: str, target: str) -> tuple[list[np.ndarray], list[np.ndarray]]:
    args = inputs(text)
    with make_context() as context:
        context.allow_unregistered_dialects = True  # tm_tensor (torch-mlir's own dialect)
        expected = api.reference_outputs(ir.Module.parse(text), args, "main")
        got = load_simulator(compile_module(ir.Module.parse(text), target)).run(args)
    return got, expected


@pytest.mark.parametrize("target", ["tiny", "gc200"])
@pytest.mark.parametrize("name", sorted(PROGRAMS))
@pytest.mark.parametrize("trips", [0, 1, 4])
def test_loop_body_matches_execution_engine(name, trips, target):
    template, n = PROGRAMS[name]
    got, expected = run_both(source(template, n, trips), target)
    assert len(got) == len(expected)
    for value, wanted in zip(got, expected, strict=True):
        np.testing.assert_allclose(value, wanted, rtol=1e-4, atol=1e-5)


def test_cut_reduction_accumulating_into_the_carried_tensor():
    """A planned row sum cut in four along its summed loop, its init the carried tensor: the
    second stage writes the carried buffer it reads (test/lit/schedule/loop.mlir shows the
    vertex group); the result is the init plus five row sums (numpy)."""
    cases = (Path(__file__).parents[1] / "lit" / "schedule" / "loop.mlir").read_text().split("// -----")
    text = next(case for case in cases if "generic_combine_cs0" in case)
    rng = np.random.default_rng(0)
    x, init = rng.uniform(-1, 1, (2, 256)).astype(np.float32), rng.uniform(-1, 1, 2).astype(np.float32)
    with make_context():
        module = ir.Module.parse(text)
        build_pass_manager(f"builtin.module({','.join(STEPS[STEPS.index('ipu-schedule') :])})", module.context).run(module.operation)
        assert "outputs = [@carried0]" in str(module)
        (got,) = load_simulator(module).run([x, init])
    np.testing.assert_allclose(got, init + 5 * x.sum(axis=1), rtol=1e-5)
