// RUN: ipu-run %s --target tiny --random-inputs 0 --check | FileCheck %s

// From upstream MLIR's mlir/test/Integration/Dialect/Linalg/CPU/mmt4d.mlir, with its own
// inputs: the printed tensor returned, without the transform script (tiling
// and vectorizing for a CPU).
// CHECK-NOT: FAILED
// CHECK: check output 0: max abs error 0, {{.*}} (exact): ok

func.func @main() -> tensor<2x2x3x3xi32> {
  %A_alloc = tensor.empty() : tensor<2x2x3x1xi32>
  %B_alloc = tensor.empty() : tensor<2x2x3x1xi32>
  %C_in = arith.constant dense<[
    [[[ 1, 2, 3], [ 4, 5, 6], [ 7, 8, 9]], [[ 11, 12, 13], [ 14, 15, 16], [ 17, 18, 19]]],
    [[[ 21, 22, 23], [ 24, 25, 26], [ 27, 28, 29]], [[ 31, 32, 33], [ 34, 35, 36], [ 37, 38, 39]]]
  ]> : tensor<2x2x3x3xi32>
  %three = arith.constant 3 : i32
  %four = arith.constant 4 : i32
  %A = linalg.fill ins(%three : i32) outs(%A_alloc : tensor<2x2x3x1xi32>) -> tensor<2x2x3x1xi32>
  %B = linalg.fill ins(%four : i32) outs(%B_alloc : tensor<2x2x3x1xi32>) -> tensor<2x2x3x1xi32>
  %C_out = linalg.mmt4d ins(%A, %B: tensor<2x2x3x1xi32>, tensor<2x2x3x1xi32>) outs(%C_in: tensor<2x2x3x3xi32>) -> tensor<2x2x3x3xi32>
  return %C_out : tensor<2x2x3x3xi32>
}
