// RUN: ipu-opt %s --split-input-file --verify-diagnostics -p 'builtin.module(ipu-convert-to-ipu,ipu-plan)'

// A while loop's carried tensor and a block's yield need data: a tensor.empty has none.

func.func @empty_carried(%x: tensor<4xf32>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %c0 = arith.constant 0 : i32
  %c3 = arith.constant 3 : i32
  %one = arith.constant 1 : i32
  // expected-error@+1 {{'scf.while' op carries a tensor.empty (#0): a carried tensor needs an initial value (fill it)}}
  %r:2 = scf.while (%y = %e, %k = %c0) : (tensor<4xf32>, i32) -> (tensor<4xf32>, i32) {
    %go = arith.cmpi slt, %k, %c3 : i32
    scf.condition(%go) %y, %k : tensor<4xf32>, i32
  } do {
  ^bb0(%y: tensor<4xf32>, %k: i32):
    %d = arith.addf %x, %x : tensor<4xf32>
    %k1 = arith.addi %k, %one : i32
    scf.yield %d, %k1 : tensor<4xf32>, i32
  }
  return %r#0 : tensor<4xf32>
}

// -----

func.func @empty_yielded(%x: tensor<4xf32>) -> tensor<4xf32> {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %v = tensor.extract %x[%c0] : tensor<4xf32>
  %big = arith.cmpf ogt, %v, %zero : f32
  %r = scf.if %big -> tensor<4xf32> {
    %e = tensor.empty() : tensor<4xf32>
    // expected-error@+1 {{'scf.yield' op yields a tensor.empty (#0): a value with no data (fill it)}}
    scf.yield %e : tensor<4xf32>
  } else {
    scf.yield %x : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}
