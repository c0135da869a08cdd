// RUN: ipu-opt %s --split-input-file -p 'builtin.module(ipu-convert-to-ipu)' | FileCheck %s

// A loop with constant bounds and a carried tensor stays a loop; its body is converted like a
// function body: the matmul becomes ipu.matmul, the element-wise tanh a linalg.generic.

// CHECK-LABEL: func.func @recurrent
// CHECK: scf.for {{.*}} iter_args(%[[H:.*]] = %arg0) -> (tensor<4x8xf32>)
// CHECK: %[[M:.*]] = "ipu.matmul"(%[[H]], %arg1)
// CHECK: %[[T:.*]] = linalg.generic {{.*}} ins(%[[M]] : tensor<4x8xf32>)
// CHECK: math.tanh
// CHECK: scf.yield %[[T]] : tensor<4x8xf32>
func.func @recurrent(%h0: tensor<4x8xf32>, %w: tensor<8x8xf32>) -> tensor<4x8xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c10 = arith.constant 10 : index
  %zero = arith.constant 0.0 : f32
  %r = scf.for %t = %c0 to %c10 step %c1 iter_args(%h = %h0) -> tensor<4x8xf32> {
    %e = tensor.empty() : tensor<4x8xf32>
    %fill = linalg.fill ins(%zero : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
    %hw = linalg.matmul ins(%h, %w : tensor<4x8xf32>, tensor<8x8xf32>) outs(%fill : tensor<4x8xf32>) -> tensor<4x8xf32>
    %next = linalg.tanh ins(%hw : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
    scf.yield %next : tensor<4x8xf32>
  }
  return %r : tensor<4x8xf32>
}

// -----

// Nested loops: the inner body is converted too (the element-wise add becomes a generic).

// CHECK-LABEL: func.func @nested
// CHECK: scf.for
// CHECK: scf.for
// CHECK: linalg.generic
// CHECK: arith.addf
func.func @nested(%x: tensor<16xf32>) -> tensor<16xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %r = scf.for %i = %c0 to %c3 step %c1 iter_args(%a = %x) -> tensor<16xf32> {
    %s = scf.for %j = %c0 to %c3 step %c1 iter_args(%b = %a) -> tensor<16xf32> {
      %n = arith.addf %b, %x : tensor<16xf32>
      scf.yield %n : tensor<16xf32>
    }
    scf.yield %s : tensor<16xf32>
  }
  return %r : tensor<16xf32>
}
