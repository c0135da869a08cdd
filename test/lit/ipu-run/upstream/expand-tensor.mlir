// RUN: ipu-run %s --target tiny --random-inputs 0 --check | FileCheck %s

// From upstream MLIR's mlir/test/Integration/Dialect/Linalg/CPU/test-expand-tensor.mlir, with its own
// inputs: the printed tensor returned; the shapes static (expand_shape with output_shape).
// CHECK-NOT: FAILED
// CHECK: check output 0: max abs error 0, {{.*}}: ok

func.func @main() -> tensor<2x2x3x1x2xf32> {
  %const = arith.constant dense<[[[-3.9058,0.9072],[-2.9470,-2.2055],[18.3946,8.2997],[3.4700,5.9006],[-17.2267,4.9777],[1.0450,-0.8201]],[[17.6996,-11.1763],[26.7775,-3.8823],[-4.2492,-5.8966],[2.1259,13.1794],[-10.7136,0.8428],[16.4233,9.4589]]]> : tensor<2x6x2xf32>
  %expanded = tensor.expand_shape %const [[0], [1, 2, 3], [4]] output_shape [2, 2, 3, 1, 2] : tensor<2x6x2xf32> into tensor<2x2x3x1x2xf32>
  return %expanded : tensor<2x2x3x1x2xf32>
}
