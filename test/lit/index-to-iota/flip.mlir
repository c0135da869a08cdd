// RUN: ipu-opt %s --split-input-file -p 'builtin.module(ipu-index-to-iota)' | FileCheck %s
// RUN: ipu-opt %s --split-input-file -p 'builtin.module(ipu-index-to-iota,ipu-fold-constants,canonicalize)' | FileCheck %s --check-prefix=FOLD

// A convolution's kernel flipped for the input's gradient, as torch-mlir lowers
// aten.convolution_backward: in and out channels swapped, both spatial dimensions read
// backwards. It becomes a copy: each spatial dimension reversed by its slices, then a generic
// reading the reversed weight through a permutation. No index, no gather, no iota.

// CHECK-LABEL: func.func @kernel_flip
// CHECK-SAME: (%[[W:.*]]: tensor<4x2x3x3xf32>)
// CHECK-DAG: %[[H0:.*]] = tensor.extract_slice %[[W]][0, 0, 2, 0] [4, 2, 1, 3] [1, 1, 1, 1]
// CHECK-DAG: %[[H2:.*]] = tensor.extract_slice %[[W]][0, 0, 0, 0] [4, 2, 1, 3] [1, 1, 1, 1]
// CHECK: %[[H:.*]] = tensor.concat dim(2) %[[H0]], %{{.*}}, %[[H2]]
// CHECK: %[[V:.*]] = tensor.concat dim(3)
// CHECK: linalg.generic {indexing_maps = [#[[PERM:.*]], #{{.*}}], {{.*}} ins(%[[V]] : tensor<4x2x3x3xf32>)
// CHECK-NEXT: ^bb0(%[[IN:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: linalg.yield %[[IN]] : f32
// CHECK-NOT: linalg.index
// CHECK-NOT: tensor.extract %
// FOLD-LABEL: func.func @kernel_flip
func.func @kernel_flip(%w: tensor<4x2x3x3xf32>) -> tensor<2x4x3x3xf32> {
  %c2 = arith.constant 2 : index
  %e = tensor.empty() : tensor<2x4x3x3xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%e : tensor<2x4x3x3xf32>) {
  ^bb0(%out: f32):
    %0 = linalg.index 0 : index
    %1 = linalg.index 1 : index
    %2 = linalg.index 2 : index
    %3 = linalg.index 3 : index
    %4 = arith.subi %c2, %2 : index
    %5 = arith.subi %c2, %3 : index
    %x = tensor.extract %w[%1, %0, %4, %5] : tensor<4x2x3x3xf32>
    linalg.yield %x : f32
  } -> tensor<2x4x3x3xf32>
  return %r : tensor<2x4x3x3xf32>
}

// -----

// A flip of a constant (ConvTranspose2d's weight in inference): folded at compile time.

// CHECK-LABEL: func.func @constant_flip
// FOLD-LABEL: func.func @constant_flip
// FOLD-NEXT: %[[C:.*]] = arith.constant dense<{{\[}}[3.000000e+00, 2.000000e+00, 1.000000e+00], [6.000000e+00, 5.000000e+00, 4.000000e+00]]> : tensor<2x3xf32>
// FOLD-NEXT: return %[[C]]
func.func @constant_flip() -> tensor<2x3xf32> {
  %c2 = arith.constant 2 : index
  %w = arith.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %e = tensor.empty() : tensor<2x3xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} outs(%e : tensor<2x3xf32>) {
  ^bb0(%out: f32):
    %0 = linalg.index 0 : index
    %1 = linalg.index 1 : index
    %2 = arith.subi %c2, %1 : index
    %x = tensor.extract %w[%0, %2] : tensor<2x3xf32>
    linalg.yield %x : f32
  } -> tensor<2x3xf32>
  return %r : tensor<2x3xf32>
}

// -----

// A read that is not a copy (a shifted window, `d + 1`, past the tensor's end otherwise) is
// left to ipu-convert-to-ipu's gather: its loop index becomes an iota input.

// CHECK-LABEL: func.func @shifted
// CHECK: arith.constant dense<[0, 1]> : tensor<2xi64>
// CHECK: tensor.extract %{{.*}}[%{{.*}}] : tensor<3xf32>
func.func @shifted(%w: tensor<3xf32>) -> tensor<2xf32> {
  %c1 = arith.constant 1 : index
  %e = tensor.empty() : tensor<2xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} outs(%e : tensor<2xf32>) {
  ^bb0(%out: f32):
    %0 = linalg.index 0 : index
    %1 = arith.addi %0, %c1 : index
    %x = tensor.extract %w[%1] : tensor<3xf32>
    linalg.yield %x : f32
  } -> tensor<2xf32>
  return %r : tensor<2xf32>
}
