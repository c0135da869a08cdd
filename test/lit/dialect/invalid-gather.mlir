// One case per rule of ipu.gather's verifier (dialects/ops/gather.py), with the exact message.
// RUN: ipu-opt %s --split-input-file --verify-diagnostics

func.func @gather_table_rank(%t: tensor<8xf32>, %i: tensor<3xi64>, %r: tensor<8xi64>) -> tensor<3x1xf32> {
  // expected-error @+1 {{'ipu.gather' op expects a table of rank 2, got tensor<8xf32>}}
  %g = "ipu.gather"(%t, %i, %r) : (tensor<8xf32>, tensor<3xi64>, tensor<8xi64>) -> tensor<3x1xf32>
  return %g : tensor<3x1xf32>
}

// -----

func.func @gather_float_indices(%t: tensor<8x2xf32>, %i: tensor<3xf32>, %r: tensor<8xf32>) -> tensor<3x2xf32> {
  // expected-error @+1 {{'ipu.gather' op expects integer indices and rows of one type, got f32 and f32}}
  %g = "ipu.gather"(%t, %i, %r) : (tensor<8x2xf32>, tensor<3xf32>, tensor<8xf32>) -> tensor<3x2xf32>
  return %g : tensor<3x2xf32>
}

// -----

func.func @gather_rows(%t: tensor<8x2xf32>, %i: tensor<3xi64>, %r: tensor<7xi64>) -> tensor<3x2xf32> {
  // expected-error @+1 {{'ipu.gather' op expects rows of shape 8 (one per table row), got 7}}
  %g = "ipu.gather"(%t, %i, %r) : (tensor<8x2xf32>, tensor<3xi64>, tensor<7xi64>) -> tensor<3x2xf32>
  return %g : tensor<3x2xf32>
}

// -----

func.func @gather_result(%t: tensor<8x2xf32>, %i: tensor<3xi64>, %r: tensor<8xi64>) -> tensor<3x2xf16> {
  // expected-error @+1 {{'ipu.gather' op expects result tensor<3x2xf32>, got tensor<3x2xf16>}}
  %g = "ipu.gather"(%t, %i, %r) : (tensor<8x2xf32>, tensor<3xi64>, tensor<8xi64>) -> tensor<3x2xf16>
  return %g : tensor<3x2xf16>
}
