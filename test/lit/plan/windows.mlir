// RUN: ipu-opt %s --split-input-file -p 'builtin.module(ipu-plan{grain=62})' | FileCheck %s

// The shifted slices of a grid that only a generic reads are windows it reads in place (one
// piece of the grid per part, the union of its windows: `reads`), so its pieces count the
// grid once against the budget, and a grid its reader places (a loop's input) gets the parts'
// blocks in its own coordinates (`aligned_source`): here the generic cuts its 8 rows one per
// tile, part j reads grid rows j .. j+2, and grid row j+1 goes on part j's tile; the grid's
// first and last rows on the tiles beside, the generic moved one tile on to make room.

// -----

// CHECK-LABEL: func.func @heat
// CHECK-SAME: {ipu.mapping = {block = array<i64: 1, 64>, kind = "block", tiles = array<i64: 0, 10, 1, 1, 1>}}
// CHECK: tensor.extract_slice {{.*}} {ipu.mapping = {block = array<i64: 1, 62>, kind = "block", tiles = array<i64: 0, 8, 1, 1, 1>}}
// CHECK: tensor.extract_slice {{.*}} {ipu.mapping = {block = array<i64: 1, 62>, kind = "block", tiles = array<i64: 1, 8, 1, 1, 1>}}
// CHECK: tensor.extract_slice {{.*}} {ipu.mapping = {block = array<i64: 1, 62>, kind = "block", tiles = array<i64: 2, 8, 1, 1, 1>}}
// CHECK: linalg.generic {{.*}} {ipu.mapping = {block = array<i64: 1, 62>, kind = "block", tiles = array<i64: 1, 8, 1, 1, 1>}, ipu.partition = array<i64: 1, 62>, ipu.tiles = array<i64: 1, 8, 1, 1, 1>}
// CHECK: tensor.insert_slice {{.*}} {ipu.mapping = {block = array<i64: 1, 64>, kind = "block", tiles = array<i64: 0, 10, 1, 1, 1>}}

#id = affine_map<(d0, d1) -> (d0, d1)>
module attributes {ipu.target = "tiny"} {
  func.func @heat(%u0: tensor<10x64xf32>) -> tensor<10x64xf32> {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %r = scf.for %t = %c0 to %c4 step %c1 iter_args(%u = %u0) -> tensor<10x64xf32> {
      %n = tensor.extract_slice %u[0, 1] [8, 62] [1, 1] : tensor<10x64xf32> to tensor<8x62xf32>
      %c = tensor.extract_slice %u[1, 1] [8, 62] [1, 1] : tensor<10x64xf32> to tensor<8x62xf32>
      %s = tensor.extract_slice %u[2, 1] [8, 62] [1, 1] : tensor<10x64xf32> to tensor<8x62xf32>
      %e = tensor.empty() : tensor<8x62xf32>
      %v = linalg.generic {indexing_maps = [#id, #id, #id, #id], iterator_types = ["parallel", "parallel"]}
          ins(%n, %c, %s : tensor<8x62xf32>, tensor<8x62xf32>, tensor<8x62xf32>) outs(%e : tensor<8x62xf32>) {
      ^bb0(%a: f32, %b: f32, %d: f32, %o: f32):
        %x = arith.addf %a, %d : f32
        %y = arith.addf %x, %b : f32
        linalg.yield %y : f32
      } -> tensor<8x62xf32>
      %next = tensor.insert_slice %v into %u[1, 1] [8, 62] [1, 1] : tensor<8x62xf32> into tensor<10x64xf32>
      scf.yield %next : tensor<10x64xf32>
    }
    return %r : tensor<10x64xf32>
  }
}
