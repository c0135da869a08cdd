// RUN: ipu-run %s --target tiny --random-inputs 0 --check | FileCheck %s

// From upstream MLIR's mlir/test/Integration/Dialect/Linalg/CPU/test-padtensor.mlir, with its own
// inputs: the printed tensor returned, cast to its static shape.
// CHECK-NOT: FAILED
// CHECK: check output 0: max abs error 0, {{.*}}: ok

func.func @main() -> tensor<1x4x5xf32> {
  %const = arith.constant dense<[[[1.0, 2.0, 3.0], [2.0, 3.0, 4.0]]]> : tensor<1x2x3xf32>
  %dynamic = tensor.cast %const: tensor<1x2x3xf32> to tensor<1x?x3xf32>
  %offset = arith.constant 2 : index
  %cst = arith.constant 2.3 : f32
  %c0 = arith.constant 0 : index
  %out = tensor.pad %dynamic low[%c0, %offset, %c0] high[%c0, %c0, %offset]  {
  ^bb0(%gen_arg1: index, %gen_arg2: index, %gen_arg3: index):
    tensor.yield %cst : f32
  } : tensor<1x?x3xf32> to tensor<1x?x?xf32>
  %static = tensor.cast %out : tensor<1x?x?xf32> to tensor<1x4x5xf32>
  return %static : tensor<1x4x5xf32>
}
