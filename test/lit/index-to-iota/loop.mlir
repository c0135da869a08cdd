// RUN: ipu-opt %s --split-input-file -p 'builtin.module(ipu-index-to-iota)' | FileCheck %s

// A generic in a loop body (scf.for, Poplar's Repeat) gets its iota too, a constant in the body.

// CHECK-LABEL: func.func @ramp
// CHECK: scf.for
// CHECK: %[[IOTA:.*]] = arith.constant dense<[0, 1, 2, 3]> : tensor<4xi64>
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %[[IOTA]] : tensor<4xf32>, tensor<4xi64>)
// CHECK-NOT: linalg.index
// CHECK: scf.yield
func.func @ramp(%u0: tensor<4xf32>) -> tensor<4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %r = scf.for %s = %c0 to %c3 step %c1 iter_args(%u = %u0) -> tensor<4xf32> {
    %e = tensor.empty() : tensor<4xf32>
    %v = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
        ins(%u : tensor<4xf32>) outs(%e : tensor<4xf32>) {
    ^bb0(%a: f32, %o: f32):
      %i = linalg.index 0 : index
      %i64 = arith.index_cast %i : index to i64
      %f = arith.sitofp %i64 : i64 to f32
      %w = arith.addf %a, %f : f32
      linalg.yield %w : f32
    } -> tensor<4xf32>
    scf.yield %v : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}
