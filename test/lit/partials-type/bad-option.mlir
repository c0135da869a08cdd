// RUN: not ipu-opt %s -p 'builtin.module(ipu-partials-type{type=bf16})' 2>&1 | FileCheck %s
// CHECK: error: ipu-partials-type: type must be f16 or f32, got 'bf16'
// CHECK-NOT: Traceback

func.func @main(%a: tensor<4x32xf16>, %b: tensor<32x8xf16>) -> tensor<4x8xf16> {
  %p = "ipu.matmul"(%a, %b) : (tensor<4x32xf16>, tensor<32x8xf16>) -> tensor<4x8xf16>
  return %p : tensor<4x8xf16>
}
