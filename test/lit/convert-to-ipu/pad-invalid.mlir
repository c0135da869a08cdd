// RUN: ipu-opt %s --split-input-file --verify-diagnostics -p 'builtin.module(ipu-convert-to-ipu)'

// A pad by an amount computed at run time stays dynamic: refused as such, not for the `index`
// type of its operands (constant amounts become static: static-pads.mlir).

func.func @pad_by_a_computed_amount(%x: tensor<4xf32>, %n: tensor<i32>) -> tensor<7xf32> {
  %cst = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %e = tensor.extract %n[] : tensor<i32>
  // expected-error@+1 {{'arith.index_cast' is not supported by ipu-convert-to-ipu: scalar arithmetic outside linalg.generic}}
  %i = arith.index_cast %e : i32 to index
  // expected-error@+1 {{'tensor.pad' is not supported by ipu-convert-to-ipu: dynamic padding}}
  %out = tensor.pad %x low[%i] high[%c0] {
  ^bb0(%j: index):
    tensor.yield %cst : f32
  } : tensor<4xf32> to tensor<?xf32>
  %r = tensor.cast %out : tensor<?xf32> to tensor<7xf32>
  return %r : tensor<7xf32>
}
