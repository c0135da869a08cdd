// RUN: ipu-opt %s --verify-diagnostics -p 'builtin.module(ipu-convert-to-ipu)'
// RUN: ipu-opt %s -p 'builtin.module(ipu-convert-to-ipu{drop-asserts})' | FileCheck %s

// torch-mlir guards divisions with cf.assert (here BatchNorm's 1 / sqrt(var + eps)). A
// run-time check is not L1: it stops the pass, unless drop-asserts erases it.

// CHECK-LABEL: func.func @reciprocal
// CHECK-NOT: cf.assert
// CHECK: linalg.generic
// CHECK: arith.divf
func.func @reciprocal(%x: tensor<8xf32>) -> tensor<8xf32> {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<8xf32>
  // expected-error@+1 {{'linalg.generic' is not supported by ipu-convert-to-ipu: cf.assert, a run-time check (ipu-convert-to-ipu{drop-asserts} erases it)}}
  %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%x : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %nz = arith.cmpf one, %in, %zero : f32
    cf.assert %nz, "unimplemented: tensor with zero element"
    %q = arith.divf %one, %in : f32
    linalg.yield %q : f32
  } -> tensor<8xf32>
  return %r : tensor<8xf32>
}
