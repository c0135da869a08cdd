// RUN: ipu-opt %s --split-input-file --verify-diagnostics -p 'builtin.module(ipu-convert-to-ipu)'

// A loop becomes Poplar's Repeat: its trip count must be known when compiling.

func.func @triangle(%x: tensor<16xf32>) -> tensor<16xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %r = scf.for %i = %c0 to %c3 step %c1 iter_args(%a = %x) -> tensor<16xf32> {
    // expected-error@+1 {{'scf.for' is not supported by ipu-convert-to-ipu: an upper bound that is not a constant (Repeat needs its trip count at compile time)}}
    %s = scf.for %j = %c0 to %i step %c1 iter_args(%b = %a) -> tensor<16xf32> {
      %n = arith.addf %b, %x : tensor<16xf32>
      scf.yield %n : tensor<16xf32>
    }
    scf.yield %s : tensor<16xf32>
  }
  return %r : tensor<16xf32>
}

// -----

// Unsupported ops in a loop body are reported at the op.

func.func @body(%x: tensor<16xf32>) -> tensor<16xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %f = arith.constant 1.0 : f32
  %r = scf.for %i = %c0 to %c3 step %c1 iter_args(%a = %x) -> tensor<16xf32> {
    // expected-error@+1 {{'tensor.insert' is not supported by ipu-convert-to-ipu}}
    %n = tensor.insert %f into %a[%c0] : tensor<16xf32>
    scf.yield %n : tensor<16xf32>
  }
  return %r : tensor<16xf32>
}
