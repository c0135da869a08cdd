// RUN: ipu-opt %s -p 'builtin.module(ipu-convert-to-ipu)' | FileCheck %s

// Device variables (`ipu.resident` on an argument, and on the result that is its new value)
// pass through the conversion: the attributes stay on the entry's signature for ipu-plan and
// ipu-schedule (docs/contracts.md, L0).

// CHECK-LABEL: func.func @main(
// CHECK-SAME: %arg0: tensor<16x8xf32> {ipu.resident = "param:w"}, %arg1: tensor<f32> {ipu.resident = "hyper:lr"}, %arg2: tensor<4x16xf32>)
// CHECK-SAME: -> (tensor<16x8xf32> {ipu.resident = "param:w"}, tensor<4x8xf32>)
// CHECK: "ipu.matmul"(%arg2, %arg0)

#id = affine_map<(d0, d1) -> (d0, d1)>
#scalar = affine_map<(d0, d1) -> ()>
func.func @main(%w: tensor<16x8xf32> {ipu.resident = "param:w"}, %lr: tensor<f32> {ipu.resident = "hyper:lr"}, %x: tensor<4x16xf32>) -> (tensor<16x8xf32> {ipu.resident = "param:w"}, tensor<4x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %y = linalg.matmul ins(%x, %w : tensor<4x16xf32>, tensor<16x8xf32>) outs(%z : tensor<4x8xf32>) -> tensor<4x8xf32>
  %ew = tensor.empty() : tensor<16x8xf32>
  %nw = linalg.generic {indexing_maps = [#id, #scalar, #id], iterator_types = ["parallel", "parallel"]} ins(%w, %lr : tensor<16x8xf32>, tensor<f32>) outs(%ew : tensor<16x8xf32>) {
  ^bb0(%a: f32, %l: f32, %o: f32):
    %s = arith.mulf %a, %l : f32
    linalg.yield %s : f32
  } -> tensor<16x8xf32>
  return %nw, %y : tensor<16x8xf32>, tensor<4x8xf32>
}
