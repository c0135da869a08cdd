// RUN: not ipu-opt %s -p 'builtin.module(ipu-plan)' 2>&1 | FileCheck %s

// resident-in-place.mlir's momentum update, the old value returned too (a stream):
// ipu-schedule gives the new value a buffer of its own, and so the planner counts its piece
// (4 x 12,288 bytes over the 39,321 of tiny): no cut fits.

// CHECK: resident-in-place-invalid.mlir:[[# @LINE + 6]]:12: error: 'linalg.generic' op does not fit in 39321 bytes per tile however it is cut: its leanest cut, into 16 parts, holds 49,156 bytes on a tile (4 of input 0 tensor<i1>, 12,288 of input 1 tensor<512x96xf32>, 12,288 of input 2 tensor<512x96xf32>, 12,288 of input 3 tensor<512x96xf32>, 12,288 of the result tensor<512x96xf32>)
#id = affine_map<(d0, d1) -> (d0, d1)>
#scalar = affine_map<(d0, d1) -> ()>
module attributes {ipu.target = "tiny"} {
  func.func @old_value_read_after(%buf: tensor<512x96xf32> {ipu.resident = "opt:momentum_buffer:w"}, %first: tensor<i1>, %head: tensor<512x96xf32>, %embedding: tensor<512x96xf32>) -> (tensor<512x96xf32> {ipu.resident = "opt:momentum_buffer:w"}, tensor<512x96xf32>) {
    %e = tensor.empty() : tensor<512x96xf32>
    %new = linalg.generic {indexing_maps = [#scalar, #id, #id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%first, %head, %embedding, %buf : tensor<i1>, tensor<512x96xf32>, tensor<512x96xf32>, tensor<512x96xf32>) outs(%e : tensor<512x96xf32>) {
    ^bb0(%f: i1, %h: f32, %g: f32, %b: f32, %o: f32):
      %grad = arith.addf %h, %g : f32
      %c = arith.constant 0.9 : f32
      %m = arith.mulf %b, %c : f32
      %s = arith.addf %m, %grad : f32
      %r = arith.select %f, %grad, %s : f32
      linalg.yield %r : f32
    } -> tensor<512x96xf32>
    return %new, %buf : tensor<512x96xf32>, tensor<512x96xf32>
  }
}
