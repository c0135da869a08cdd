// RUN: ipu-opt %s --split-input-file -p 'builtin.module(ipu-convert-to-ipu)' | FileCheck %s
// The L1 output is plain MLIR for mlir-opt with the ipu dialect loaded from IRDL.
// RUN: ipu-opt %s --split-input-file -p 'builtin.module(ipu-convert-to-ipu)' | %mlir-opt-ipu --split-input-file > /dev/null

// CHECK lines match the opening quote of `ipu.matmul"` with {{.}}: test_differential.py runs the
// cases whose text has no quoted ipu op as L0 programs against the reference.

// A zero fill as `outs` is the ipu.matmul's own zero start: nothing is added.

// CHECK-LABEL: func.func @matmul
// CHECK-SAME: (%[[A:.*]]: tensor<4x8xf32>, %[[B:.*]]: tensor<8x16xf32>)
// CHECK-NEXT: %[[P:.*]] = {{.}}ipu.matmul"(%[[A]], %[[B]]) : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
// CHECK-NEXT: return %[[P]]
func.func @matmul(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>) -> tensor<4x16xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<4x16xf32>
  %fill = linalg.fill ins(%zero : f32) outs(%empty : tensor<4x16xf32>) -> tensor<4x16xf32>
  %m = linalg.matmul ins(%a, %b : tensor<4x8xf32>, tensor<8x16xf32>) outs(%fill : tensor<4x16xf32>) -> tensor<4x16xf32>
  return %m : tensor<4x16xf32>
}

// -----

// Any other `outs` is added element-wise.

// CHECK-LABEL: func.func @matmul_accumulate
// CHECK-SAME: (%[[A:.*]]: tensor<4x8xf32>, %[[B:.*]]: tensor<8x16xf32>, %[[C:.*]]: tensor<4x16xf32>)
// CHECK: %[[P:.*]] = {{.}}ipu.matmul"(%[[A]], %[[B]])
// CHECK: %[[SUM:.*]] = linalg.generic
// CHECK-SAME: ins(%[[P]], %[[C]] : tensor<4x16xf32>, tensor<4x16xf32>)
// CHECK: arith.addf
// CHECK: return %[[SUM]]
func.func @matmul_accumulate(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>, %c: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %m = linalg.matmul ins(%a, %b : tensor<4x8xf32>, tensor<8x16xf32>) outs(%c : tensor<4x16xf32>) -> tensor<4x16xf32>
  return %m : tensor<4x16xf32>
}

// -----

// torch-mlir's nn.Linear: a transposed weight, a zero-filled matmul, a bias add. The
// transpose of the constant weight is folded; the bias add stays element-wise.

// CHECK-LABEL: func.func @linear
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xf32>)
// CHECK: %[[WT:.*]] = arith.constant dense<{{\[\[}}1.000000e+00, 4.000000e+00], [2.000000e+00, 5.000000e+00], [3.000000e+00, 6.000000e+00]]> : tensor<3x2xf32>
// CHECK: %[[P:.*]] = {{.}}ipu.matmul"(%[[X]], %[[WT]]) : (tensor<2x3xf32>, tensor<3x2xf32>) -> tensor<2x2xf32>
// CHECK: linalg.generic
// CHECK-SAME: ins(%[[P]], %{{.*}} : tensor<2x2xf32>, tensor<2xf32>)
// CHECK: arith.addf
func.func @linear(%x: tensor<2x3xf32>) -> tensor<2x2xf32> {
  %w = arith.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %bias = arith.constant dense<[0.5, -0.5]> : tensor<2xf32>
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<3x2xf32>
  %wt = linalg.transpose ins(%w : tensor<2x3xf32>) outs(%e0 : tensor<3x2xf32>) permutation = [1, 0]
  %e1 = tensor.empty() : tensor<2x2xf32>
  %fill = linalg.fill ins(%zero : f32) outs(%e1 : tensor<2x2xf32>) -> tensor<2x2xf32>
  %m = linalg.matmul ins(%x, %wt : tensor<2x3xf32>, tensor<3x2xf32>) outs(%fill : tensor<2x2xf32>) -> tensor<2x2xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%m, %bias : tensor<2x2xf32>, tensor<2xf32>) outs(%e1 : tensor<2x2xf32>) {
  ^bb0(%in: f32, %b: f32, %out: f32):
    %s = arith.addf %in, %b : f32
    linalg.yield %s : f32
  } -> tensor<2x2xf32>
  return %y : tensor<2x2xf32>
}

// -----

// f16 x f16 accumulating in f32: the ipu.matmul reads f16 and yields f32.

// CHECK-LABEL: func.func @batch_matmul
// CHECK-NEXT: %[[P:.*]] = {{.}}ipu.matmul"(%arg0, %arg1) : (tensor<3x4x8xf16>, tensor<3x8x16xf16>) -> tensor<3x4x16xf32>
// CHECK-NEXT: return %[[P]]
func.func @batch_matmul(%a: tensor<3x4x8xf16>, %b: tensor<3x8x16xf16>) -> tensor<3x4x16xf32> {
  %zero = arith.constant dense<0.0> : tensor<3x4x16xf32>
  %m = linalg.batch_matmul ins(%a, %b : tensor<3x4x8xf16>, tensor<3x8x16xf16>) outs(%zero : tensor<3x4x16xf32>) -> tensor<3x4x16xf32>
  return %m : tensor<3x4x16xf32>
}

// -----

// matvec: the vector becomes a K x 1 matrix, the product a column collapsed back.

// CHECK-LABEL: func.func @matvec
// CHECK-SAME: (%[[A:.*]]: tensor<4x8xf32>, %[[V:.*]]: tensor<8xf32>)
// CHECK-NEXT: %[[COL:.*]] = tensor.expand_shape %[[V]] {{\[\[}}0, 1]] output_shape [8, 1] : tensor<8xf32> into tensor<8x1xf32>
// CHECK-NEXT: %[[P:.*]] = {{.}}ipu.matmul"(%[[A]], %[[COL]]) : (tensor<4x8xf32>, tensor<8x1xf32>) -> tensor<4x1xf32>
// CHECK-NEXT: %[[R:.*]] = tensor.collapse_shape %[[P]] {{\[\[}}0, 1]] : tensor<4x1xf32> into tensor<4xf32>
// CHECK-NEXT: return %[[R]]
func.func @matvec(%a: tensor<4x8xf32>, %v: tensor<8xf32>) -> tensor<4xf32> {
  %zero = arith.constant dense<0.0> : tensor<4xf32>
  %m = linalg.matvec ins(%a, %v : tensor<4x8xf32>, tensor<8xf32>) outs(%zero : tensor<4xf32>) -> tensor<4xf32>
  return %m : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @vecmat
// CHECK-SAME: (%[[V:.*]]: tensor<8xf32>, %[[B:.*]]: tensor<8x16xf32>)
// CHECK-NEXT: %[[ROW:.*]] = tensor.expand_shape %[[V]] {{\[\[}}0, 1]] output_shape [1, 8] : tensor<8xf32> into tensor<1x8xf32>
// CHECK-NEXT: %[[P:.*]] = {{.}}ipu.matmul"(%[[ROW]], %[[B]]) : (tensor<1x8xf32>, tensor<8x16xf32>) -> tensor<1x16xf32>
// CHECK-NEXT: %[[R:.*]] = tensor.collapse_shape %[[P]] {{\[\[}}0, 1]] : tensor<1x16xf32> into tensor<16xf32>
// CHECK-NEXT: return %[[R]]
func.func @vecmat(%v: tensor<8xf32>, %b: tensor<8x16xf32>) -> tensor<16xf32> {
  %zero = arith.constant dense<0.0> : tensor<16xf32>
  %m = linalg.vecmat ins(%v, %b : tensor<8xf32>, tensor<8x16xf32>) outs(%zero : tensor<16xf32>) -> tensor<16xf32>
  return %m : tensor<16xf32>
}

// -----

// CHECK-LABEL: func.func @batch_matvec
// CHECK-NEXT: %[[COL:.*]] = tensor.expand_shape %arg1 {{\[\[}}0], [1, 2]] output_shape [2, 8, 1] : tensor<2x8xf32> into tensor<2x8x1xf32>
// CHECK-NEXT: %[[P:.*]] = {{.}}ipu.matmul"(%arg0, %[[COL]]) : (tensor<2x4x8xf32>, tensor<2x8x1xf32>) -> tensor<2x4x1xf32>
// CHECK-NEXT: tensor.collapse_shape %[[P]] {{\[\[}}0], [1, 2]] : tensor<2x4x1xf32> into tensor<2x4xf32>
func.func @batch_matvec(%a: tensor<2x4x8xf32>, %v: tensor<2x8xf32>) -> tensor<2x4xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<2x4xf32>
  %fill = linalg.fill ins(%zero : f32) outs(%empty : tensor<2x4xf32>) -> tensor<2x4xf32>
  %m = linalg.batch_matvec ins(%a, %v : tensor<2x4x8xf32>, tensor<2x8xf32>) outs(%fill : tensor<2x4xf32>) -> tensor<2x4xf32>
  return %m : tensor<2x4xf32>
}

// -----

// dot: a 1 x K by K x 1 product, collapsed to rank 0, plus the init.

// CHECK-LABEL: func.func @dot
// CHECK: %[[P:.*]] = {{.}}ipu.matmul"(%{{.*}}, %{{.*}}) : (tensor<1x8xi32>, tensor<8x1xi32>) -> tensor<1x1xi32>
// CHECK: %[[S:.*]] = tensor.collapse_shape %[[P]] [] : tensor<1x1xi32> into tensor<i32>
// CHECK: linalg.generic
// CHECK-SAME: ins(%[[S]], %arg2 : tensor<i32>, tensor<i32>)
// CHECK: arith.addi
func.func @dot(%a: tensor<8xi32>, %b: tensor<8xi32>, %c: tensor<i32>) -> tensor<i32> {
  %d = linalg.dot ins(%a, %b : tensor<8xi32>, tensor<8xi32>) outs(%c : tensor<i32>) -> tensor<i32>
  return %d : tensor<i32>
}

// -----

// i8 x i8 -> i32: the ipu.matmul reads i8 and yields i32 (signed, as linalg's default cast).

// CHECK-LABEL: func.func @matmul_i8
// CHECK-NEXT: %[[P:.*]] = {{.}}ipu.matmul"(%arg0, %arg1) : (tensor<4x8xi8>, tensor<8x16xi8>) -> tensor<4x16xi32>
// CHECK-NEXT: return %[[P]]
func.func @matmul_i8(%a: tensor<4x8xi8>, %b: tensor<8x16xi8>) -> tensor<4x16xi32> {
  %zero = arith.constant 0 : i32
  %empty = tensor.empty() : tensor<4x16xi32>
  %fill = linalg.fill ins(%zero : i32) outs(%empty : tensor<4x16xi32>) -> tensor<4x16xi32>
  %m = linalg.matmul ins(%a, %b : tensor<4x8xi8>, tensor<8x16xi8>) outs(%fill : tensor<4x16xi32>) -> tensor<4x16xi32>
  return %m : tensor<4x16xi32>
}

// -----

// An unsigned cast is explicit: the operands are zero-extended first.

// CHECK-LABEL: func.func @matmul_unsigned
// CHECK: %[[A:.*]] = linalg.generic
// CHECK-SAME: ins(%arg0 : tensor<4x8xi8>)
// CHECK: arith.extui %{{.*}} : i8 to i32
// CHECK: %[[B:.*]] = linalg.generic
// CHECK-SAME: ins(%arg1 : tensor<8x16xi8>)
// CHECK: arith.extui %{{.*}} : i8 to i32
// CHECK: {{.}}ipu.matmul"(%[[A]], %[[B]]) : (tensor<4x8xi32>, tensor<8x16xi32>) -> tensor<4x16xi32>
func.func @matmul_unsigned(%a: tensor<4x8xi8>, %b: tensor<8x16xi8>) -> tensor<4x16xi32> {
  %zero = arith.constant 0 : i32
  %empty = tensor.empty() : tensor<4x16xi32>
  %fill = linalg.fill ins(%zero : i32) outs(%empty : tensor<4x16xi32>) -> tensor<4x16xi32>
  %m = linalg.matmul {cast = #linalg.type_fn<cast_unsigned>} ins(%a, %b : tensor<4x8xi8>, tensor<8x16xi8>) outs(%fill : tensor<4x16xi32>) -> tensor<4x16xi32>
  return %m : tensor<4x16xi32>
}

// -----

// Transposing indexing maps: the operands are transposed (and here cast f16 -> f32, since
// the operand types differ) into M x K and K x N first.

// CHECK-DAG: #[[T:.*]] = affine_map<(d0, d1) -> (d1, d0)>
// CHECK-DAG: #[[ID:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @matmul_transposed
// CHECK: %[[A:.*]] = linalg.generic {indexing_maps = [#[[T]], #[[ID]]]
// CHECK-SAME: ins(%arg0 : tensor<8x4xf16>) outs(%{{.*}} : tensor<4x8xf32>)
// CHECK: arith.extf %{{.*}} : f16 to f32
// CHECK: %[[B:.*]] = linalg.generic {indexing_maps = [#[[T]], #[[ID]]]
// CHECK-SAME: ins(%arg1 : tensor<16x8xf32>) outs(%{{.*}} : tensor<8x16xf32>)
// CHECK: {{.}}ipu.matmul"(%[[A]], %[[B]]) : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
func.func @matmul_transposed(%a: tensor<8x4xf16>, %b: tensor<16x8xf32>) -> tensor<4x16xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<4x16xf32>
  %fill = linalg.fill ins(%zero : f32) outs(%empty : tensor<4x16xf32>) -> tensor<4x16xf32>
  %m = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (k, m)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%a, %b : tensor<8x4xf16>, tensor<16x8xf32>) outs(%fill : tensor<4x16xf32>) -> tensor<4x16xf32>
  return %m : tensor<4x16xf32>
}

// -----

// A broadcast operand (no m in the lhs) is not a matmul operand: the op is generalized,
// which computes the same.

// CHECK-LABEL: func.func @matmul_broadcast_lhs
// CHECK-NOT: ipu.matmul
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel", "reduction"]
// CHECK: arith.mulf
// CHECK: arith.addf
func.func @matmul_broadcast_lhs(%a: tensor<8xf32>, %b: tensor<3x8x16xf32>) -> tensor<3x4x16xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<3x4x16xf32>
  %fill = linalg.fill ins(%zero : f32) outs(%empty : tensor<3x4x16xf32>) -> tensor<3x4x16xf32>
  %m = linalg.batch_matmul indexing_maps = [affine_map<(b, m, n, k) -> (k)>, affine_map<(b, m, n, k) -> (b, k, n)>, affine_map<(b, m, n, k) -> (b, m, n)>]
      ins(%a, %b : tensor<8xf32>, tensor<3x8x16xf32>) outs(%fill : tensor<3x4x16xf32>) -> tensor<3x4x16xf32>
  return %m : tensor<3x4x16xf32>
}

// -----

// i1 products accumulate with `or` in linalg: left to the generic form.

// CHECK-LABEL: func.func @matmul_i1
// CHECK-NOT: ipu.matmul
// CHECK: linalg.generic
// CHECK: arith.andi
// CHECK: arith.ori
func.func @matmul_i1(%a: tensor<4x8xi1>, %b: tensor<8x16xi1>, %c: tensor<4x16xi1>) -> tensor<4x16xi1> {
  %m = linalg.matmul ins(%a, %b : tensor<4x8xi1>, tensor<8x16xi1>) outs(%c : tensor<4x16xi1>) -> tensor<4x16xi1>
  return %m : tensor<4x16xi1>
}
