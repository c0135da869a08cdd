// RUN: ipu-opt %s --split-input-file -p 'builtin.module(ipu-convert-to-ipu)' | FileCheck %s

// Pooling ops are generalized: the input is read through window maps `s * d_out + k * d_win`,
// the window extents come from the window-shape operand, whose tensor.empty becomes a zero
// splat constant (the body never reads it; the planner needs data it can place).

// CHECK-DAG: #[[WINDOW:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2 * 2 + d4, d3 * 2 + d5)>
// CHECK-DAG: #[[KERNEL:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d4, d5)>
// CHECK-DAG: #[[OUT:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3)>
// CHECK-LABEL: func.func @max_nchw
// CHECK-DAG: %[[NINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK: %[[INIT:.*]] = linalg.generic
// CHECK-NEXT: ^bb0
// CHECK-NEXT: linalg.yield %[[NINF]] : f32
// CHECK: %[[KSHAPE:.*]] = arith.constant dense<0.000000e+00> : tensor<3x3xf32>
// CHECK-NOT: tensor.empty
// CHECK: linalg.generic {indexing_maps = [#[[WINDOW]], #[[KERNEL]], #[[OUT]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]}
// CHECK-SAME: ins(%arg0, %[[KSHAPE]] : tensor<1x3x10x10xf32>, tensor<3x3xf32>) outs(%[[INIT]] : tensor<1x3x4x4xf32>)
// CHECK-NEXT: ^bb0(%[[X:.*]]: f32, %{{.*}}: f32, %[[ACC:.*]]: f32):
// CHECK-NEXT: arith.maximumf %[[ACC]], %[[X]] : f32
func.func @max_nchw(%x: tensor<1x3x10x10xf32>) -> tensor<1x3x4x4xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : tensor<1x3x4x4xf32>
  %f = linalg.fill ins(%ninf : f32) outs(%e : tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf32>
  %k = tensor.empty() : tensor<3x3xf32>
  %p = linalg.pooling_nchw_max {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>} ins(%x, %k : tensor<1x3x10x10xf32>, tensor<3x3xf32>) outs(%f : tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf32>
  return %p : tensor<1x3x4x4xf32>
}

// -----

// torch-mlir's MaxPool2d(3, stride=2, padding=1) in NHWC: a -inf tensor.pad stays.

// CHECK-DAG: #[[WINDOW:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1 * 2 + d4, d2 * 2 + d5, d3)>
// CHECK-LABEL: func.func @max_nhwc_padded
// CHECK: %[[P:.*]] = tensor.pad %arg0 low[0, 1, 1, 0] high[0, 1, 1, 0]
// CHECK: linalg.generic {indexing_maps = [#[[WINDOW]],
// CHECK-SAME: ins(%[[P]], %{{.*}} : tensor<1x10x10x2xf32>, tensor<3x3xf32>)
// CHECK: arith.maximumf
func.func @max_nhwc_padded(%x: tensor<1x8x8x2xf32>) -> tensor<1x4x4x2xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %p = tensor.pad %x low[0, 1, 1, 0] high[0, 1, 1, 0] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %ninf : f32
  } : tensor<1x8x8x2xf32> to tensor<1x10x10x2xf32>
  %e = tensor.empty() : tensor<1x4x4x2xf32>
  %f = linalg.fill ins(%ninf : f32) outs(%e : tensor<1x4x4x2xf32>) -> tensor<1x4x4x2xf32>
  %k = tensor.empty() : tensor<3x3xf32>
  %m = linalg.pooling_nhwc_max {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>} ins(%p, %k : tensor<1x10x10x2xf32>, tensor<3x3xf32>) outs(%f : tensor<1x4x4x2xf32>) -> tensor<1x4x4x2xf32>
  return %m : tensor<1x4x4x2xf32>
}

// -----

// Average pooling as torch-mlir emits it (count_include_pad): a sum pool, then a division by
// the window size.

// CHECK-LABEL: func.func @avg_nchw
// CHECK-DAG: %[[FOUR:.*]] = arith.constant 4.000000e+00 : f32
// CHECK: %[[SUM:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]
// CHECK-NEXT: ^bb0(%[[X:.*]]: f32, %{{.*}}: f32, %[[ACC:.*]]: f32):
// CHECK-NEXT: arith.addf %[[ACC]], %[[X]] : f32
// CHECK: %[[AVG:.*]] = linalg.generic
// CHECK-SAME: ins(%[[SUM]] : tensor<1x2x4x4xf32>)
// CHECK-NEXT: ^bb0(%[[S:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: arith.divf %[[S]], %[[FOUR]] : f32
// CHECK: return %[[AVG]]
func.func @avg_nchw(%x: tensor<1x2x8x8xf32>) -> tensor<1x2x4x4xf32> {
  %zero = arith.constant 0.0 : f32
  %size = arith.constant 4.0 : f32
  %e = tensor.empty() : tensor<1x2x4x4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %k = tensor.empty() : tensor<2x2xf32>
  %s = linalg.pooling_nchw_sum {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>} ins(%x, %k : tensor<1x2x8x8xf32>, tensor<2x2xf32>) outs(%f : tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s : tensor<1x2x4x4xf32>) outs(%e : tensor<1x2x4x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %d = arith.divf %in, %size : f32
    linalg.yield %d : f32
  } -> tensor<1x2x4x4xf32>
  return %r : tensor<1x2x4x4xf32>
}

// -----

// Dilated windows: `s * d_out + k * d_win`.

// CHECK-DAG: #[[WINDOW:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1 * 3 + d4 * 2, d2 + d5 * 2, d3)>
// CHECK-LABEL: func.func @min_nhwc_dilated
// CHECK: linalg.generic {indexing_maps = [#[[WINDOW]],
// CHECK: arith.minsi
func.func @min_nhwc_dilated(%x: tensor<2x11x9x3xi32>, %init: tensor<2x3x5x3xi32>) -> tensor<2x3x5x3xi32> {
  %k = tensor.empty() : tensor<3x3xi32>
  %m = linalg.pooling_nhwc_min {dilations = dense<2> : vector<2xi64>, strides = dense<[3, 1]> : vector<2xi64>} ins(%x, %k : tensor<2x11x9x3xi32>, tensor<3x3xi32>) outs(%init : tensor<2x3x5x3xi32>) -> tensor<2x3x5x3xi32>
  return %m : tensor<2x3x5x3xi32>
}
