// RUN: ipu-opt %s --split-input-file -p 'builtin.module(ipu-fp8-conv)' | FileCheck %s
// RUN: ipu-opt %s --split-input-file > %t.plain
// RUN: ipu-opt %s --split-input-file -p 'builtin.module(ipu-fp8-conv)' > %t.rewritten
// RUN: diff %t.plain %t.rewritten

// Whenever rewriting could change a bit, or the metadata could not say it, the IR stays as it
// is (the diff: byte for byte as parsed and printed without the pass). Each case is
// `conv(extf(x) * sx, extf(w) * sw)` with one thing wrong.

// PyTorch's usual amax / 448 scale: the products' rounding would move.
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>

// CHECK-LABEL: func.func @not_a_power_of_two
// CHECK: linalg.conv_2d_nchw_fchw
func.func @not_a_power_of_two(%xq: tensor<1x4x6x6xf8E4M3FN>, %wq: tensor<2x4x3x3xf8E4M3FN>) -> tensor<1x2x4x4xf32> {
  %xs = arith.constant 0.03 : f32
  %ws = arith.constant 0.25 : f32
  %e0 = tensor.empty() : tensor<1x4x6x6xf32>
  %x = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%xq : tensor<1x4x6x6xf8E4M3FN>) outs(%e0 : tensor<1x4x6x6xf32>) {
  ^bb0(%in: f8E4M3FN, %out: f32):
    %0 = arith.extf %in : f8E4M3FN to f32
    %1 = arith.mulf %0, %xs : f32
    linalg.yield %1 : f32
  } -> tensor<1x4x6x6xf32>
  %e1 = tensor.empty() : tensor<2x4x3x3xf32>
  %w = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%wq : tensor<2x4x3x3xf8E4M3FN>) outs(%e1 : tensor<2x4x3x3xf32>) {
  ^bb0(%in: f8E4M3FN, %out: f32):
    %0 = arith.extf %in : f8E4M3FN to f32
    %1 = arith.mulf %0, %ws : f32
    linalg.yield %1 : f32
  } -> tensor<2x4x3x3xf32>
  %zero = arith.constant 0.0 : f32
  %e2 = tensor.empty() : tensor<1x2x4x4xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e2 : tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %y = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
         ins(%x, %w : tensor<1x4x6x6xf32>, tensor<2x4x3x3xf32>) outs(%acc : tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  return %y : tensor<1x2x4x4xf32>
}

// -----

// E5M2 values times 2^3 reach 458,752, beyond f16's 65,504: the dequantized input is not the FP8
// value scaled, so the f16 product is not the FP8 one.
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>

// CHECK-LABEL: func.func @not_exact_in_f16
// CHECK: linalg.conv_2d_nchw_fchw
func.func @not_exact_in_f16(%xq: tensor<1x4x6x6xf8E5M2FNUZ>, %wq: tensor<2x4x3x3xf8E5M2FNUZ>) -> tensor<1x2x4x4xf16> {
  %xs = arith.constant 8.0 : f16
  %ws = arith.constant 0.5 : f16
  %e0 = tensor.empty() : tensor<1x4x6x6xf16>
  %x = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%xq : tensor<1x4x6x6xf8E5M2FNUZ>) outs(%e0 : tensor<1x4x6x6xf16>) {
  ^bb0(%in: f8E5M2FNUZ, %out: f16):
    %0 = arith.extf %in : f8E5M2FNUZ to f16
    %1 = arith.mulf %0, %xs : f16
    linalg.yield %1 : f16
  } -> tensor<1x4x6x6xf16>
  %e1 = tensor.empty() : tensor<2x4x3x3xf16>
  %w = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%wq : tensor<2x4x3x3xf8E5M2FNUZ>) outs(%e1 : tensor<2x4x3x3xf16>) {
  ^bb0(%in: f8E5M2FNUZ, %out: f16):
    %0 = arith.extf %in : f8E5M2FNUZ to f16
    %1 = arith.mulf %0, %ws : f16
    linalg.yield %1 : f16
  } -> tensor<2x4x3x3xf16>
  %zero = arith.constant 0.0 : f16
  %e2 = tensor.empty() : tensor<1x2x4x4xf16>
  %acc = linalg.fill ins(%zero : f16) outs(%e2 : tensor<1x2x4x4xf16>) -> tensor<1x2x4x4xf16>
  %y = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
         ins(%x, %w : tensor<1x4x6x6xf16>, tensor<2x4x3x3xf16>) outs(%acc : tensor<1x2x4x4xf16>) -> tensor<1x2x4x4xf16>
  return %y : tensor<1x2x4x4xf16>
}

// -----

// An E4M3 input and an E5M2 filter: one QUARTER format per product.
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>

// CHECK-LABEL: func.func @mixed_formats
// CHECK: linalg.conv_2d_nchw_fchw
func.func @mixed_formats(%xq: tensor<1x4x6x6xf8E4M3FN>, %wq: tensor<2x4x3x3xf8E5M2>) -> tensor<1x2x4x4xf32> {
  %xs = arith.constant 0.5 : f32
  %ws = arith.constant 0.5 : f32
  %e0 = tensor.empty() : tensor<1x4x6x6xf32>
  %x = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%xq : tensor<1x4x6x6xf8E4M3FN>) outs(%e0 : tensor<1x4x6x6xf32>) {
  ^bb0(%in: f8E4M3FN, %out: f32):
    %0 = arith.extf %in : f8E4M3FN to f32
    %1 = arith.mulf %0, %xs : f32
    linalg.yield %1 : f32
  } -> tensor<1x4x6x6xf32>
  %e1 = tensor.empty() : tensor<2x4x3x3xf32>
  %w = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%wq : tensor<2x4x3x3xf8E5M2>) outs(%e1 : tensor<2x4x3x3xf32>) {
  ^bb0(%in: f8E5M2, %out: f32):
    %0 = arith.extf %in : f8E5M2 to f32
    %1 = arith.mulf %0, %ws : f32
    linalg.yield %1 : f32
  } -> tensor<2x4x3x3xf32>
  %zero = arith.constant 0.0 : f32
  %e2 = tensor.empty() : tensor<1x2x4x4xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e2 : tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %y = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
         ins(%x, %w : tensor<1x4x6x6xf32>, tensor<2x4x3x3xf32>) outs(%acc : tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  return %y : tensor<1x2x4x4xf32>
}

// -----

// 2^-20 * 2^-20: log2 scale -40 is outside Poplar's [-32, 32).
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>

// CHECK-LABEL: func.func @scale_out_of_range
// CHECK: linalg.conv_2d_nchw_fchw
func.func @scale_out_of_range(%xq: tensor<1x4x6x6xf8E4M3FN>, %wq: tensor<2x4x3x3xf8E4M3FN>) -> tensor<1x2x4x4xf32> {
  %xs = arith.constant 9.5367431640625e-07 : f32
  %ws = arith.constant 9.5367431640625e-07 : f32
  %e0 = tensor.empty() : tensor<1x4x6x6xf32>
  %x = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%xq : tensor<1x4x6x6xf8E4M3FN>) outs(%e0 : tensor<1x4x6x6xf32>) {
  ^bb0(%in: f8E4M3FN, %out: f32):
    %0 = arith.extf %in : f8E4M3FN to f32
    %1 = arith.mulf %0, %xs : f32
    linalg.yield %1 : f32
  } -> tensor<1x4x6x6xf32>
  %e1 = tensor.empty() : tensor<2x4x3x3xf32>
  %w = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%wq : tensor<2x4x3x3xf8E4M3FN>) outs(%e1 : tensor<2x4x3x3xf32>) {
  ^bb0(%in: f8E4M3FN, %out: f32):
    %0 = arith.extf %in : f8E4M3FN to f32
    %1 = arith.mulf %0, %ws : f32
    linalg.yield %1 : f32
  } -> tensor<2x4x3x3xf32>
  %zero = arith.constant 0.0 : f32
  %e2 = tensor.empty() : tensor<1x2x4x4xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e2 : tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %y = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
         ins(%x, %w : tensor<1x4x6x6xf32>, tensor<2x4x3x3xf32>) outs(%acc : tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  return %y : tensor<1x2x4x4xf32>
}

// -----

// A pad with ones: padding the FP8 tensor would pad with 2^-k of a one, not with a one.
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>

// CHECK-LABEL: func.func @pad_not_zero
// CHECK: linalg.conv_2d_nchw_fchw
func.func @pad_not_zero(%xq: tensor<1x4x6x6xf8E4M3FN>, %wq: tensor<2x4x3x3xf8E4M3FN>) -> tensor<1x2x6x6xf32> {
  %xs = arith.constant 0.5 : f32
  %ws = arith.constant 0.5 : f32
  %e0 = tensor.empty() : tensor<1x4x6x6xf32>
  %x = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%xq : tensor<1x4x6x6xf8E4M3FN>) outs(%e0 : tensor<1x4x6x6xf32>) {
  ^bb0(%in: f8E4M3FN, %out: f32):
    %0 = arith.extf %in : f8E4M3FN to f32
    %1 = arith.mulf %0, %xs : f32
    linalg.yield %1 : f32
  } -> tensor<1x4x6x6xf32>
  %e1 = tensor.empty() : tensor<2x4x3x3xf32>
  %w = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%wq : tensor<2x4x3x3xf8E4M3FN>) outs(%e1 : tensor<2x4x3x3xf32>) {
  ^bb0(%in: f8E4M3FN, %out: f32):
    %0 = arith.extf %in : f8E4M3FN to f32
    %1 = arith.mulf %0, %ws : f32
    linalg.yield %1 : f32
  } -> tensor<2x4x3x3xf32>
  %p = arith.constant 1.0 : f32
  %padded = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %p : f32
  } : tensor<1x4x6x6xf32> to tensor<1x4x8x8xf32>
  %zero = arith.constant 0.0 : f32
  %e2 = tensor.empty() : tensor<1x2x6x6xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e2 : tensor<1x2x6x6xf32>) -> tensor<1x2x6x6xf32>
  %y = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
         ins(%padded, %w : tensor<1x4x8x8xf32>, tensor<2x4x3x3xf32>) outs(%acc : tensor<1x2x6x6xf32>) -> tensor<1x2x6x6xf32>
  return %y : tensor<1x2x6x6xf32>
}

// -----

// A sum into bf16: the metadata takes f16 or f32 results only.
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>

// CHECK-LABEL: func.func @into_bf16
// CHECK: linalg.conv_2d_nchw_fchw
func.func @into_bf16(%xq: tensor<1x4x6x6xf8E4M3FN>, %wq: tensor<2x4x3x3xf8E4M3FN>) -> tensor<1x2x4x4xbf16> {
  %xs = arith.constant 0.5 : bf16
  %ws = arith.constant 0.5 : bf16
  %e0 = tensor.empty() : tensor<1x4x6x6xbf16>
  %x = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%xq : tensor<1x4x6x6xf8E4M3FN>) outs(%e0 : tensor<1x4x6x6xbf16>) {
  ^bb0(%in: f8E4M3FN, %out: bf16):
    %0 = arith.extf %in : f8E4M3FN to bf16
    %1 = arith.mulf %0, %xs : bf16
    linalg.yield %1 : bf16
  } -> tensor<1x4x6x6xbf16>
  %e1 = tensor.empty() : tensor<2x4x3x3xbf16>
  %w = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%wq : tensor<2x4x3x3xf8E4M3FN>) outs(%e1 : tensor<2x4x3x3xbf16>) {
  ^bb0(%in: f8E4M3FN, %out: bf16):
    %0 = arith.extf %in : f8E4M3FN to bf16
    %1 = arith.mulf %0, %ws : bf16
    linalg.yield %1 : bf16
  } -> tensor<2x4x3x3xbf16>
  %zero = arith.constant 0.0 : bf16
  %e2 = tensor.empty() : tensor<1x2x4x4xbf16>
  %acc = linalg.fill ins(%zero : bf16) outs(%e2 : tensor<1x2x4x4xbf16>) -> tensor<1x2x4x4xbf16>
  %y = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
         ins(%x, %w : tensor<1x4x6x6xbf16>, tensor<2x4x3x3xbf16>) outs(%acc : tensor<1x2x4x4xbf16>) -> tensor<1x2x4x4xbf16>
  return %y : tensor<1x2x4x4xbf16>
}

// -----

// A pad with -0.0: the FP8 tensor's zero is +0, and a sum of zeros would change its sign.
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>

// CHECK-LABEL: func.func @pad_negative_zero
// CHECK: linalg.conv_2d_nchw_fchw
func.func @pad_negative_zero(%xq: tensor<1x4x6x6xf8E4M3FN>, %wq: tensor<2x4x3x3xf8E4M3FN>) -> tensor<1x2x6x6xf32> {
  %xs = arith.constant 0.5 : f32
  %ws = arith.constant 0.5 : f32
  %e0 = tensor.empty() : tensor<1x4x6x6xf32>
  %x = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%xq : tensor<1x4x6x6xf8E4M3FN>) outs(%e0 : tensor<1x4x6x6xf32>) {
  ^bb0(%in: f8E4M3FN, %out: f32):
    %0 = arith.extf %in : f8E4M3FN to f32
    %1 = arith.mulf %0, %xs : f32
    linalg.yield %1 : f32
  } -> tensor<1x4x6x6xf32>
  %e1 = tensor.empty() : tensor<2x4x3x3xf32>
  %w = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%wq : tensor<2x4x3x3xf8E4M3FN>) outs(%e1 : tensor<2x4x3x3xf32>) {
  ^bb0(%in: f8E4M3FN, %out: f32):
    %0 = arith.extf %in : f8E4M3FN to f32
    %1 = arith.mulf %0, %ws : f32
    linalg.yield %1 : f32
  } -> tensor<2x4x3x3xf32>
  %p = arith.constant -0.0 : f32
  %padded = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %p : f32
  } : tensor<1x4x6x6xf32> to tensor<1x4x8x8xf32>
  %zero = arith.constant 0.0 : f32
  %e2 = tensor.empty() : tensor<1x2x6x6xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e2 : tensor<1x2x6x6xf32>) -> tensor<1x2x6x6xf32>
  %y = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
         ins(%padded, %w : tensor<1x4x8x8xf32>, tensor<2x4x3x3xf32>) outs(%acc : tensor<1x2x6x6xf32>) -> tensor<1x2x6x6xf32>
  return %y : tensor<1x2x6x6xf32>
}
