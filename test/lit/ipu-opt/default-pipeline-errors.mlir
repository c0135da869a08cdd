// RUN: ipu-opt %s --split-input-file --verify-diagnostics -p 'builtin.module(ipu-default-pipeline{target=tiny})'

// Programs the default pipeline rejects, each with one error at the op to blame.

// A function calling itself: the inliner cannot remove the call, and an IPU program has no
// call stack.
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'func.call' is not supported by ipu-convert-to-ipu: recursion (@main -> @main): calls are inlined, and an IPU program has no call stack}}
  %r = call @main(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// Recursion through other functions is named with its cycle, at the call that closes it.
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = call @f(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}
func.func private @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = call @g(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}
func.func private @g(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{recursion (@f -> @g -> @f)}}
  %r = call @f(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// Zero-size tensors: rejected at the function and at every op using them.
// expected-error@+2 {{'func.func' is not supported by ipu-convert-to-ipu: argument #0 has zero-size tensors (tensor<0x4xf32>)}}
// expected-error@+1 {{'func.func' is not supported by ipu-convert-to-ipu: result #0 has zero-size tensors (tensor<0x4xf32>)}}
func.func @main(%x: tensor<0x4xf32>) -> tensor<0x4xf32> {
  // expected-error@+1 {{'arith.addf' is not supported by ipu-convert-to-ipu: zero-size tensors (tensor<0x4xf32>)}}
  %r = arith.addf %x, %x : tensor<0x4xf32>
  return %r : tensor<0x4xf32>
}
