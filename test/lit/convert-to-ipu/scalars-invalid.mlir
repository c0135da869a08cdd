// RUN: ipu-opt %s --split-input-file --verify-diagnostics -p 'builtin.module(ipu-convert-to-ipu)'

// A scalar lives on a tile (a 0-d tensor): what needs it on the host, or as an address every
// tile computes with, is refused at the op that needs it.

// A slice at offsets read from a tensor along two dimensions: Poplar's dynamicSlice here takes
// one (test/lit/convert-to-ipu/dynamic-slices.mlir).
func.func @dynamic_offsets(%a: tensor<16x16xf32>, %n: tensor<2xi32>) -> tensor<4x4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %e = tensor.extract %n[%c0] : tensor<2xi32>
  %f = tensor.extract %n[%c1] : tensor<2xi32>
  // expected-error@+1 {{'arith.index_cast' is not supported by ipu-convert-to-ipu: scalar arithmetic outside linalg.generic}}
  %i = arith.index_cast %e : i32 to index
  // expected-error@+1 {{'arith.index_cast' is not supported by ipu-convert-to-ipu: scalar arithmetic outside linalg.generic}}
  %j = arith.index_cast %f : i32 to index
  // expected-error@+1 {{'tensor.extract_slice' is not supported by ipu-convert-to-ipu: dynamic offsets, sizes or strides}}
  %s = tensor.extract_slice %a[%i, %j] [4, 4] [1, 1] : tensor<16x16xf32> to tensor<4x4xf32>
  return %s : tensor<4x4xf32>
}

// -----

// An unsupported op inside a while loop's blocks is reported at the op.
func.func @while_body(%a: tensor<4xf32>) -> tensor<4xf32> {
  %c0 = arith.constant 0 : i32
  %c5 = arith.constant 5 : i32
  %r:2 = scf.while (%t = %a, %k = %c0) : (tensor<4xf32>, i32) -> (tensor<4xf32>, i32) {
    %go = arith.cmpi slt, %k, %c5 : i32
    scf.condition(%go) %t, %k : tensor<4xf32>, i32
  } do {
  ^bb0(%t: tensor<4xf32>, %k: i32):
    %sh = arith.constant dense<[2, 2]> : tensor<2xi64>
    %e = tensor.empty() : tensor<4xf32>
    // expected-error@+1 {{'linalg.softmax' is not supported by ipu-convert-to-ipu}}
    %d = linalg.softmax dimension(0) ins(%t : tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
    %k1 = arith.addi %k, %k : i32
    scf.yield %d, %k1 : tensor<4xf32>, i32
  }
  return %r#0 : tensor<4xf32>
}
