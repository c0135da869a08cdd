// RUN: ipu-opt %s --split-input-file -p 'builtin.module(ipu-fp8-matmul)' | FileCheck %s
// RUN: ipu-opt %s --split-input-file > %t.plain
// RUN: ipu-opt %s --split-input-file -p 'builtin.module(ipu-fp8-matmul)' > %t.rewritten
// RUN: diff %t.plain %t.rewritten

// Whenever rewriting could change a bit, or the metadata could not say it, the IR stays as it
// is (the diff: byte for byte as parsed and printed without the pass). Each case is
// `(extf(a) * sa) @ (extf(b) * sb)` with one thing wrong.

// PyTorch's usual amax / 448 scale: the product's rounding would move.
#id = affine_map<(d0, d1) -> (d0, d1)>

// CHECK-LABEL: func.func @not_a_power_of_two
// CHECK: linalg.matmul
func.func @not_a_power_of_two(%aq: tensor<4x8xf8E4M3FN>, %bq: tensor<8x3xf8E4M3FN>) -> tensor<4x3xf32> {
  %sa = arith.constant 0.03 : f32
  %sb = arith.constant 0.25 : f32
  %e0 = tensor.empty() : tensor<4x8xf32>
  %a = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%aq : tensor<4x8xf8E4M3FN>) outs(%e0 : tensor<4x8xf32>) {
  ^bb0(%in: f8E4M3FN, %out: f32):
    %0 = arith.extf %in : f8E4M3FN to f32
    %1 = arith.mulf %0, %sa : f32
    linalg.yield %1 : f32
  } -> tensor<4x8xf32>
  %e1 = tensor.empty() : tensor<8x3xf32>
  %b = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%bq : tensor<8x3xf8E4M3FN>) outs(%e1 : tensor<8x3xf32>) {
  ^bb0(%in: f8E4M3FN, %out: f32):
    %0 = arith.extf %in : f8E4M3FN to f32
    %1 = arith.mulf %0, %sb : f32
    linalg.yield %1 : f32
  } -> tensor<8x3xf32>
  %zero = arith.constant 0.0 : f32
  %e2 = tensor.empty() : tensor<4x3xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e2 : tensor<4x3xf32>) -> tensor<4x3xf32>
  %y = linalg.matmul ins(%a, %b : tensor<4x8xf32>, tensor<8x3xf32>) outs(%acc : tensor<4x3xf32>) -> tensor<4x3xf32>
  return %y : tensor<4x3xf32>
}

// -----

// 2^20 * 2^20: beyond Poplar's log2 scales, [-32, 32).
#id = affine_map<(d0, d1) -> (d0, d1)>

// CHECK-LABEL: func.func @total_scale_out_of_range
// CHECK: linalg.matmul
func.func @total_scale_out_of_range(%aq: tensor<4x8xf8E4M3FN>, %bq: tensor<8x3xf8E4M3FN>) -> tensor<4x3xf32> {
  %sa = arith.constant 1048576.0 : f32
  %sb = arith.constant 1048576.0 : f32
  %e0 = tensor.empty() : tensor<4x8xf32>
  %a = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%aq : tensor<4x8xf8E4M3FN>) outs(%e0 : tensor<4x8xf32>) {
  ^bb0(%in: f8E4M3FN, %out: f32):
    %0 = arith.extf %in : f8E4M3FN to f32
    %1 = arith.mulf %0, %sa : f32
    linalg.yield %1 : f32
  } -> tensor<4x8xf32>
  %e1 = tensor.empty() : tensor<8x3xf32>
  %b = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%bq : tensor<8x3xf8E4M3FN>) outs(%e1 : tensor<8x3xf32>) {
  ^bb0(%in: f8E4M3FN, %out: f32):
    %0 = arith.extf %in : f8E4M3FN to f32
    %1 = arith.mulf %0, %sb : f32
    linalg.yield %1 : f32
  } -> tensor<8x3xf32>
  %zero = arith.constant 0.0 : f32
  %e2 = tensor.empty() : tensor<4x3xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e2 : tensor<4x3xf32>) -> tensor<4x3xf32>
  %y = linalg.matmul ins(%a, %b : tensor<4x8xf32>, tensor<8x3xf32>) outs(%acc : tensor<4x3xf32>) -> tensor<4x3xf32>
  return %y : tensor<4x3xf32>
}

// -----

// E4M3's smallest subnormal 2^-9 times 2^-16 is below f16's, 2^-24: the dequantized values round.
#id = affine_map<(d0, d1) -> (d0, d1)>

// CHECK-LABEL: func.func @inexact_in_f16
// CHECK: linalg.matmul
func.func @inexact_in_f16(%aq: tensor<4x8xf8E4M3FN>, %bq: tensor<8x3xf8E4M3FN>) -> tensor<4x3xf16> {
  %sa = arith.constant 1.52587890625e-05 : f16
  %sb = arith.constant 1.0 : f16
  %e0 = tensor.empty() : tensor<4x8xf16>
  %a = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%aq : tensor<4x8xf8E4M3FN>) outs(%e0 : tensor<4x8xf16>) {
  ^bb0(%in: f8E4M3FN, %out: f16):
    %0 = arith.extf %in : f8E4M3FN to f16
    %1 = arith.mulf %0, %sa : f16
    linalg.yield %1 : f16
  } -> tensor<4x8xf16>
  %e1 = tensor.empty() : tensor<8x3xf16>
  %b = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%bq : tensor<8x3xf8E4M3FN>) outs(%e1 : tensor<8x3xf16>) {
  ^bb0(%in: f8E4M3FN, %out: f16):
    %0 = arith.extf %in : f8E4M3FN to f16
    %1 = arith.mulf %0, %sb : f16
    linalg.yield %1 : f16
  } -> tensor<8x3xf16>
  %zero = arith.constant 0.0 : f16
  %e2 = tensor.empty() : tensor<4x3xf16>
  %acc = linalg.fill ins(%zero : f16) outs(%e2 : tensor<4x3xf16>) -> tensor<4x3xf16>
  %y = linalg.matmul ins(%a, %b : tensor<4x8xf16>, tensor<8x3xf16>) outs(%acc : tensor<4x3xf16>) -> tensor<4x3xf16>
  return %y : tensor<4x3xf16>
}

// -----

// a bf16 result: the metadata's products are into f16 or f32.
#id = affine_map<(d0, d1) -> (d0, d1)>

// CHECK-LABEL: func.func @bf16_sum
// CHECK: linalg.matmul
func.func @bf16_sum(%aq: tensor<4x8xf8E4M3FN>, %bq: tensor<8x3xf8E4M3FN>) -> tensor<4x3xbf16> {
  %sa = arith.constant 0.5 : bf16
  %sb = arith.constant 0.5 : bf16
  %e0 = tensor.empty() : tensor<4x8xbf16>
  %a = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%aq : tensor<4x8xf8E4M3FN>) outs(%e0 : tensor<4x8xbf16>) {
  ^bb0(%in: f8E4M3FN, %out: bf16):
    %0 = arith.extf %in : f8E4M3FN to bf16
    %1 = arith.mulf %0, %sa : bf16
    linalg.yield %1 : bf16
  } -> tensor<4x8xbf16>
  %e1 = tensor.empty() : tensor<8x3xbf16>
  %b = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%bq : tensor<8x3xf8E4M3FN>) outs(%e1 : tensor<8x3xbf16>) {
  ^bb0(%in: f8E4M3FN, %out: bf16):
    %0 = arith.extf %in : f8E4M3FN to bf16
    %1 = arith.mulf %0, %sb : bf16
    linalg.yield %1 : bf16
  } -> tensor<8x3xbf16>
  %zero = arith.constant 0.0 : bf16
  %e2 = tensor.empty() : tensor<4x3xbf16>
  %acc = linalg.fill ins(%zero : bf16) outs(%e2 : tensor<4x3xbf16>) -> tensor<4x3xbf16>
  %y = linalg.matmul ins(%a, %b : tensor<4x8xbf16>, tensor<8x3xbf16>) outs(%acc : tensor<4x3xbf16>) -> tensor<4x3xbf16>
  return %y : tensor<4x3xbf16>
}

// -----

// an `outs` that is not a zero fill: the product adds to it.
#id = affine_map<(d0, d1) -> (d0, d1)>

// CHECK-LABEL: func.func @accumulating
// CHECK: linalg.matmul
func.func @accumulating(%aq: tensor<4x8xf8E4M3FN>, %bq: tensor<8x3xf8E4M3FN>, %c: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %sa = arith.constant 0.5 : f32
  %sb = arith.constant 0.5 : f32
  %e0 = tensor.empty() : tensor<4x8xf32>
  %a = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%aq : tensor<4x8xf8E4M3FN>) outs(%e0 : tensor<4x8xf32>) {
  ^bb0(%in: f8E4M3FN, %out: f32):
    %0 = arith.extf %in : f8E4M3FN to f32
    %1 = arith.mulf %0, %sa : f32
    linalg.yield %1 : f32
  } -> tensor<4x8xf32>
  %e1 = tensor.empty() : tensor<8x3xf32>
  %b = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%bq : tensor<8x3xf8E4M3FN>) outs(%e1 : tensor<8x3xf32>) {
  ^bb0(%in: f8E4M3FN, %out: f32):
    %0 = arith.extf %in : f8E4M3FN to f32
    %1 = arith.mulf %0, %sb : f32
    linalg.yield %1 : f32
  } -> tensor<8x3xf32>
  %acc = arith.addf %c, %c : tensor<4x3xf32>
  %y = linalg.matmul ins(%a, %b : tensor<4x8xf32>, tensor<8x3xf32>) outs(%acc : tensor<4x3xf32>) -> tensor<4x3xf32>
  return %y : tensor<4x3xf32>
}

// -----

// An f16 operand scaled: f16 has no metadata to carry the scale.
#id = affine_map<(d0, d1) -> (d0, d1)>

// CHECK-LABEL: func.func @scaled_f16
// CHECK: linalg.matmul
func.func @scaled_f16(%aq: tensor<4x8xf16>, %bq: tensor<8x3xf16>) -> tensor<4x3xf32> {
  %sa = arith.constant 0.5 : f32
  %sb = arith.constant 0.25 : f32
  %e0 = tensor.empty() : tensor<4x8xf32>
  %a = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%aq : tensor<4x8xf16>) outs(%e0 : tensor<4x8xf32>) {
  ^bb0(%in: f16, %out: f32):
    %0 = arith.extf %in : f16 to f32
    %1 = arith.mulf %0, %sa : f32
    linalg.yield %1 : f32
  } -> tensor<4x8xf32>
  %e1 = tensor.empty() : tensor<8x3xf32>
  %b = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%bq : tensor<8x3xf16>) outs(%e1 : tensor<8x3xf32>) {
  ^bb0(%in: f16, %out: f32):
    %0 = arith.extf %in : f16 to f32
    %1 = arith.mulf %0, %sb : f32
    linalg.yield %1 : f32
  } -> tensor<8x3xf32>
  %zero = arith.constant 0.0 : f32
  %e2 = tensor.empty() : tensor<4x3xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e2 : tensor<4x3xf32>) -> tensor<4x3xf32>
  %y = linalg.matmul ins(%a, %b : tensor<4x8xf32>, tensor<8x3xf32>) outs(%acc : tensor<4x3xf32>) -> tensor<4x3xf32>
  return %y : tensor<4x3xf32>
}

