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

// -----

// The arg-max of max_pool2d_with_indices (its backward scatters to it), as torch-mlir lowers
// it: each window read at `2 * oh + kh` by extracting from the padded input. The read becomes
// a window indexing map; the loop indices the body keeps (the flat index it yields) become
// iota inputs.

// CHECK: #[[WINDOW:map[0-9]*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (0, d1, d2 * 2 + d4, d3 * 2 + d5)>
// CHECK-LABEL: func.func @pool_argmax
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}, #[[WINDOW]], #{{.*}}, #{{.*}}, #{{.*}}, #{{.*}}, #{{.*}}],
// CHECK-NOT: tensor.extract %
// CHECK: return
func.func @pool_argmax(%padded: tensor<1x2x6x6xf32>, %max: tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xi64> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %none = arith.constant -1 : i64
  %taps = tensor.empty() : tensor<3x3xi64>
  %e = tensor.empty() : tensor<1x2x2x2xi64>
  %init = linalg.fill ins(%none : i64) outs(%e : tensor<1x2x2x2xi64>) -> tensor<1x2x2x2xi64>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d4, d5)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%max, %taps : tensor<1x2x2x2xf32>, tensor<3x3xi64>) outs(%init : tensor<1x2x2x2xi64>) {
  ^bb0(%in: f32, %tap: i64, %out: i64):
    %i1 = linalg.index 1 : index
    %i2 = linalg.index 2 : index
    %i4 = linalg.index 4 : index
    %a = arith.muli %i2, %c2 : index
    %h = arith.addi %a, %i4 : index
    %i3 = linalg.index 3 : index
    %i5 = linalg.index 5 : index
    %b = arith.muli %i3, %c2 : index
    %w = arith.addi %b, %i5 : index
    %x = tensor.extract %padded[%c0, %i1, %h, %w] : tensor<1x2x6x6xf32>
    %hit = arith.cmpf oeq, %x, %in : f32
    %hh = arith.subi %h, %c1 : index
    %ww = arith.subi %w, %c1 : index
    %row = arith.muli %hh, %c4 : index
    %flat = arith.addi %ww, %row : index
    %index = arith.index_cast %flat : index to i64
    %pick = arith.select %hit, %index, %out : i64
    %first = arith.cmpi eq, %out, %none : i64
    %keep = arith.select %first, %pick, %out : i64
    linalg.yield %keep : i64
  } -> tensor<1x2x2x2xi64>
  return %r : tensor<1x2x2x2xi64>
}
