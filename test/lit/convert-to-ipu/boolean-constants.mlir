// RUN: ipu-opt %s -p "builtin.module(ipu-convert-to-ipu)" | FileCheck %s

// A splat boolean constant (the causal mask of scaled_dot_product_attention ANDs its mask with
// one). test_differential runs this file on the simulator and on the ExecutionEngine, whose
// view of a splat i1 attribute read past its one stored bit (a mask half false, varying).

// CHECK-LABEL: func.func @main
// CHECK: arith.select
func.func @main(%x: tensor<16x16xf32>) -> tensor<16x16xf32> {
  %z = arith.constant 0.0 : f32
  %t = arith.constant dense<true> : tensor<16x16xi1>
  %a = arith.constant dense<0.0> : tensor<f32>
  %b = arith.constant dense<0xFF800000> : tensor<f32>
  %e = tensor.empty() : tensor<16x16xi1>
  %m = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<16x16xf32>) outs(%e : tensor<16x16xi1>) {
  ^bb0(%in: f32, %out: i1):
    %c = arith.cmpf ogt, %in, %z : f32
    linalg.yield %c : i1
  } -> tensor<16x16xi1>
  %n = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%m, %t : tensor<16x16xi1>, tensor<16x16xi1>) outs(%e : tensor<16x16xi1>) {
  ^bb0(%in: i1, %in2: i1, %out: i1):
    %c = arith.andi %in, %in2 : i1
    linalg.yield %c : i1
  } -> tensor<16x16xi1>
  %e2 = tensor.empty() : tensor<16x16xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>, affine_map<(d0, d1) -> ()>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%n, %a, %b : tensor<16x16xi1>, tensor<f32>, tensor<f32>) outs(%e2 : tensor<16x16xf32>) {
  ^bb0(%in: i1, %p: f32, %q: f32, %out: f32):
    %s = arith.select %in, %p, %q : f32
    linalg.yield %s : f32
  } -> tensor<16x16xf32>
  return %r : tensor<16x16xf32>
}
