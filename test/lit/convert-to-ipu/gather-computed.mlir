// RUN: ipu-opt %s --split-input-file -p 'builtin.module(ipu-convert-to-ipu)' | FileCheck %s

// A tensor.extract from a captured tensor at coordinates computed from the inputs (interpolate,
// adaptive pooling, GroupNorm as torch-mlir exports them) is a gather: a generic over the same
// loops computes the flat coordinate of every point, ipu.gather reads the captured tensor seen
// as a one-column table at them, and the generic reads the gathered values as an input.

// -----

// Nearest upsampling by 2 along the last dimension: coordinates from the loop indices (the
// iota inputs ipu-index-to-iota makes of linalg.index).

// CHECK-LABEL: func.func @nearest
// CHECK-DAG: %[[TABLE_ROWS:.*]] = arith.constant dense<[0, 1, 2, 3, 4, 5]> : tensor<6xi32>
// CHECK-DAG: %[[I:.*]] = arith.constant dense<[0, 1]> : tensor<2xi64>
// CHECK-DAG: %[[J:.*]] = arith.constant dense<[0, 1, 2, 3, 4, 5]> : tensor<6xi64>
// CHECK: %[[COLUMN:.*]] = tensor.expand_shape %{{.*}} {{\[\[}}0], [1, 2]] output_shape [2, 3, 1] : tensor<2x3xf32> into tensor<2x3x1xf32>
// CHECK: %[[TABLE:.*]] = tensor.collapse_shape %[[COLUMN]] {{\[\[}}0, 1], [2]] : tensor<2x3x1xf32> into tensor<6x1xf32>
// CHECK: %[[FLAT:.*]] = linalg.generic {{.*}} ins(%[[I]], %[[J]] : tensor<2xi64>, tensor<6xi64>) outs(%{{.*}} : tensor<2x6xi32>)
// CHECK: arith.divui
// CHECK: arith.muli %{{.*}}, %c3
// CHECK: arith.index_cast %{{.*}} : index to i32
// CHECK: %[[VALUES:.*]] = "ipu.gather"(%[[TABLE]], %[[FLAT]], %[[TABLE_ROWS]]) : (tensor<6x1xf32>, tensor<2x6xi32>, tensor<6xi32>) -> tensor<2x6x1xf32>
// CHECK: %[[R:.*]] = linalg.generic {{.*}} ins(%[[VALUES]] : tensor<2x6x1xf32>)
// CHECK-NOT: tensor.extract
// CHECK: return %[[R]]
func.func @nearest(%x: tensor<2x3xf32>) -> tensor<2x6xf32> {
  %c2 = arith.constant 2 : index
  %rows = arith.constant dense<[0, 1]> : tensor<2xi64>
  %columns = arith.constant dense<[0, 1, 2, 3, 4, 5]> : tensor<6xi64>
  %e = tensor.empty() : tensor<2x6xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%rows, %columns : tensor<2xi64>, tensor<6xi64>) outs(%e : tensor<2x6xf32>) {
  ^bb0(%ri: i64, %ci: i64, %out: f32):
    %i = arith.index_cast %ri : i64 to index
    %j = arith.index_cast %ci : i64 to index
    %h = arith.divui %j, %c2 : index
    %v = tensor.extract %x[%i, %h] : tensor<2x3xf32>
    linalg.yield %v : f32
  } -> tensor<2x6xf32>
  return %r : tensor<2x6xf32>
}

// -----

// GroupNorm's parameters: a computed tensor read at coordinates held by constant inputs; the
// rest of the body (the product) stays in the generic, which reads the gathered values.

// CHECK-LABEL: func.func @scale_by_group
// CHECK: %[[SCALE:.*]] = linalg.generic
// CHECK: math.exp
// CHECK: %[[FLAT:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<2x4xi32>)
// CHECK-NOT: tensor.extract
// CHECK: %[[VALUES:.*]] = "ipu.gather"(%[[SCALE]], %[[FLAT]], %{{.*}}) : (tensor<2x1xf32>, tensor<2x4xi32>, tensor<2xi32>) -> tensor<2x4x1xf32>
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %[[VALUES]] : tensor<2x4xf32>, tensor<2x4x1xf32>)
// CHECK: arith.mulf
// CHECK-NOT: tensor.extract
func.func @scale_by_group(%x: tensor<2x4xf32>, %g: tensor<2xf32>) -> tensor<2x4xf32> {
  %groups = arith.constant dense<[0, 0, 1, 1]> : tensor<4xi64>
  %eg = tensor.empty() : tensor<2xf32>
  %scale = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%g : tensor<2xf32>) outs(%eg : tensor<2xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = math.exp %in : f32
    linalg.yield %s : f32
  } -> tensor<2xf32>
  %e = tensor.empty() : tensor<2x4xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x, %groups : tensor<2x4xf32>, tensor<4xi64>) outs(%e : tensor<2x4xf32>) {
  ^bb0(%in: f32, %group: i64, %out: f32):
    %k = arith.index_cast %group : i64 to index
    %v = tensor.extract %scale[%k] : tensor<2xf32>
    %p = arith.mulf %in, %v : f32
    linalg.yield %p : f32
  } -> tensor<2x4xf32>
  return %r : tensor<2x4xf32>
}
