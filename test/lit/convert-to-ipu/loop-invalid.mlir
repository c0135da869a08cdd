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

// A bound read from a tensor is not known when compiling: the scalar lives on a tile, and
// the device cannot tell the host how often to repeat.

func.func @bound_from_tensor(%x: tensor<16xf32>, %n: tensor<1xi64>) -> tensor<16xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %e = tensor.extract %n[%c0] : tensor<1xi64>
  // expected-error@+1 {{'arith.index_cast' is not supported by ipu-convert-to-ipu: scalar arithmetic outside linalg.generic}}
  %ub = arith.index_cast %e : i64 to index
  // expected-error@+1 {{'scf.for' is not supported by ipu-convert-to-ipu: an upper bound that is not a constant (Repeat needs its trip count at compile time)}}
  %r = scf.for %i = %c0 to %ub step %c1 iter_args(%a = %x) -> tensor<16xf32> {
    %n2 = arith.addf %a, %x : tensor<16xf32>
    scf.yield %n2 : tensor<16xf32>
  }
  return %r : tensor<16xf32>
}
