// The verifier's QUARTER rules on ipu.conv (dialects/ops/conv.py, as on ipu.matmul), one case each.
// RUN: ipu-opt %s --split-input-file --verify-diagnostics

func.func @scale_range(%x: tensor<1x4x6x6xf8E4M3FNUZ>, %w: tensor<2x4x3x3xf8E4M3FNUZ>) -> tensor<1x2x4x4xf32> {
  // expected-error @+1 {{'ipu.conv' op 'ipu.quarter': log2_scale -33 is outside [-32, 32)}}
  %y = "ipu.conv"(%x, %w) {dilations = array<i64: 1, 1>, groups = 1 : i64, ipu.quarter = {format = "f143", log2_scale = -33 : i32}, padding = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x4x6x6xf8E4M3FNUZ>, tensor<2x4x3x3xf8E4M3FNUZ>) -> tensor<1x2x4x4xf32>
  return %y : tensor<1x2x4x4xf32>
}

// -----

func.func @format_mismatch(%x: tensor<1x4x6x6xf8E4M3FN>, %w: tensor<2x4x3x3xf8E4M3FN>) -> tensor<1x2x4x4xf32> {
  // expected-error @+1 {{'ipu.conv' op 'ipu.quarter' format 'f143' does not match the operands' element type f8E4M3FN}}
  %y = "ipu.conv"(%x, %w) {dilations = array<i64: 1, 1>, groups = 1 : i64, ipu.quarter = {format = "f143", log2_scale = 0 : i32}, padding = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x4x6x6xf8E4M3FN>, tensor<2x4x3x3xf8E4M3FN>) -> tensor<1x2x4x4xf32>
  return %y : tensor<1x2x4x4xf32>
}

// -----

func.func @missing_field(%x: tensor<1x4x6x6xf8E5M2>, %w: tensor<2x4x3x3xf8E5M2>) -> tensor<1x2x4x4xf32> {
  // expected-error @+1 {{'ipu.conv' op 'ipu.quarter': expected a dictionary of 'format' and 'log2_scale', got {log2_scale = 1 : i32}}}
  %y = "ipu.conv"(%x, %w) {dilations = array<i64: 1, 1>, groups = 1 : i64, ipu.quarter = {log2_scale = 1 : i32}, padding = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x4x6x6xf8E5M2>, tensor<2x4x3x3xf8E5M2>) -> tensor<1x2x4x4xf32>
  return %y : tensor<1x2x4x4xf32>
}

// -----

func.func @result_type(%x: tensor<1x4x6x6xf8E5M2>, %w: tensor<2x4x3x3xf8E5M2>) -> tensor<1x2x4x4xbf16> {
  // expected-error @+1 {{'ipu.conv' op with 'ipu.quarter' expects an f16 or f32 result, got bf16}}
  %y = "ipu.conv"(%x, %w) {dilations = array<i64: 1, 1>, groups = 1 : i64, ipu.quarter = {format = "e5m2", log2_scale = 1 : i32}, padding = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x4x6x6xf8E5M2>, tensor<2x4x3x3xf8E5M2>) -> tensor<1x2x4x4xbf16>
  return %y : tensor<1x2x4x4xbf16>
}
