// One case per rule of ipu.scatter's verifier (dialects/ops/scatter.py), with the exact message.
// RUN: ipu-opt %s --split-input-file --verify-diagnostics

func.func @scatter_updates_rank(%u: tensor<3xf32>, %p: tensor<3xi64>, %r: tensor<8xi64>) -> tensor<8x1xf32> {
  // expected-error @+1 {{'ipu.scatter' op expects updates of rank 2, got tensor<3xf32>}}
  %s = "ipu.scatter"(%u, %p, %r) {combiner = "arith.addf"} : (tensor<3xf32>, tensor<3xi64>, tensor<8xi64>) -> tensor<8x1xf32>
  return %s : tensor<8x1xf32>
}

// -----

func.func @scatter_float_positions(%u: tensor<3x2xf32>, %p: tensor<3xf32>, %r: tensor<8xf32>) -> tensor<8x2xf32> {
  // expected-error @+1 {{'ipu.scatter' op expects integer positions and rows of one type, got f32 and f32}}
  %s = "ipu.scatter"(%u, %p, %r) {combiner = "arith.addf"} : (tensor<3x2xf32>, tensor<3xf32>, tensor<8xf32>) -> tensor<8x2xf32>
  return %s : tensor<8x2xf32>
}

// -----

func.func @scatter_positions(%u: tensor<3x2xf32>, %p: tensor<4xi64>, %r: tensor<8xi64>) -> tensor<8x2xf32> {
  // expected-error @+1 {{'ipu.scatter' op expects one position per update (3) and rows of rank 1, got tensor<4xi64> and tensor<8xi64>}}
  %s = "ipu.scatter"(%u, %p, %r) {combiner = "arith.addf"} : (tensor<3x2xf32>, tensor<4xi64>, tensor<8xi64>) -> tensor<8x2xf32>
  return %s : tensor<8x2xf32>
}

// -----

func.func @scatter_result(%u: tensor<3x2xf32>, %p: tensor<3xi64>, %r: tensor<8xi64>) -> tensor<8x2xf16> {
  // expected-error @+1 {{'ipu.scatter' op expects result tensor<8x2xf32>, got tensor<8x2xf16>}}
  %s = "ipu.scatter"(%u, %p, %r) {combiner = "arith.addf"} : (tensor<3x2xf32>, tensor<3xi64>, tensor<8xi64>) -> tensor<8x2xf16>
  return %s : tensor<8x2xf16>
}

// -----

func.func @scatter_combiner(%u: tensor<3x2xf32>, %p: tensor<3xi64>, %r: tensor<8xi64>) -> tensor<8x2xf32> {
  // expected-error @+1 {{'ipu.scatter' op expects a combiner of f32 among arith.addf, arith.addi, arith.maximumf, arith.maxnumf, arith.maxsi, arith.minimumf, arith.minnumf, arith.minsi, arith.mulf, arith.muli, got 'arith.addi'}}
  %s = "ipu.scatter"(%u, %p, %r) {combiner = "arith.addi"} : (tensor<3x2xf32>, tensor<3xi64>, tensor<8xi64>) -> tensor<8x2xf32>
  return %s : tensor<8x2xf32>
}

// -----

func.func @scatter_no_combiner(%u: tensor<3x2xf32>, %p: tensor<3xi64>, %r: tensor<8xi64>) -> tensor<8x2xf32> {
  // expected-error @+1 {{'ipu.scatter' op expects a combiner of f32 among}}
  %s = "ipu.scatter"(%u, %p, %r) {combiner = "arith.subf"} : (tensor<3x2xf32>, tensor<3xi64>, tensor<8xi64>) -> tensor<8x2xf32>
  return %s : tensor<8x2xf32>
}
