// RUN: ipu-opt %s -p 'builtin.module(ipu-plan)' | FileCheck %s

// ipu-plan places a device variable like any input (where its first compute user reads it)
// and keeps its `ipu.resident` name beside the `ipu.mapping` it adds.

// CHECK-LABEL: func.func @main(
// CHECK-SAME: %arg0: tensor<256xf32> {ipu.mapping = {block = array<i64: 64>, kind = "block", tiles = array<i64: 0, 4, 1>}, ipu.resident = "param:w"}
// CHECK-SAME: %arg1: tensor<f32> {ipu.mapping = {grain = 1 : i64, kind = "linear", tiles = array<i64: 0, 1, 1>}, ipu.resident = "hyper:lr"}
// CHECK-SAME: %arg2: tensor<256xf32> {ipu.mapping = {block = array<i64: 64>, kind = "block", tiles = array<i64: 0, 4, 1>}})
// CHECK-SAME: -> (tensor<256xf32> {ipu.resident = "param:w"}, tensor<256xf32>)

#id = affine_map<(d0) -> (d0)>
#scalar = affine_map<(d0) -> ()>
module attributes {ipu.target = "tiny"} {
  func.func @main(%w: tensor<256xf32> {ipu.resident = "param:w"}, %lr: tensor<f32> {ipu.resident = "hyper:lr"}, %g: tensor<256xf32>) -> (tensor<256xf32> {ipu.resident = "param:w"}, tensor<256xf32>) {
    %e = tensor.empty() : tensor<256xf32>
    %nw = linalg.generic {indexing_maps = [#id, #scalar, #id, #id], iterator_types = ["parallel"]} ins(%w, %lr, %g : tensor<256xf32>, tensor<f32>, tensor<256xf32>) outs(%e : tensor<256xf32>) {
    ^bb0(%a: f32, %l: f32, %b: f32, %o: f32):
      %m = arith.mulf %l, %b : f32
      %s = arith.subf %a, %m : f32
      linalg.yield %s : f32
    } -> tensor<256xf32>
    %sq = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%g : tensor<256xf32>) outs(%e : tensor<256xf32>) {
    ^bb0(%b: f32, %o: f32):
      %m = arith.mulf %b, %b : f32
      linalg.yield %m : f32
    } -> tensor<256xf32>
    return %nw, %sq : tensor<256xf32>, tensor<256xf32>
  }
}
