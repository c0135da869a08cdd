// RUN: ipu-run %s --target tiny --random-inputs 0 --check | FileCheck %s

// From upstream MLIR's mlir/test/Integration/Dialect/Linalg/CPU/test-subtensor-insert-multiple-uses.mlir, with its own
// inputs: the two printed tensors returned: two
// inserts into the same constant, neither written in place over the other.
// CHECK-NOT: FAILED
// CHECK: check output 0: max abs error 0, {{.*}}: ok
// CHECK: check output 1: max abs error 0, {{.*}}: ok

func.func @main() -> (tensor<2xf32>, tensor<2xf32>) {
  %const = arith.constant dense<10.0> : tensor<2xf32>
  %insert_val = arith.constant dense<20.0> : tensor<1xf32>
  %inserted_at_position_0 = tensor.insert_slice %insert_val into %const[0][1][1] : tensor<1xf32> into tensor<2xf32>
  %inserted_at_position_1 = tensor.insert_slice %insert_val into %const[1][1][1] : tensor<1xf32> into tensor<2xf32>
  return %inserted_at_position_0, %inserted_at_position_1 : tensor<2xf32>, tensor<2xf32>
}
