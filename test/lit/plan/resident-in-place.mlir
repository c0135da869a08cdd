// RUN: ipu-opt %s --split-input-file -p 'builtin.module(ipu-plan)' | FileCheck %s

// A device variable's new value that ipu-schedule writes over its old one (`Schedule.in_place`:
// a generic of parallel loops reading the old value indexed as its result, nothing after it
// reading the old value) shares that input's piece: ipu-plan counts one piece for both. SGD's
// momentum update of a tied embedding reads two gradients (the head's and the embedding's) and
// the old buffer: 3 pieces of a 512x96 f32 tensor on tiny's 16 tiles take 36,864 bytes, within
// 0.6 x 65536 = 39,321; 4 would not fit (resident-in-place-invalid.mlir).

// -----

// CHECK-LABEL: func.func @momentum
// CHECK: linalg.generic
// CHECK-SAME: ipu.partition = array<i64: 32, 96>
// CHECK-SAME: ipu.tiles = array<i64: 0, 16, 1, 1, 0>

#id = affine_map<(d0, d1) -> (d0, d1)>
#scalar = affine_map<(d0, d1) -> ()>
module attributes {ipu.target = "tiny"} {
  func.func @momentum(%buf: tensor<512x96xf32> {ipu.resident = "opt:momentum_buffer:w"}, %first: tensor<i1>, %head: tensor<512x96xf32>, %embedding: tensor<512x96xf32>) -> (tensor<512x96xf32> {ipu.resident = "opt:momentum_buffer:w"}) {
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
    return %new : tensor<512x96xf32>
  }
}
