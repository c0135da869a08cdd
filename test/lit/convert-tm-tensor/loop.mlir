// RUN: ipu-opt %s --allow-unregistered-dialect -p 'builtin.module(ipu-convert-tm-tensor)' | FileCheck %s

// A cumsum (tm_tensor.scan) in a loop body becomes its generic there, reading the carried tensor.

// CHECK-LABEL: func.func @cumsum_steps
// CHECK: scf.for {{.*}} iter_args(%[[X:.*]] = %arg0)
// CHECK: %[[S:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[X]] : tensor<3x8xf32>)
// CHECK: linalg.index
// CHECK: scf.yield %[[S]]
// CHECK-NOT: tm_tensor
func.func @cumsum_steps(%x0: tensor<3x8xf32>) -> tensor<3x8xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %r = scf.for %s = %c0 to %c4 step %c1 iter_args(%x = %x0) -> tensor<3x8xf32> {
    %0 = tensor.empty() : tensor<3x8xf32>
    %1 = tensor.empty() : tensor<3xf32>
    %2:2 = "tm_tensor.scan"(%x, %0, %1) <{dimension = 1 : i64, inclusive = true, operandSegmentSizes = array<i32: 1, 2>}> ({
    ^bb0(%a: f32, %b: f32):
      %3 = arith.addf %a, %b : f32
      "tm_tensor.yield"(%3) : (f32) -> ()
    }) : (tensor<3x8xf32>, tensor<3x8xf32>, tensor<3xf32>) -> (tensor<3x8xf32>, tensor<3xf32>)
    scf.yield %2#0 : tensor<3x8xf32>
  }
  return %r : tensor<3x8xf32>
}
