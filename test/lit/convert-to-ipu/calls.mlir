// RUN: ipu-opt %s --split-input-file -p 'builtin.module(ipu-convert-to-ipu)' | FileCheck %s

// Calls are inlined into the entry and the callees erased; the three element-wise ops of
// the callees then fuse into one generic.

// CHECK-LABEL: func.func @main
// CHECK-NOT: call
// CHECK: %[[Y:.*]] = linalg.generic
// CHECK-SAME: ins(%arg0 : tensor<4x8xf32>)
// CHECK: %[[H:.*]] = arith.maximumf
// CHECK-NEXT: %[[E:.*]] = math.exp %[[H]]
// CHECK-NEXT: arith.addf %[[E]], %[[H]]
// CHECK: return %[[Y]]
// CHECK-NOT: func.func
func.func @main(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %h = func.call @relu(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %y = func.call @exp_plus(%h, %h) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

func.func private @relu(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant dense<0.0> : tensor<4x8xf32>
  %y = arith.maximumf %x, %zero : tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

func.func private @exp_plus(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %e = func.call @exp(%a) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %s = arith.addf %e, %b : tensor<4x8xf32>
  return %s : tensor<4x8xf32>
}

func.func private @exp(%a: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %e = math.exp %a : tensor<4x8xf32>
  return %e : tensor<4x8xf32>
}
