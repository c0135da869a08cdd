// RUN: ipu-opt %s --split-input-file --verify-diagnostics -p 'builtin.module(ipu-convert-to-ipu)'

// Padding amounts given as SSA values (upstream's Linalg/CPU/test-padtensor.mlir writes them
// so), even constant ones, which canonicalize leaves as they are: the pad is refused as such,
// not for the `index` type of its operands.

func.func @pad_by_values() -> tensor<1x4x5xf32> {
  %const = arith.constant dense<[[[1.0, 2.0, 3.0], [2.0, 3.0, 4.0]]]> : tensor<1x2x3xf32>
  %offset = arith.constant 2 : index
  %cst = arith.constant 2.3 : f32
  %c0 = arith.constant 0 : index
  // expected-error@+1 {{'tensor.pad' is not supported by ipu-convert-to-ipu: padding amounts given as values, not literals (write low[0, 2, 0] high[0, 0, 2])}}
  %out = tensor.pad %const low[%c0, %offset, %c0] high[%c0, %c0, %offset] {
  ^bb0(%i: index, %j: index, %k: index):
    tensor.yield %cst : f32
  } : tensor<1x2x3xf32> to tensor<1x4x5xf32>
  return %out : tensor<1x4x5xf32>
}

