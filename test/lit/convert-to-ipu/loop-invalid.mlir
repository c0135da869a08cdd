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

// -----

// A bound read from a tensor is not known when compiling: the read is scalar code.

func.func @bound_from_tensor(%x: tensor<16xf32>, %n: tensor<1xi64>) -> tensor<16xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // expected-error@+1 {{'tensor.extract' is not supported by ipu-convert-to-ipu}}
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

// -----

// Only tensors are carried (they become buffers); a scalar accumulator is not (the loop's
// error stands for its body's).

func.func @scalar_carried(%x: tensor<16xf32>) -> tensor<16xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %f = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  // expected-error@+1 {{'scf.for' is not supported by ipu-convert-to-ipu: a loop-carried value of type f32 (only statically shaped tensors)}}
  %r:2 = scf.for %i = %c0 to %c3 step %c1 iter_args(%a = %x, %s = %f) -> (tensor<16xf32>, f32) {
    %n = arith.addf %a, %x : tensor<16xf32>
    %s2 = arith.addf %s, %one : f32
    scf.yield %n, %s2 : tensor<16xf32>, f32
  }
  %e = tensor.empty() : tensor<16xf32>
  %fill = linalg.fill ins(%r#1 : f32) outs(%e : tensor<16xf32>) -> tensor<16xf32>
  %y = arith.addf %r#0, %fill : tensor<16xf32>
  return %y : tensor<16xf32>
}

// -----

// The induction variable used by tensor code: scalar arithmetic on it has no place on a tile.

func.func @induction_variable(%x: tensor<16xf32>) -> tensor<16xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %r = scf.for %i = %c0 to %c3 step %c1 iter_args(%a = %x) -> tensor<16xf32> {
    // expected-error@+1 {{'arith.index_cast' is not supported by ipu-convert-to-ipu: scalar arithmetic outside linalg.generic}}
    %i64 = arith.index_cast %i : index to i64
    // expected-error@+1 {{'arith.sitofp' is not supported by ipu-convert-to-ipu: scalar arithmetic outside linalg.generic}}
    %f = arith.sitofp %i64 : i64 to f32
    %e = tensor.empty() : tensor<16xf32>
    %fill = linalg.fill ins(%f : f32) outs(%e : tensor<16xf32>) -> tensor<16xf32>
    %n = arith.addf %a, %fill : tensor<16xf32>
    scf.yield %n : tensor<16xf32>
  }
  return %r : tensor<16xf32>
}

// -----

// Other control flow in a loop body is reported at the op.

func.func @if_in_body(%x: tensor<16xf32>) -> tensor<16xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %r = scf.for %i = %c0 to %c3 step %c1 iter_args(%a = %x) -> tensor<16xf32> {
    // expected-error@+1 {{'arith.cmpi' is not supported by ipu-convert-to-ipu: scalar arithmetic outside linalg.generic}}
    %first = arith.cmpi eq, %i, %c0 : index
    // expected-error@+1 {{'scf.if' is not supported by ipu-convert-to-ipu}}
    %n = scf.if %first -> tensor<16xf32> {
      %d = arith.addf %a, %a : tensor<16xf32>
      scf.yield %d : tensor<16xf32>
    } else {
      scf.yield %x : tensor<16xf32>
    }
    scf.yield %n : tensor<16xf32>
  }
  return %r : tensor<16xf32>
}
