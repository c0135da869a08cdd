// RUN: ipu-opt %s --split-input-file -p 'builtin.module(ipu-convert-to-ipu)' | FileCheck %s

// Slices with static non-unit strides are L1 as they are: ipu-schedule turns each into one
// exchange whose copies step through the source (extract) or the destination (insert).

// x[1::3, :, ::2] as torch-mlir writes it: two strided extract_slices.
// CHECK-LABEL: func.func @strided_extract
// CHECK-NEXT: %[[A:.*]] = tensor.extract_slice %arg0[1, 0, 0] [2, 3, 9] [3, 1, 1] : tensor<7x3x9xf32> to tensor<2x3x9xf32>
// CHECK-NEXT: %[[B:.*]] = tensor.extract_slice %[[A]][0, 0, 0] [2, 3, 5] [1, 1, 2] : tensor<2x3x9xf32> to tensor<2x3x5xf32>
// CHECK-NEXT: return %[[B]]
func.func @strided_extract(%x: tensor<7x3x9xf32>) -> tensor<2x3x5xf32> {
  %a = tensor.extract_slice %x[1, 0, 0] [2, 3, 9] [3, 1, 1] : tensor<7x3x9xf32> to tensor<2x3x9xf32>
  %b = tensor.extract_slice %a[0, 0, 0] [2, 3, 5] [1, 1, 2] : tensor<2x3x9xf32> to tensor<2x3x5xf32>
  return %b : tensor<2x3x5xf32>
}

// -----

// ConvTranspose2d's input dilation as torch-mlir writes it: a strided insert_slice into a
// zero fill (the fill becomes a generic; the insert stays).
// CHECK-LABEL: func.func @strided_insert
// CHECK: %[[Z:.*]] = linalg.generic
// CHECK: %[[I:.*]] = tensor.insert_slice %arg0 into %[[Z]][0, 0, 1, 1] [1, 2, 5, 5] [1, 1, 2, 2] : tensor<1x2x5x5xf32> into tensor<1x2x12x12xf32>
// CHECK-NEXT: return %[[I]]
func.func @strided_insert(%x: tensor<1x2x5x5xf32>) -> tensor<1x2x12x12xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x2x12x12xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<1x2x12x12xf32>) -> tensor<1x2x12x12xf32>
  %i = tensor.insert_slice %x into %z[0, 0, 1, 1] [1, 2, 5, 5] [1, 1, 2, 2] : tensor<1x2x5x5xf32> into tensor<1x2x12x12xf32>
  return %i : tensor<1x2x12x12xf32>
}

// -----

// A rank-reducing strided slice becomes a full-rank strided slice and a reshape.
// CHECK-LABEL: func.func @strided_rank_reducing
// CHECK-NEXT: %[[S:.*]] = tensor.extract_slice %arg0[2, 1] [1, 4] [1, 2] : tensor<4x8xf32> to tensor<1x4xf32>
// CHECK-NEXT: %[[V:.*]] = tensor.collapse_shape %[[S]] {{\[\[}}0, 1]] : tensor<1x4xf32> into tensor<4xf32>
// CHECK-NEXT: return %[[V]]
func.func @strided_rank_reducing(%x: tensor<4x8xf32>) -> tensor<4xf32> {
  %s = tensor.extract_slice %x[2, 1] [1, 4] [1, 2] : tensor<4x8xf32> to tensor<4xf32>
  return %s : tensor<4xf32>
}
