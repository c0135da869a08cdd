// RUN: ipu-run %s --target tiny --random-inputs 0 --check | FileCheck %s

// From upstream MLIR's mlir/test/Integration/Dialect/Linalg/CPU/test-padtensor.mlir, with its own
// inputs: the printed tensor returned; the padding amounts written as
// literals (as SSA constants they are refused: test/lit/convert-to-ipu/pad-invalid.mlir) and
// the padded width static, as the literal amounts make it.
// CHECK-NOT: FAILED
// CHECK: check output 0: max abs error 0, {{.*}}: ok

func.func @main() -> tensor<1x4x5xf32> {
  %const = arith.constant dense<[[[1.0, 2.0, 3.0], [2.0, 3.0, 4.0]]]> : tensor<1x2x3xf32>
  %dynamic = tensor.cast %const: tensor<1x2x3xf32> to tensor<1x?x3xf32>
  %cst = arith.constant 2.3 : f32
  %out = tensor.pad %dynamic low[0, 2, 0] high[0, 0, 2]  {
  ^bb0(%gen_arg1: index, %gen_arg2: index, %gen_arg3: index):
    tensor.yield %cst : f32
  } : tensor<1x?x3xf32> to tensor<1x?x5xf32>
  %static = tensor.cast %out : tensor<1x?x5xf32> to tensor<1x4x5xf32>
  return %static : tensor<1x4x5xf32>
}
