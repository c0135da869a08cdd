// RUN: ipu-opt %s --split-input-file -p 'builtin.module(ipu-fold-constants)' | FileCheck %s

// BatchNorm as torch-mlir exports it in eval mode: 1 / sqrt(var + eps) on the running variance
// (a constant), the division guarded by a cf.assert. The chain folds to one constant and the
// assert, holding on every element, goes with it; the work on the activation stays.

// CHECK-LABEL: func.func @batchnorm_scale
// CHECK-NOT: cf.assert
// CHECK-NOT: math.sqrt
// CHECK-NOT: tensor.expand_shape
// CHECK: %[[X:.*]] = arith.constant dense<{{\[\[\[}}1.000000e+00]], {{\[\[}}5.000000e-01]], {{\[\[}}2.500000e-01]], {{\[\[}}1.250000e-01]]]> : tensor<4x1x1xf32>
// CHECK-NOT: arith.constant dense
// CHECK: linalg.generic {{.*}} ins(%arg0, %[[X]] :
// CHECK: arith.mulf
func.func @batchnorm_scale(%x: tensor<1x4x2x2xf32>) -> tensor<1x4x2x2xf32> {
  %var = arith.constant dense<[1.0, 4.0, 16.0, 64.0]> : tensor<4xf32>
  %eps = arith.constant 0.0 : f64
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<4xf32>
  %0 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%var : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %t = arith.truncf %eps : f64 to f32
    %a = arith.addf %in, %t : f32
    linalg.yield %a : f32
  } -> tensor<4xf32>
  %1 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%0 : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = math.sqrt %in : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  %2 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%1 : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %nz = arith.cmpf one, %in, %zero : f32
    cf.assert %nz, "unimplemented: tensor with zero element"
    %q = arith.divf %one, %in : f32
    linalg.yield %q : f32
  } -> tensor<4xf32>
  %3 = tensor.expand_shape %2 [[0, 1, 2]] output_shape [4, 1, 1] : tensor<4xf32> into tensor<4x1x1xf32>
  %ex = tensor.empty() : tensor<1x4x2x2xf32>
  %4 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d1, 0, 0)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x, %3 : tensor<1x4x2x2xf32>, tensor<4x1x1xf32>) outs(%ex : tensor<1x4x2x2xf32>) {
  ^bb0(%in: f32, %s: f32, %out: f32):
    %m = arith.mulf %in, %s : f32
    linalg.yield %m : f32
  } -> tensor<1x4x2x2xf32>
  return %4 : tensor<1x4x2x2xf32>
}

// -----

// Transposes and unit-dim broadcasts of constants fold; i32 arithmetic keeps its wrap-around.

// CHECK-LABEL: func.func @transpose
// CHECK-NOT: dense<{{\[\[}}0, 1, 2]
// CHECK: %[[T:.*]] = arith.constant dense<{{\[}}[1, 4], [2, 5], [3, -2147483648]]> : tensor<3x2xi32>
// CHECK-NEXT: return %[[T]]
func.func @transpose() -> tensor<3x2xi32> {
  %c = arith.constant dense<[[0, 1, 2], [3, 4, 2147483647]]> : tensor<2x3xi32>
  %one = arith.constant 1 : i32
  %e = tensor.empty() : tensor<3x2xi32>
  %0 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%c : tensor<2x3xi32>) outs(%e : tensor<3x2xi32>) {
  ^bb0(%in: i32, %out: i32):
    %a = arith.addi %in, %one : i32
    linalg.yield %a : i32
  } -> tensor<3x2xi32>
  return %0 : tensor<3x2xi32>
}

// -----

// What stays: work on arguments, broadcasts that would grow a constant, reductions, and bodies
// reading their init.

// CHECK-LABEL: func.func @stays
// CHECK-COUNT-4: linalg.generic
func.func @stays(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4x4xf32>, tensor<f32>, tensor<4xf32>) {
  %c = arith.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %e = tensor.empty() : tensor<4xf32>
  %0 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%x, %c : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  %e2 = tensor.empty() : tensor<4x4xf32>
  %1 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%c : tensor<4xf32>) outs(%e2 : tensor<4x4xf32>) {
  ^bb0(%a: f32, %out: f32):
    linalg.yield %a : f32
  } -> tensor<4x4xf32>
  %z = arith.constant dense<0.0> : tensor<f32>
  %2 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>], iterator_types = ["reduction"]} ins(%c : tensor<4xf32>) outs(%z : tensor<f32>) {
  ^bb0(%a: f32, %out: f32):
    %s = arith.addf %a, %out : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  %3 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%c : tensor<4xf32>) outs(%c : tensor<4xf32>) {
  ^bb0(%a: f32, %out: f32):
    %s = arith.addf %a, %out : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  return %0, %1, %2, %3 : tensor<4xf32>, tensor<4x4xf32>, tensor<f32>, tensor<4xf32>
}
