// RUN: ipu-run %s --target tiny --random-inputs 0 --check | FileCheck %s

// From upstream MLIR's mlir/test/Integration/Dialect/Linalg/CPU/test-tensor-e2e.mlir, with its own
// inputs: the printed tensor returned from main, which calls a
// second public function.
// CHECK-NOT: FAILED
// CHECK: check output 0: max abs error 0, {{.*}}: ok

func.func @foo() -> tensor<4xf32> {
  %0 = arith.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  return %0 : tensor<4xf32>
}

func.func @main() -> tensor<4xf32> {
  %0 = call @foo() : () -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
