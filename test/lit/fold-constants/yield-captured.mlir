// RUN: ipu-opt %s --split-input-file -p 'builtin.module(ipu-fold-constants)' | FileCheck %s

// A body that yields a value defined outside it (torch-mlir's `aten.nonzero` fills a tensor
// with a captured scalar this way): the fold broadcasts the captured constant; before, it
// looked the value up among the body's own values and crashed with a KeyError.

// CHECK-LABEL: func.func @yield_captured_constant
// CHECK-NOT: linalg.generic
// CHECK: %[[C:.*]] = arith.constant dense<7> : tensor<2x3xi64>
// CHECK: return %[[C]]
func.func @yield_captured_constant() -> tensor<2x3xi64> {
  %src = arith.constant dense<[[1, 2, 3], [4, 5, 6]]> : tensor<2x3xi64>
  %seven = arith.constant 7 : i64
  %e = tensor.empty() : tensor<2x3xi64>
  %0 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%src : tensor<2x3xi64>) outs(%e : tensor<2x3xi64>) {
  ^bb0(%in: i64, %out: i64):
    linalg.yield %seven : i64
  } -> tensor<2x3xi64>
  return %0 : tensor<2x3xi64>
}

// -----

// A captured value that is not a constant (a function argument) stays: nothing to fold.

// CHECK-LABEL: func.func @yield_captured_argument
// CHECK: linalg.generic
// CHECK: linalg.yield %arg0
func.func @yield_captured_argument(%s: i64) -> tensor<2x3xi64> {
  %src = arith.constant dense<[[1, 2, 3], [4, 5, 6]]> : tensor<2x3xi64>
  %e = tensor.empty() : tensor<2x3xi64>
  %0 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%src : tensor<2x3xi64>) outs(%e : tensor<2x3xi64>) {
  ^bb0(%in: i64, %out: i64):
    linalg.yield %s : i64
  } -> tensor<2x3xi64>
  return %0 : tensor<2x3xi64>
}
