// The verifier's rules on `ipu.partials` (dialects/ops/matmul.py verify_metadata), one case each.
// RUN: ipu-opt %s --split-input-file --verify-diagnostics

func.func @not_half(%a: tensor<4x32xf32>, %b: tensor<32x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'ipu.matmul' op 'ipu.partials' is for f16 operands, got f32}}
  %p = "ipu.matmul"(%a, %b) {ipu.partials = f16} : (tensor<4x32xf32>, tensor<32x8xf32>) -> tensor<4x8xf32>
  return %p : tensor<4x8xf32>
}

// -----

func.func @not_a_float_type(%x: tensor<1x4x6x6xf16>, %w: tensor<2x4x3x3xf16>) -> tensor<1x2x4x4xf16> {
  // expected-error @+1 {{'ipu.conv' op 'ipu.partials': expected f16 or f32, got "half"}}
  %y = "ipu.conv"(%x, %w) {dilations = array<i64: 1, 1>, groups = 1 : i64, ipu.partials = "half", padding = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x4x6x6xf16>, tensor<2x4x3x3xf16>) -> tensor<1x2x4x4xf16>
  return %y : tensor<1x2x4x4xf16>
}
