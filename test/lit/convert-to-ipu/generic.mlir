// RUN: ipu-opt %s --split-input-file -p 'builtin.module(ipu-convert-to-ipu)' | FileCheck %s

// linalg.generic with parallel and reduction iterators, permutation, broadcast and
// projection maps and arith / math bodies is L1 already: it is kept as written.

// CHECK-DAG: #[[IN:.*]] = affine_map<(d0, d1, d2) -> (d2, d0, d1)>
// CHECK-DAG: #[[BIAS:.*]] = affine_map<(d0, d1, d2) -> (0, d1)>
// CHECK-DAG: #[[OUT:.*]] = affine_map<(d0, d1, d2) -> (d1, d0)>
// CHECK-LABEL: func.func @reduce_transposed
// CHECK: linalg.generic {indexing_maps = [#[[IN]], #[[BIAS]], #[[OUT]]], iterator_types = ["parallel", "parallel", "reduction"]}
// CHECK-SAME: ins(%arg0, %arg1 : tensor<6x4x5xf32>, tensor<1x5xf32>) outs(%arg2 : tensor<5x4xf32>)
// CHECK-NEXT: ^bb0(%[[X:.*]]: f32, %[[B:.*]]: f32, %[[ACC:.*]]: f32):
// CHECK-NEXT: %[[E:.*]] = math.exp %[[X]] : f32
// CHECK-NEXT: %[[S:.*]] = arith.mulf %[[E]], %[[B]] : f32
// CHECK-NEXT: %[[R:.*]] = arith.addf %[[S]], %[[ACC]] : f32
// CHECK-NEXT: linalg.yield %[[R]] : f32
func.func @reduce_transposed(%x: tensor<6x4x5xf32>, %b: tensor<1x5xf32>, %init: tensor<5x4xf32>) -> tensor<5x4xf32> {
  %r = linalg.generic {indexing_maps = [affine_map<(i, j, k) -> (k, i, j)>, affine_map<(i, j, k) -> (0, j)>, affine_map<(i, j, k) -> (j, i)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %b : tensor<6x4x5xf32>, tensor<1x5xf32>) outs(%init : tensor<5x4xf32>) {
  ^bb0(%a: f32, %c: f32, %acc: f32):
    %e = math.exp %a : f32
    %m = arith.mulf %e, %c : f32
    %s = arith.addf %m, %acc : f32
    linalg.yield %s : f32
  } -> tensor<5x4xf32>
  return %r : tensor<5x4xf32>
}

// -----

// Reductions over several dims, interleaved with parallel ones; integer max.

// CHECK-LABEL: func.func @reduce_interleaved
// CHECK: linalg.generic
// CHECK-SAME: iterator_types = ["reduction", "parallel", "reduction", "parallel"]
// CHECK: arith.maxsi
func.func @reduce_interleaved(%x: tensor<2x3x4x5xi32>, %init: tensor<3x5xi32>) -> tensor<3x5xi32> {
  %r = linalg.generic {indexing_maps = [affine_map<(a, b, c, d) -> (a, b, c, d)>, affine_map<(a, b, c, d) -> (b, d)>], iterator_types = ["reduction", "parallel", "reduction", "parallel"]} ins(%x : tensor<2x3x4x5xi32>) outs(%init : tensor<3x5xi32>) {
  ^bb0(%a: i32, %acc: i32):
    %m = arith.maxsi %a, %acc : i32
    linalg.yield %m : i32
  } -> tensor<3x5xi32>
  return %r : tensor<3x5xi32>
}

// -----

// linalg.reduce with a combiner region; a mean (sum, then divide).

// CHECK-LABEL: func.func @mean
// CHECK-DAG: %[[N:.*]] = arith.constant 8.000000e+00 : f32
// CHECK: %[[SUM:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]
// CHECK: arith.addf
// CHECK: linalg.generic {{.*}}ins(%[[SUM]] : tensor<4xf32>)
// CHECK: arith.divf %{{.*}}, %[[N]] : f32
func.func @mean(%x: tensor<4x8xf32>) -> tensor<4xf32> {
  %zero = arith.constant 0.0 : f32
  %n = arith.constant dense<8.0> : tensor<4xf32>
  %e = tensor.empty() : tensor<4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %s = linalg.reduce { arith.addf } ins(%x : tensor<4x8xf32>) outs(%f : tensor<4xf32>) dimensions = [1]
  %m = arith.divf %s, %n : tensor<4xf32>
  return %m : tensor<4xf32>
}

// -----

// Input that is already L1 (ipu ops, generics) is left alone: the pass can run twice.

// CHECK-LABEL: func.func @already_l1
// CHECK-NEXT: %[[P:.*]] = {{.}}ipu.matmul"(%arg0, %arg1)
// CHECK-NEXT: %[[C:.*]] = {{.}}ipu.conv"(%arg2, %arg3)
// CHECK-NEXT: return %[[P]], %[[C]]
func.func @already_l1(%a: tensor<4x8xf32>, %b: tensor<8x2xf32>, %x: tensor<1x1x4x4xf32>, %w: tensor<1x1x3x3xf32>) -> (tensor<4x2xf32>, tensor<1x1x2x2xf32>) {
  %p = "ipu.matmul"(%a, %b) : (tensor<4x8xf32>, tensor<8x2xf32>) -> tensor<4x2xf32>
  %c = "ipu.conv"(%x, %w) {dilations = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x1x4x4xf32>, tensor<1x1x3x3xf32>) -> tensor<1x1x2x2xf32>
  return %p, %c : tensor<4x2xf32>, tensor<1x1x2x2xf32>
}

// -----

// torch-mlir's keepdim reductions index the output with a constant 0 on the kept unit dim.
// The planner wants outputs indexed by loops: the unit dim becomes a loop of extent 1 (the
// generic computes the squeezed tensor, then fusion moves the restoring reshape to the input).

// CHECK-DAG: #[[IN:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-DAG: #[[OUT:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @sum_keepdim
// CHECK: %[[X:.*]] = tensor.expand_shape %arg0 {{\[\[}}0], [1, 2], [3]] output_shape [2, 5, 1, 16] : tensor<2x5x16xf32> into tensor<2x5x1x16xf32>
// CHECK: %[[SUM:.*]] = linalg.generic {indexing_maps = [#[[IN]], #[[OUT]]], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
// CHECK-SAME: ins(%[[X]] : tensor<2x5x1x16xf32>) outs(%arg1 : tensor<2x5x1xf32>)
// CHECK: return %[[SUM]]
func.func @sum_keepdim(%x: tensor<2x5x16xf32>, %init: tensor<2x5x1xf32>) -> tensor<2x5x1xf32> {
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, 0)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x : tensor<2x5x16xf32>) outs(%init : tensor<2x5x1xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  } -> tensor<2x5x1xf32>
  return %r : tensor<2x5x1xf32>
}

// -----

// torch-mlir's softmax takes the row maximum with its index (a second result computed with
// linalg.index); the index is never read, so it is not computed.

// CHECK-LABEL: func.func @max_with_unused_index
// CHECK-NOT: linalg.index
// CHECK: %[[MAX:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]
// CHECK-SAME: outs(%{{.*}} : tensor<4xf32>)
// CHECK-NEXT: ^bb0(%[[X:.*]]: f32, %[[ACC:.*]]: f32):
// CHECK-NEXT: %[[M:.*]] = arith.maximumf %[[X]], %[[ACC]] : f32
// CHECK-NEXT: linalg.yield %[[M]] : f32
// CHECK: return %[[MAX]]
func.func @max_with_unused_index(%x: tensor<4x10xf32>) -> tensor<4xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %c0 = arith.constant 0 : i64
  %e = tensor.empty() : tensor<4xf32>
  %m0 = linalg.fill ins(%ninf : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %ei = tensor.empty() : tensor<4xi64>
  %i0 = linalg.fill ins(%c0 : i64) outs(%ei : tensor<4xi64>) -> tensor<4xi64>
  %r:2 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<4x10xf32>) outs(%m0, %i0 : tensor<4xf32>, tensor<4xi64>) {
  ^bb0(%in: f32, %acc: f32, %idx: i64):
    %j = linalg.index 1 : index
    %j64 = arith.index_cast %j : index to i64
    %m = arith.maximumf %in, %acc : f32
    %gt = arith.cmpf ogt, %in, %acc : f32
    %k = arith.select %gt, %j64, %idx : i64
    linalg.yield %m, %k : f32, i64
  } -> (tensor<4xf32>, tensor<4xi64>)
  return %r#0 : tensor<4xf32>
}

// -----

// A generic with several results (row sums and sums of squares in one pass, as fusion or
// torch-mlir may build them) becomes one generic per result, each with the body ops its
// yield needs: ipu-plan plans single-result ops.

// CHECK-LABEL: func.func @sum_and_sum_of_squares
// CHECK: %[[SUM:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]
// CHECK-SAME: ins(%[[X:.*]] : tensor<4x10xf32>) outs(%{{.*}} : tensor<4xf32>)
// CHECK-NEXT: ^bb0(%[[A:.*]]: f32, %[[ACC:.*]]: f32):
// CHECK-NEXT: %[[S:.*]] = arith.addf %[[A]], %[[ACC]] : f32
// CHECK-NEXT: linalg.yield %[[S]] : f32
// CHECK: %[[SQ:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]
// CHECK-SAME: ins(%[[X]] : tensor<4x10xf32>) outs(%{{.*}} : tensor<4xf32>)
// CHECK-NEXT: ^bb0(%[[B:.*]]: f32, %[[ACC2:.*]]: f32):
// CHECK-NEXT: %[[P:.*]] = arith.mulf %[[B]], %[[B]] : f32
// CHECK-NEXT: %[[Q:.*]] = arith.addf %[[P]], %[[ACC2]] : f32
// CHECK-NEXT: linalg.yield %[[Q]] : f32
// CHECK: return %[[SUM]], %[[SQ]]
func.func @sum_and_sum_of_squares(%x: tensor<4x10xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %r:2 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<4x10xf32>) outs(%z, %z : tensor<4xf32>, tensor<4xf32>) {
  ^bb0(%in: f32, %s: f32, %q: f32):
    %sum = arith.addf %in, %s : f32
    %sq = arith.mulf %in, %in : f32
    %sumsq = arith.addf %sq, %q : f32
    linalg.yield %sum, %sumsq : f32, f32
  } -> (tensor<4xf32>, tensor<4xf32>)
  return %r#0, %r#1 : tensor<4xf32>, tensor<4xf32>
}

// -----

// A result whose value reads another result's accumulator (an arg-max: the index follows the
// maximum) cannot be computed on its own: the generic stays whole, and ipu-plan rejects it.

// CHECK-LABEL: func.func @argmax
// CHECK: %{{.*}}:2 = linalg.generic
func.func @argmax(%x: tensor<4x10xf32>, %j: tensor<4x10xi64>) -> (tensor<4xf32>, tensor<4xi64>) {
  %ninf = arith.constant 0xFF800000 : f32
  %c0 = arith.constant 0 : i64
  %e = tensor.empty() : tensor<4xf32>
  %m0 = linalg.fill ins(%ninf : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %ei = tensor.empty() : tensor<4xi64>
  %i0 = linalg.fill ins(%c0 : i64) outs(%ei : tensor<4xi64>) -> tensor<4xi64>
  %r:2 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%x, %j : tensor<4x10xf32>, tensor<4x10xi64>) outs(%m0, %i0 : tensor<4xf32>, tensor<4xi64>) {
  ^bb0(%in: f32, %jn: i64, %acc: f32, %idx: i64):
    %m = arith.maximumf %in, %acc : f32
    %gt = arith.cmpf ogt, %in, %acc : f32
    %k = arith.select %gt, %jn, %idx : i64
    linalg.yield %m, %k : f32, i64
  } -> (tensor<4xf32>, tensor<4xi64>)
  return %r#0, %r#1 : tensor<4xf32>, tensor<4xi64>
}
