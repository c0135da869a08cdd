// RUN: not ipu-opt %s --load-pass-plugin=%S/Inputs/whole_loops.py -p 'builtin.module(ipu-plan)' 2>&1 | FileCheck %s

// A summed loop is cut only when its partial results have an associative combiner
// (`Space.admits`), even if the op's record calls it splittable (here `test.cut_loops`,
// Inputs/whole_loops.py): a row of `acc - x` over 12,288 values (48 KiB) then fits no tile's
// 39,321 bytes, and the op is refused at its location rather than cut and computed wrong.

// CHECK: admits-no-combiner.mlir:[[# @LINE + 6]]:10: error: 'linalg.generic' op does not fit in 39321 bytes per tile however it is cut: its leanest cut, into 4 parts, holds 49,156 bytes on a tile

#in = affine_map<(d0, d1) -> (d0, d1)>
#out = affine_map<(d0, d1) -> (d0)>
module attributes {ipu.target = "tiny"} {
  func.func @difference(%a: tensor<4x12288xi32>, %init: tensor<4xi32>) -> tensor<4xi32> {
    %r = linalg.generic {indexing_maps = [#in, #out], iterator_types = ["parallel", "reduction"], test.cut_loops = array<i64: 1>} ins(%a : tensor<4x12288xi32>) outs(%init : tensor<4xi32>) {
    ^bb0(%x: i32, %acc: i32):
      %d = arith.subi %acc, %x : i32
      linalg.yield %d : i32
    } -> tensor<4xi32>
    return %r : tensor<4xi32>
  }
}
