// RUN: ipu-run %s --target tiny --random-inputs 0 --check | FileCheck %s

// From upstream MLIR's mlir/test/Integration/Dialect/Linalg/CPU/test-collapse-tensor.mlir, with its own
// inputs: the printed tensor returned, made static by a cast. Its main calls a public
// function returning a dynamic shape: inlined and dropped by the reference, which runs only
// the entry (no out-param can hold a dynamic shape).
// CHECK-NOT: FAILED
// CHECK: check output 0: max abs error 0, {{.*}}: ok

func.func @main() -> tensor<2x6x2xf32> {
  %const = arith.constant dense<[[[[-3.9058,0.9072],[-2.9470,-2.2055],[18.3946,8.2997]],[[3.4700,5.9006],[-17.2267,4.9777],[1.0450,-0.8201]]],[[[17.6996,-11.1763],[26.7775,-3.8823],[-4.2492,-5.8966]],[[2.1259,13.1794],[-10.7136,0.8428],[16.4233,9.4589]]]]> : tensor<2x2x3x2xf32>
  %dynamic = tensor.cast %const: tensor<2x2x3x2xf32> to tensor<2x?x?x?xf32>
  %collapsed = call @collapse_dynamic_shape(%dynamic) : (tensor<2x?x?x?xf32>) -> (tensor<2x?x?xf32>)
  %static = tensor.cast %collapsed : tensor<2x?x?xf32> to tensor<2x6x2xf32>
  return %static : tensor<2x6x2xf32>
}

func.func @collapse_dynamic_shape(%arg0 : tensor<2x?x?x?xf32>) -> tensor<2x?x?xf32> {
  %0 = tensor.collapse_shape %arg0 [[0], [1, 2], [3]]: tensor<2x?x?x?xf32> into tensor<2x?x?xf32>
  return %0 : tensor<2x?x?xf32>
}
