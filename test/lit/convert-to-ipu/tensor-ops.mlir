// RUN: ipu-opt %s --split-input-file -p 'builtin.module(ipu-convert-to-ipu)' | FileCheck %s

// Static tensor ops with unit strides are L1 as they are.

// CHECK-LABEL: func.func @tensor_ops
// CHECK-SAME: (%[[X:.*]]: tensor<4x6xf32>, %[[Y:.*]]: tensor<2x6xf32>)
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[C:.*]] = tensor.concat dim(0) %[[X]], %[[Y]] : (tensor<4x6xf32>, tensor<2x6xf32>) -> tensor<6x6xf32>
// CHECK-NEXT: %[[S:.*]] = tensor.extract_slice %[[C]][1, 0] [3, 6] [1, 1] : tensor<6x6xf32> to tensor<3x6xf32>
// CHECK-NEXT: %[[I:.*]] = tensor.insert_slice %[[S]] into %[[C]][0, 0] [3, 6] [1, 1] : tensor<3x6xf32> into tensor<6x6xf32>
// CHECK-NEXT: %[[P:.*]] = tensor.pad %[[I]] low[1, 0] high[0, 2]
// CHECK: tensor.yield %[[ONE]] : f32
// CHECK: } : tensor<6x6xf32> to tensor<7x8xf32>
// CHECK-NEXT: %[[F:.*]] = tensor.collapse_shape %[[P]] {{\[\[}}0, 1]] : tensor<7x8xf32> into tensor<56xf32>
// CHECK-NEXT: %[[E:.*]] = tensor.expand_shape %[[S]] {{\[\[}}0], [1, 2]] output_shape [3, 2, 3] : tensor<3x6xf32> into tensor<3x2x3xf32>
// CHECK-NEXT: return %[[F]], %[[E]]
func.func @tensor_ops(%x: tensor<4x6xf32>, %y: tensor<2x6xf32>) -> (tensor<56xf32>, tensor<3x2x3xf32>) {
  %one = arith.constant 1.0 : f32
  %c = tensor.concat dim(0) %x, %y : (tensor<4x6xf32>, tensor<2x6xf32>) -> tensor<6x6xf32>
  %s = tensor.extract_slice %c[1, 0] [3, 6] [1, 1] : tensor<6x6xf32> to tensor<3x6xf32>
  %i = tensor.insert_slice %s into %c[0, 0] [3, 6] [1, 1] : tensor<3x6xf32> into tensor<6x6xf32>
  %p = tensor.pad %i low[1, 0] high[0, 2] {
  ^bb0(%a: index, %b: index):
    tensor.yield %one : f32
  } : tensor<6x6xf32> to tensor<7x8xf32>
  %f = tensor.collapse_shape %p [[0, 1]] : tensor<7x8xf32> into tensor<56xf32>
  %e = tensor.expand_shape %s [[0], [1, 2]] output_shape [3, 2, 3] : tensor<3x6xf32> into tensor<3x2x3xf32>
  return %f, %e : tensor<56xf32>, tensor<3x2x3xf32>
}

// -----

// Rank-reducing slices become full-rank slices and reshapes (what the planner places).

// CHECK-LABEL: func.func @rank_reducing
// CHECK-NEXT: %[[S:.*]] = tensor.extract_slice %arg0[0, 2, 0] [1, 1, 5] [1, 1, 1] : tensor<2x3x5xi8> to tensor<1x1x5xi8>
// CHECK-NEXT: %[[V:.*]] = tensor.collapse_shape %[[S]] {{\[\[}}0, 1, 2]] : tensor<1x1x5xi8> into tensor<5xi8>
// CHECK-NEXT: %[[R:.*]] = tensor.expand_shape %[[V]] {{\[\[}}0, 1]] output_shape [1, 5] : tensor<5xi8> into tensor<1x5xi8>
// CHECK-NEXT: %[[I:.*]] = tensor.insert_slice %[[R]] into %arg1[3, 0] [1, 5] [1, 1] : tensor<1x5xi8> into tensor<4x5xi8>
// CHECK-NEXT: return %[[V]], %[[I]]
func.func @rank_reducing(%x: tensor<2x3x5xi8>, %y: tensor<4x5xi8>) -> (tensor<5xi8>, tensor<4x5xi8>) {
  %s = tensor.extract_slice %x[0, 2, 0] [1, 1, 5] [1, 1, 1] : tensor<2x3x5xi8> to tensor<5xi8>
  %i = tensor.insert_slice %s into %y[3, 0] [1, 5] [1, 1] : tensor<5xi8> into tensor<4x5xi8>
  return %s, %i : tensor<5xi8>, tensor<4x5xi8>
}

// -----

// Slices inserted side by side into a tensor.empty, covering it, are a concat (in any
// order); other inserts into a tensor.empty (here the four quarters of a 4x4) write into
// zeros instead, which the planner can place.

// CHECK-LABEL: func.func @inserts_into_empty
// CHECK: %[[C:.*]] = tensor.concat dim(0) %arg1, %arg0 : (tensor<2x4xf32>, tensor<3x4xf32>) -> tensor<5x4xf32>
// CHECK: %[[Z:.*]] = arith.constant dense<0.000000e+00> : tensor<4x4xf32>
// CHECK: %[[Q0:.*]] = tensor.insert_slice %arg2 into %[[Z]][0, 0] [2, 2] [1, 1]
// CHECK: %[[Q1:.*]] = tensor.insert_slice %arg2 into %[[Q0]][0, 2] [2, 2] [1, 1]
// CHECK: %[[Q2:.*]] = tensor.insert_slice %arg2 into %[[Q1]][2, 0] [2, 2] [1, 1]
// CHECK: %[[Q3:.*]] = tensor.insert_slice %arg2 into %[[Q2]][2, 2] [2, 2] [1, 1]
// CHECK: return %[[C]], %[[Q3]]
func.func @inserts_into_empty(%a: tensor<3x4xf32>, %b: tensor<2x4xf32>, %q: tensor<2x2xf32>) -> (tensor<5x4xf32>, tensor<4x4xf32>) {
  %e = tensor.empty() : tensor<5x4xf32>
  %0 = tensor.insert_slice %a into %e[2, 0] [3, 4] [1, 1] : tensor<3x4xf32> into tensor<5x4xf32>
  %1 = tensor.insert_slice %b into %0[0, 0] [2, 4] [1, 1] : tensor<2x4xf32> into tensor<5x4xf32>
  %f = tensor.empty() : tensor<4x4xf32>
  %2 = tensor.insert_slice %q into %f[0, 0] [2, 2] [1, 1] : tensor<2x2xf32> into tensor<4x4xf32>
  %3 = tensor.insert_slice %q into %2[0, 2] [2, 2] [1, 1] : tensor<2x2xf32> into tensor<4x4xf32>
  %4 = tensor.insert_slice %q into %3[2, 0] [2, 2] [1, 1] : tensor<2x2xf32> into tensor<4x4xf32>
  %5 = tensor.insert_slice %q into %4[2, 2] [2, 2] [1, 1] : tensor<2x2xf32> into tensor<4x4xf32>
  return %1, %5 : tensor<5x4xf32>, tensor<4x4xf32>
}
