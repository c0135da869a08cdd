// RUN: ipu-opt %s --split-input-file -p 'builtin.module(ipu-fp8-conv)' | FileCheck %s

// A scaled FP8 convolution as torch-mlir exports one: the input dequantized by `* 2^-4` and
// padded with zeros, the filter by `* 2^-5`, the bias broadcast into the `outs`. It becomes one
// FP8 ipu.conv with log2 scale -9, the pad folded into its padding, the bias added after it.

#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>

// CHECK-LABEL: func.func @padded_with_bias
// CHECK: %[[C:.*]] = "ipu.conv"(%arg0, %arg1) {dilations = array<i64: 1, 1>, groups = 1 : i64, ipu.quarter = {format = "e4m3fn", log2_scale = -9 : i32}, padding = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x3x8x8xf8E4M3FN>, tensor<8x3x3x3xf8E4M3FN>) -> tensor<1x8x8x8xf32>
// CHECK-NOT: tensor.pad
// CHECK: %[[Y:.*]] = linalg.generic {{.*}} ins(%[[C]], %{{.*}} : tensor<1x8x8x8xf32>, tensor<1x8x8x8xf32>)
// CHECK: arith.addf
// CHECK-NOT: linalg.conv
// CHECK: return %[[Y]]
func.func @padded_with_bias(%xq: tensor<1x3x8x8xf8E4M3FN>, %wq: tensor<8x3x3x3xf8E4M3FN>, %b: tensor<8xf32>) -> tensor<1x8x8x8xf32> {
  %zero = arith.constant 0.0 : f32
  %xs = arith.constant 6.250000e-02 : f32
  %ws = arith.constant 3.125000e-02 : f32
  %e0 = tensor.empty() : tensor<1x3x8x8xf32>
  %x = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%xq : tensor<1x3x8x8xf8E4M3FN>) outs(%e0 : tensor<1x3x8x8xf32>) {
  ^bb0(%in: f8E4M3FN, %out: f32):
    %0 = arith.extf %in : f8E4M3FN to f32
    %1 = arith.mulf %0, %xs : f32
    linalg.yield %1 : f32
  } -> tensor<1x3x8x8xf32>
  %e1 = tensor.empty() : tensor<8x3x3x3xf32>
  %w = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%wq : tensor<8x3x3x3xf8E4M3FN>) outs(%e1 : tensor<8x3x3x3xf32>) {
  ^bb0(%in: f8E4M3FN, %out: f32):
    %0 = arith.extf %in : f8E4M3FN to f32
    %1 = arith.mulf %ws, %0 : f32
    linalg.yield %1 : f32
  } -> tensor<8x3x3x3xf32>
  %padded = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<1x3x8x8xf32> to tensor<1x3x10x10xf32>
  %e2 = tensor.empty() : tensor<1x8x8x8xf32>
  %bias = linalg.broadcast ins(%b : tensor<8xf32>) outs(%e2 : tensor<1x8x8x8xf32>) dimensions = [0, 2, 3]
  %y = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
         ins(%padded, %w : tensor<1x3x10x10xf32>, tensor<8x3x3x3xf32>) outs(%bias : tensor<1x8x8x8xf32>) -> tensor<1x8x8x8xf32>
  return %y : tensor<1x8x8x8xf32>
}

// -----

// A grouped, strided convolution (torch-mlir splits the channels with expand_shape into
// conv_2d_ngchw_gfchw), Graphcore's f143 format, dequantized in f16 by a division, into an f16
// result: the reshapes move onto the FP8 tensors, scales 3 - 4 = -1.

#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>

// CHECK-LABEL: func.func @grouped_f16
// CHECK-DAG: %[[X:.*]] = tensor.expand_shape %arg0 {{\[\[}}0], [1, 2], [3], [4]] output_shape [1, 2, 2, 9, 9] : tensor<1x4x9x9xf8E4M3FNUZ> into tensor<1x2x2x9x9xf8E4M3FNUZ>
// CHECK-DAG: %[[W:.*]] = tensor.expand_shape %arg1 {{\[\[}}0, 1], [2], [3], [4]] output_shape [2, 3, 2, 3, 3] : tensor<6x2x3x3xf8E4M3FNUZ> into tensor<2x3x2x3x3xf8E4M3FNUZ>
// CHECK: "ipu.conv"({{.*}}) {dilations = array<i64: 1, 1>, groups = 2 : i64, ipu.quarter = {format = "f143", log2_scale = -1 : i32}, padding = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<1x4x9x9xf8E4M3FNUZ>, tensor<6x2x3x3xf8E4M3FNUZ>) -> tensor<1x6x4x4xf16>
// CHECK-NOT: linalg.generic
// CHECK-NOT: linalg.conv
func.func @grouped_f16(%xq: tensor<1x4x9x9xf8E4M3FNUZ>, %wq: tensor<6x2x3x3xf8E4M3FNUZ>) -> tensor<1x6x4x4xf16> {
  %zero = arith.constant 0.0 : f16
  %e0 = tensor.empty() : tensor<1x4x9x9xf16>
  %x = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%xq : tensor<1x4x9x9xf8E4M3FNUZ>) outs(%e0 : tensor<1x4x9x9xf16>) {
  ^bb0(%in: f8E4M3FNUZ, %out: f16):
    %eight = arith.constant 8.0 : f16
    %0 = arith.extf %in : f8E4M3FNUZ to f16
    %1 = arith.mulf %0, %eight : f16
    linalg.yield %1 : f16
  } -> tensor<1x4x9x9xf16>
  %e1 = tensor.empty() : tensor<6x2x3x3xf16>
  %w = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%wq : tensor<6x2x3x3xf8E4M3FNUZ>) outs(%e1 : tensor<6x2x3x3xf16>) {
  ^bb0(%in: f8E4M3FNUZ, %out: f16):
    %sixteen = arith.constant 16.0 : f16
    %0 = arith.extf %in : f8E4M3FNUZ to f16
    %1 = arith.divf %0, %sixteen : f16
    linalg.yield %1 : f16
  } -> tensor<6x2x3x3xf16>
  %xg = tensor.expand_shape %x [[0], [1, 2], [3], [4]] output_shape [1, 2, 2, 9, 9] : tensor<1x4x9x9xf16> into tensor<1x2x2x9x9xf16>
  %wg = tensor.expand_shape %w [[0, 1], [2], [3], [4]] output_shape [2, 3, 2, 3, 3] : tensor<6x2x3x3xf16> into tensor<2x3x2x3x3xf16>
  %e2 = tensor.empty() : tensor<1x2x3x4x4xf16>
  %acc = linalg.fill ins(%zero : f16) outs(%e2 : tensor<1x2x3x4x4xf16>) -> tensor<1x2x3x4x4xf16>
  %y = linalg.conv_2d_ngchw_gfchw {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>}
         ins(%xg, %wg : tensor<1x2x2x9x9xf16>, tensor<2x3x2x3x3xf16>) outs(%acc : tensor<1x2x3x4x4xf16>) -> tensor<1x2x3x4x4xf16>
  %r = tensor.collapse_shape %y [[0], [1, 2], [3], [4]] : tensor<1x2x3x4x4xf16> into tensor<1x6x4x4xf16>
  return %r : tensor<1x6x4x4xf16>
}

// -----

// An NHWC convolution (TOSA's and Keras' layout): ipu.conv is NCHW, so the FP8 input and filter
// are transposed around it, the FP8 tensors (a byte each) rather than the f32 ones.

#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>

// CHECK-LABEL: func.func @nhwc
// CHECK: "ipu.conv"({{.*}}) {{.*}}ipu.quarter = {format = "e4m3fn", log2_scale = 2 : i32}{{.*}} : (tensor<1x4x6x6xf8E4M3FN>, tensor<2x4x3x3xf8E4M3FN>) -> tensor<1x2x4x4xf32>
// CHECK-NOT: linalg.conv
func.func @nhwc(%xq: tensor<1x6x6x4xf8E4M3FN>, %wq: tensor<3x3x4x2xf8E4M3FN>) -> tensor<1x4x4x2xf32> {
  %zero = arith.constant 0.0 : f32
  %two = arith.constant 2.0 : f32
  %e0 = tensor.empty() : tensor<1x6x6x4xf32>
  %x = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%xq : tensor<1x6x6x4xf8E4M3FN>) outs(%e0 : tensor<1x6x6x4xf32>) {
  ^bb0(%in: f8E4M3FN, %out: f32):
    %0 = arith.extf %in : f8E4M3FN to f32
    %1 = arith.mulf %0, %two : f32
    linalg.yield %1 : f32
  } -> tensor<1x6x6x4xf32>
  %e1 = tensor.empty() : tensor<3x3x4x2xf32>
  %w = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%wq : tensor<3x3x4x2xf8E4M3FN>) outs(%e1 : tensor<3x3x4x2xf32>) {
  ^bb0(%in: f8E4M3FN, %out: f32):
    %0 = arith.extf %in : f8E4M3FN to f32
    %1 = arith.mulf %0, %two : f32
    linalg.yield %1 : f32
  } -> tensor<3x3x4x2xf32>
  %e2 = tensor.empty() : tensor<1x4x4x2xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e2 : tensor<1x4x4x2xf32>) -> tensor<1x4x4x2xf32>
  %y = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
         ins(%x, %w : tensor<1x6x6x4xf32>, tensor<3x3x4x2xf32>) outs(%acc : tensor<1x4x4x2xf32>) -> tensor<1x4x4x2xf32>
  return %y : tensor<1x4x4x2xf32>
}
