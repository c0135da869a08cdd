// RUN: ipu-opt %s --split-input-file -p 'builtin.module(ipu-fp8-matmul)' | FileCheck %s

// A scaled FP8 linear layer as torch-mlir exports it: the activation dequantized by `* 2^-5`,
// the weight by `* 2^-6` then transposed, an f32 matmul into a zero fill. It becomes one FP8
// product with log2 scale -11, the transpose moved onto the FP8 weight, the dequantizing
// generics erased.

#id = affine_map<(d0, d1) -> (d0, d1)>

// CHECK-LABEL: func.func @linear
// CHECK: %[[T:.*]] = linalg.transpose ins(%arg1 : tensor<32x16xf8E4M3FN>) outs(%{{.*}} : tensor<16x32xf8E4M3FN>) permutation = [1, 0]
// CHECK: %[[P:.*]] = "ipu.matmul"(%arg0, %[[T]]) {ipu.quarter = {format = "e4m3fn", log2_scale = -11 : i32}} : (tensor<4x16xf8E4M3FN>, tensor<16x32xf8E4M3FN>) -> tensor<4x32xf32>
// CHECK-NOT: linalg.generic
// CHECK-NOT: linalg.matmul
// CHECK: return %[[P]]
func.func @linear(%xq: tensor<4x16xf8E4M3FN>, %wq: tensor<32x16xf8E4M3FN>) -> tensor<4x32xf32> {
  %zero = arith.constant 0.0 : f32
  %xs = arith.constant 3.125000e-02 : f32
  %ws = arith.constant 1.562500e-02 : f32
  %e0 = tensor.empty() : tensor<4x16xf32>
  %x = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%xq : tensor<4x16xf8E4M3FN>) outs(%e0 : tensor<4x16xf32>) {
  ^bb0(%in: f8E4M3FN, %out: f32):
    %0 = arith.extf %in : f8E4M3FN to f32
    %1 = arith.mulf %0, %xs : f32
    linalg.yield %1 : f32
  } -> tensor<4x16xf32>
  %e1 = tensor.empty() : tensor<32x16xf32>
  %w0 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%wq : tensor<32x16xf8E4M3FN>) outs(%e1 : tensor<32x16xf32>) {
  ^bb0(%in: f8E4M3FN, %out: f32):
    %0 = arith.extf %in : f8E4M3FN to f32
    linalg.yield %0 : f32
  } -> tensor<32x16xf32>
  %w1 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%w0 : tensor<32x16xf32>) outs(%e1 : tensor<32x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.mulf %ws, %in : f32
    linalg.yield %0 : f32
  } -> tensor<32x16xf32>
  %e2 = tensor.empty() : tensor<16x32xf32>
  %w = linalg.transpose ins(%w1 : tensor<32x16xf32>) outs(%e2 : tensor<16x32xf32>) permutation = [1, 0]
  %e3 = tensor.empty() : tensor<4x32xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e3 : tensor<4x32xf32>) -> tensor<4x32xf32>
  %y = linalg.matmul ins(%x, %w : tensor<4x16xf32>, tensor<16x32xf32>) outs(%acc : tensor<4x32xf32>) -> tensor<4x32xf32>
  return %y : tensor<4x32xf32>
}

// -----

// Graphcore's format, a division by the scale, a batched product into f16 (PopXL's result
// type: the f32 sum rounded once), dequantized in f16 where 240 * 2^2 and 2^-10 * 2^-2 are
// exact. The scales sum: 2 (x * 4) - 3 (w / 8) = -1.

#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>

// CHECK-LABEL: func.func @batched_f16
// CHECK: %[[P:.*]] = "ipu.matmul"(%arg0, %arg1) {ipu.quarter = {format = "f143", log2_scale = -1 : i32}} : (tensor<2x4x8xf8E4M3FNUZ>, tensor<2x8x3xf8E4M3FNUZ>) -> tensor<2x4x3xf16>
// CHECK-NOT: linalg.
// CHECK: return %[[P]]
func.func @batched_f16(%aq: tensor<2x4x8xf8E4M3FNUZ>, %bq: tensor<2x8x3xf8E4M3FNUZ>) -> tensor<2x4x3xf16> {
  %zero = arith.constant 0.0 : f16
  %e0 = tensor.empty() : tensor<2x4x8xf16>
  %a = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%aq : tensor<2x4x8xf8E4M3FNUZ>) outs(%e0 : tensor<2x4x8xf16>) {
  ^bb0(%in: f8E4M3FNUZ, %out: f16):
    %four = arith.constant 4.0 : f16
    %0 = arith.extf %in : f8E4M3FNUZ to f16
    %1 = arith.mulf %0, %four : f16
    linalg.yield %1 : f16
  } -> tensor<2x4x8xf16>
  %e1 = tensor.empty() : tensor<2x8x3xf16>
  %b = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%bq : tensor<2x8x3xf8E4M3FNUZ>) outs(%e1 : tensor<2x8x3xf16>) {
  ^bb0(%in: f8E4M3FNUZ, %out: f16):
    %eight = arith.constant 8.0 : f16
    %0 = arith.extf %in : f8E4M3FNUZ to f16
    %1 = arith.divf %0, %eight : f16
    linalg.yield %1 : f16
  } -> tensor<2x8x3xf16>
  %e2 = tensor.empty() : tensor<2x4x3xf16>
  %acc = linalg.fill ins(%zero : f16) outs(%e2 : tensor<2x4x3xf16>) -> tensor<2x4x3xf16>
  %y = linalg.batch_matmul ins(%a, %b : tensor<2x4x8xf16>, tensor<2x8x3xf16>) outs(%acc : tensor<2x4x3xf16>) -> tensor<2x4x3xf16>
  return %y : tensor<2x4x3xf16>
}

// -----

// PyTorch's f16 linear layer on the CPU: both operands widened to f32 for an f32 product
// (its decomposition upcasts). Products of f16 values are exact in f32, so it is an f16
// product into f32, priced at the f16 rate; no scale, no metadata.

#id = affine_map<(d0, d1) -> (d0, d1)>

// CHECK-LABEL: func.func @f16_widened
// CHECK: %[[P:.*]] = "ipu.matmul"(%arg0, %arg1) : (tensor<4x8xf16>, tensor<8x3xf16>) -> tensor<4x3xf32>
// CHECK-NOT: ipu.quarter
// CHECK: return %[[P]]
func.func @f16_widened(%a16: tensor<4x8xf16>, %b16: tensor<8x3xf16>) -> tensor<4x3xf32> {
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<4x8xf32>
  %a = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%a16 : tensor<4x8xf16>) outs(%e0 : tensor<4x8xf32>) {
  ^bb0(%in: f16, %out: f32):
    %0 = arith.extf %in : f16 to f32
    linalg.yield %0 : f32
  } -> tensor<4x8xf32>
  %e1 = tensor.empty() : tensor<8x3xf32>
  %b = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%b16 : tensor<8x3xf16>) outs(%e1 : tensor<8x3xf32>) {
  ^bb0(%in: f16, %out: f32):
    %0 = arith.extf %in : f16 to f32
    linalg.yield %0 : f32
  } -> tensor<8x3xf32>
  %e2 = tensor.empty() : tensor<4x3xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e2 : tensor<4x3xf32>) -> tensor<4x3xf32>
  %y = linalg.matmul ins(%a, %b : tensor<4x8xf32>, tensor<8x3xf32>) outs(%acc : tensor<4x3xf32>) -> tensor<4x3xf32>
  return %y : tensor<4x3xf32>
}
