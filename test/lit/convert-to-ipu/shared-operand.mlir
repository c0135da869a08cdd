// RUN: ipu-opt %s --split-input-file -p 'builtin.module(ipu-convert-to-ipu)' | FileCheck %s

// A batched product one of whose operands is the same for every batch index is one matmul,
// the batch folded into the other operand's rows (or columns): the shared operand then exists
// once, not once per batch index. torch-mlir emits `nn.Linear` on a batch of sequences (as
// nn.MultiheadAttention's fused projection) as `batch_matmul(x, broadcast(W))`; at BERT-base
// size and batch 2 the 128 copies of the 768x2304 weight took 906 MB.
// CHECK lines match the opening quote of `ipu.matmul"` with {{.}}: test_differential.py runs
// these cases as L0 programs against the reference.

// CHECK-LABEL: func.func @broadcast_rhs
// CHECK-SAME: (%[[X:.*]]: tensor<2x4x8xf32>, %[[W:.*]]: tensor<8x16xf32>)
// CHECK-NOT: linalg.generic
// CHECK: %[[R:.*]] = tensor.collapse_shape %[[X]] {{\[}}[0, 1], [2]] : tensor<2x4x8xf32> into tensor<8x8xf32>
// CHECK-NEXT: %[[P:.*]] = {{.}}ipu.matmul"(%[[R]], %[[W]]) : (tensor<8x8xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
// CHECK-NEXT: %[[E:.*]] = tensor.expand_shape %[[P]] {{\[}}[0, 1], [2]] output_shape [2, 4, 16] : tensor<8x16xf32> into tensor<2x4x16xf32>
// CHECK-NEXT: return %[[E]]
#w = affine_map<(b, k, n) -> (k, n)>
#id = affine_map<(b, k, n) -> (b, k, n)>
func.func @broadcast_rhs(%x: tensor<2x4x8xf32>, %w: tensor<8x16xf32>) -> tensor<2x4x16xf32> {
  %e = tensor.empty() : tensor<2x8x16xf32>
  %wb = linalg.generic {indexing_maps = [#w, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%w : tensor<8x16xf32>) outs(%e : tensor<2x8x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<2x8x16xf32>
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<2x4x16xf32>
  %fill = linalg.fill ins(%zero : f32) outs(%empty : tensor<2x4x16xf32>) -> tensor<2x4x16xf32>
  %m = linalg.batch_matmul ins(%x, %wb : tensor<2x4x8xf32>, tensor<2x8x16xf32>) outs(%fill : tensor<2x4x16xf32>) -> tensor<2x4x16xf32>
  return %m : tensor<2x4x16xf32>
}

// -----

// A named linalg.broadcast of a transposed weight (W stored as N x K, like nn.Linear's).

// CHECK-LABEL: func.func @named_broadcast_transposed
// CHECK: tensor.collapse_shape {{.*}} : tensor<3x4x8xf32> into tensor<12x8xf32>
// CHECK: linalg.generic
// CHECK-SAME: ins(%{{.*}} : tensor<16x8xf32>) outs(%{{.*}} : tensor<8x16xf32>)
// CHECK: {{.}}ipu.matmul"(%{{.*}}, %{{.*}}) : (tensor<12x8xf32>, tensor<8x16xf32>) -> tensor<12x16xf32>
// CHECK: tensor.expand_shape {{.*}} : tensor<12x16xf32> into tensor<3x4x16xf32>
func.func @named_broadcast_transposed(%x: tensor<3x4x8xf32>, %w: tensor<16x8xf32>) -> tensor<3x4x16xf32> {
  %e = tensor.empty() : tensor<3x16x8xf32>
  %wb = linalg.broadcast ins(%w : tensor<16x8xf32>) outs(%e : tensor<3x16x8xf32>) dimensions = [0]
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<3x4x16xf32>
  %fill = linalg.fill ins(%zero : f32) outs(%empty : tensor<3x4x16xf32>) -> tensor<3x4x16xf32>
  %m = linalg.batch_matmul indexing_maps = [affine_map<(b, m, n, k) -> (b, m, k)>, affine_map<(b, m, n, k) -> (b, n, k)>, affine_map<(b, m, n, k) -> (b, m, n)>]
      ins(%x, %wb : tensor<3x4x8xf32>, tensor<3x16x8xf32>) outs(%fill : tensor<3x4x16xf32>) -> tensor<3x4x16xf32>
  return %m : tensor<3x4x16xf32>
}

// -----

// The shared operand on the left: W @ x[b] for each b is W times the columns of every x[b]
// side by side, (M, K) x (K, B*N), then transposed back to (B, M, N).

// CHECK-LABEL: func.func @broadcast_lhs
// CHECK: linalg.generic
// CHECK-SAME: ins(%{{.*}} : tensor<2x8x16xf32>) outs(%{{.*}} : tensor<8x2x16xf32>)
// CHECK: tensor.collapse_shape {{.*}} : tensor<8x2x16xf32> into tensor<8x32xf32>
// CHECK: {{.}}ipu.matmul"(%{{.*}}, %{{.*}}) : (tensor<4x8xf32>, tensor<8x32xf32>) -> tensor<4x32xf32>
// CHECK: tensor.expand_shape {{.*}} : tensor<4x32xf32> into tensor<4x2x16xf32>
// CHECK: linalg.generic
// CHECK-SAME: ins(%{{.*}} : tensor<4x2x16xf32>) outs(%{{.*}} : tensor<2x4x16xf32>)
#wl = affine_map<(b, m, k) -> (m, k)>
#idl = affine_map<(b, m, k) -> (b, m, k)>
func.func @broadcast_lhs(%w: tensor<4x8xf32>, %x: tensor<2x8x16xf32>) -> tensor<2x4x16xf32> {
  %e = tensor.empty() : tensor<2x4x8xf32>
  %wb = linalg.generic {indexing_maps = [#wl, #idl], iterator_types = ["parallel", "parallel", "parallel"]} ins(%w : tensor<4x8xf32>) outs(%e : tensor<2x4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<2x4x8xf32>
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<2x4x16xf32>
  %fill = linalg.fill ins(%zero : f32) outs(%empty : tensor<2x4x16xf32>) -> tensor<2x4x16xf32>
  %m = linalg.batch_matmul ins(%wb, %x : tensor<2x4x8xf32>, tensor<2x8x16xf32>) outs(%fill : tensor<2x4x16xf32>) -> tensor<2x4x16xf32>
  return %m : tensor<2x4x16xf32>
}

// -----

// A generic that computes (here negates) while it broadcasts is no copy: the batches differ
// in nothing but the product stays batched, the computed operand materialized per batch.

// CHECK-LABEL: func.func @computed_broadcast
// CHECK: linalg.generic
// CHECK: arith.negf
// CHECK: {{.}}ipu.matmul"(%{{.*}}, %{{.*}}) : (tensor<2x4x8xf32>, tensor<2x8x16xf32>) -> tensor<2x4x16xf32>
#wn = affine_map<(b, k, n) -> (k, n)>
#idn = affine_map<(b, k, n) -> (b, k, n)>
func.func @computed_broadcast(%x: tensor<2x4x8xf32>, %w: tensor<8x16xf32>) -> tensor<2x4x16xf32> {
  %e = tensor.empty() : tensor<2x8x16xf32>
  %wb = linalg.generic {indexing_maps = [#wn, #idn], iterator_types = ["parallel", "parallel", "parallel"]} ins(%w : tensor<8x16xf32>) outs(%e : tensor<2x8x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %n = arith.negf %in : f32
    linalg.yield %n : f32
  } -> tensor<2x8x16xf32>
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<2x4x16xf32>
  %fill = linalg.fill ins(%zero : f32) outs(%empty : tensor<2x4x16xf32>) -> tensor<2x4x16xf32>
  %m = linalg.batch_matmul ins(%x, %wb : tensor<2x4x8xf32>, tensor<2x8x16xf32>) outs(%fill : tensor<2x4x16xf32>) -> tensor<2x4x16xf32>
  return %m : tensor<2x4x16xf32>
}
