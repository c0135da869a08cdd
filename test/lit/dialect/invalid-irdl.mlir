// Constraints IRDL itself checks: the same file gives the same errors in both tools.
// RUN: ipu-opt %s --split-input-file --verify-diagnostics
// RUN: %mlir-opt-ipu %s --split-input-file --verify-diagnostics

func.func @sync_kind() {
  // expected-error @+1 {{'"everyone"' does not satisfy the constraint}}
  "ipu.sync"() {kind = "everyone"} : () -> ()
  return
}

// -----

func.func @matmul_on_memrefs(%a: memref<4x8xf32>, %b: memref<8x2xf32>) {
  // expected-error @+1 {{expected base type 'builtin.tensor' but got 'builtin.memref'}}
  %c = "ipu.matmul"(%a, %b) : (memref<4x8xf32>, memref<8x2xf32>) -> tensor<4x2xf32>
  return
}

// -----

func.func @matmul_operand_count(%a: tensor<4x8xf32>) -> tensor<4x2xf32> {
  // expected-error @+1 {{op expects exactly 2 operands, but got 1}}
  %c = "ipu.matmul"(%a) : (tensor<4x8xf32>) -> tensor<4x2xf32>
  return %c : tensor<4x2xf32>
}

// -----

func.func @conv_missing_attribute(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32> {
  // expected-error @+1 {{attribute "groups" is expected but not provided}}
  %y = "ipu.conv"(%x, %w) {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  return %y : tensor<1x4x6x6xf32>
}

// -----

func.func @exchange_mapping_not_a_dictionary(%a: tensor<64xf32>) -> tensor<64xf32> {
  // expected-error @+1 {{expected base attribute 'builtin.dictionary' but got 'builtin.string'}}
  %b = "ipu.exchange"(%a) {mapping = "linear"} : (tensor<64xf32>) -> tensor<64xf32>
  return %b : tensor<64xf32>
}

// -----

func.func @execute_by_string() {
  // expected-error @+1 {{expected base attribute 'builtin.symbol_ref' but got 'builtin.string'}}
  "ipu.execute"() {compute_set = "cs"} : () -> ()
  return
}
