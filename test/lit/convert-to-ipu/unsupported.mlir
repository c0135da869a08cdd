// RUN: ipu-opt %s --split-input-file --verify-diagnostics -p 'builtin.module(ipu-convert-to-ipu)'
// RUN: not ipu-opt %s --split-input-file -p 'builtin.module(ipu-convert-to-ipu)' 2>&1 | FileCheck %s

// Everything outside L1 stops the pass, at the op, each op reported.

// CHECK: unsupported.mlir:[[@LINE+2]]:1: error: 'func.func' is not supported by ipu-convert-to-ipu: argument #0 has dynamic shapes (tensor<?x4xf32>)
// expected-error@+1 {{'func.func' is not supported by ipu-convert-to-ipu: argument #0 has dynamic shapes (tensor<?x4xf32>)}}
func.func @dynamic(%x: tensor<?x4xf32>) -> tensor<4xf32> {
  // CHECK: unsupported.mlir:[[@LINE+2]]:8: error: 'math.exp' is not supported by ipu-convert-to-ipu: dynamic shapes (tensor<?x4xf32>)
  // expected-error@+1 {{'math.exp' is not supported by ipu-convert-to-ipu: dynamic shapes}}
  %y = math.exp %x : tensor<?x4xf32>
  // expected-error@+1 {{'tensor.extract_slice' is not supported by ipu-convert-to-ipu: dynamic shapes}}
  %s = tensor.extract_slice %y[0, 0] [1, 4] [1, 1] : tensor<?x4xf32> to tensor<4xf32>
  return %s : tensor<4xf32>
}

// -----

// Several unsupported ops in one function: all are reported.

func.func @many(%x: tensor<8x4xf32>) -> (tensor<8x4xf32>, tensor<4x4xf32>, tensor<8xi64>, tensor<4x4xf32>) {
  %c0 = arith.constant 0 : index
  // A scalar is a 0-d tensor on a tile (lowering/scalars.py): not reported.
  %e = tensor.extract %x[%c0, %c0] : tensor<8x4xf32>
  %splat = tensor.splat %e : tensor<8x4xf32>
  // A strided slice is L1 (an exchange): not reported.
  %s = tensor.extract_slice %x[0, 0] [4, 4] [2, 1] : tensor<8x4xf32> to tensor<4x4xf32>
  %empty = tensor.empty() : tensor<8xi64>
  // expected-error@+1 {{'linalg.generic' is not supported by ipu-convert-to-ipu: linalg.index in the body (ipu-index-to-iota makes it an input)}}
  %iota = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} outs(%empty : tensor<8xi64>) {
  ^bb0(%out: i64):
    %idx = linalg.index 0 : index
    %v = arith.index_cast %idx : index to i64
    linalg.yield %v : i64
  } -> tensor<8xi64>
  %e2 = tensor.empty() : tensor<4x4xf32>
  // expected-error@+1 {{'linalg.softmax' is not supported by ipu-convert-to-ipu}}
  %sm = linalg.softmax dimension(1) ins(%s : tensor<4x4xf32>) outs(%e2 : tensor<4x4xf32>) -> tensor<4x4xf32>
  return %splat, %s, %iota, %sm : tensor<8x4xf32>, tensor<4x4xf32>, tensor<8xi64>, tensor<4x4xf32>
}

// -----

// Element types numpy cannot hold (tf32; the floats are docs/precision.md's), non-tensor values, calls that cannot be inlined.

func.func private @external(tensor<4xf32>) -> tensor<4xf32>

// expected-error@+1 {{'func.func' is not supported by ipu-convert-to-ipu: argument #0 has element type tf32 (tensor<4xtf32>)}}
func.func @types(%x: tensor<4xtf32>, %m: memref<4xf32>) -> tensor<4xf32> {
  // expected-error@-1 {{'func.func' is not supported by ipu-convert-to-ipu: argument #1 has type memref<4xf32> (only statically shaped tensors)}}
  // expected-error@+1 {{'arith.extf' is not supported by ipu-convert-to-ipu: element type tf32 (tensor<4xtf32>)}}
  %y = arith.extf %x : tensor<4xtf32> to tensor<4xf32>
  // expected-error@+1 {{'func.call' is not supported by ipu-convert-to-ipu: a call that could not be inlined (a function without body)}}
  %z = func.call @external(%y) : (tensor<4xf32>) -> tensor<4xf32>
  return %z : tensor<4xf32>
}

// -----

// A generic reading a diagonal (a repeated dim), and a pad whose value depends on the index.

func.func @maps_and_pads(%x: tensor<4x4xf32>) -> (tensor<4xf32>, tensor<6xf32>) {
  %e = tensor.empty() : tensor<4xf32>
  // expected-error@+1 {{'linalg.generic' is not supported by ipu-convert-to-ipu: indexing map (d0) -> (d0, d0) of operand #0 repeats a dimension}}
  %d = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0, d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%x : tensor<4x4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<4xf32>
  // expected-error@+1 {{'tensor.pad' is not supported by ipu-convert-to-ipu: a padding value that is not a constant}}
  %p = tensor.pad %d low[1] high[1] {
  ^bb0(%i: index):
    %v = arith.index_cast %i : index to i32
    %f = arith.sitofp %v : i32 to f32
    tensor.yield %f : f32
  } : tensor<4xf32> to tensor<6xf32>
  return %d, %p : tensor<4xf32>, tensor<6xf32>
}

// -----

// A scalar result, and module-level ops other than functions.

// expected-error@+1 {{'ml_program.global' is not supported by ipu-convert-to-ipu: only func.func at module level}}
ml_program.global public @state(dense<0.0> : tensor<4xf32>) : tensor<4xf32>

// expected-error@+1 {{'func.func' is not supported by ipu-convert-to-ipu: result #0 has type f32 (only statically shaped tensors)}}
func.func @scalar_result(%x: tensor<4xf32>) -> f32 {
  %c = arith.constant 1.0 : f32
  return %c : f32
}
