// RUN: ipu-opt %s --split-input-file -p 'builtin.module(ipu-plan)' | FileCheck %s

// A slice keeps its source's blocks, placed so that each block starts on the tile holding its
// first element; an insert keeps its destination's layout. Shifted slices of one grid (a
// stencil's neighbours) then sit where the grid is, and the element-wise op over them, which
// keeps the layout of one of them, exchanges only the rows it shifts across tiles.

// -----

// 8 rows of 64 on 8 tiles (the tiny target's grain, 64 elements per tile: one row each).
// Rows 1..6 and 2..7 keep blocks of one row, from tiles 1 and 2: every row stays on its tile.

#id = affine_map<(d0, d1) -> (d0, d1)>
module attributes {ipu.target = "tiny"} {
  // CHECK-LABEL: func.func @shifted
  // CHECK-SAME: {ipu.mapping = {block = array<i64: 1, 64>, kind = "block", tiles = array<i64: 0, 8, 1, 1, 1>}}
  func.func @shifted(%u: tensor<8x64xf32>) -> tensor<8x64xf32> {
    // CHECK: tensor.extract_slice {{.*}} {ipu.mapping = {block = array<i64: 1, 64>, kind = "block", tiles = array<i64: 1, 6, 1, 1, 1>}}
    %a = tensor.extract_slice %u[1, 0] [6, 64] [1, 1] : tensor<8x64xf32> to tensor<6x64xf32>
    // CHECK: tensor.extract_slice {{.*}} {ipu.mapping = {block = array<i64: 1, 64>, kind = "block", tiles = array<i64: 2, 6, 1, 1, 1>}}
    %b = tensor.extract_slice %u[2, 0] [6, 64] [1, 1] : tensor<8x64xf32> to tensor<6x64xf32>
    %e = tensor.empty() : tensor<6x64xf32>
    // The first operand's layout: row i of the result on the tile of row i + 1 of %u.
    // CHECK: linalg.generic {{.*}} {ipu.mapping = {block = array<i64: 1, 64>, kind = "block", tiles = array<i64: 1, 6, 1, 1, 1>}
    %s = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
        ins(%a, %b : tensor<6x64xf32>, tensor<6x64xf32>) outs(%e : tensor<6x64xf32>) {
    ^bb0(%x: f32, %y: f32, %o: f32):
      %v = arith.addf %x, %y : f32
      linalg.yield %v : f32
    } -> tensor<6x64xf32>
    // CHECK: tensor.insert_slice {{.*}} {ipu.mapping = {block = array<i64: 1, 64>, kind = "block", tiles = array<i64: 0, 8, 1, 1, 1>}}
    %r = tensor.insert_slice %s into %u[1, 0] [6, 64] [1, 1] : tensor<6x64xf32> into tensor<8x64xf32>
    return %r : tensor<8x64xf32>
  }
}

// -----

// A strided slice is cut afresh (its rows are not runs of the source's blocks), and so is a
// slice that would sit on far fewer tiles than a fresh cut: a 16x16 corner of a matmul's result
// in 16x16 blocks is one block, one tile (256 elements), where a fresh cut spreads it over 4
// tiles of 64. A slice across the blocks keeps them: 64x2 in 4 blocks of 16x2.

module attributes {ipu.target = "tiny"} {
  // CHECK-LABEL: func.func @fresh
  func.func @fresh(%u: tensor<8x64xf32>, %w: tensor<64x64xf32>) -> (tensor<4x64xf32>, tensor<16x16xf32>, tensor<64x2xf32>) {
    // CHECK: tensor.extract_slice {{.*}} {ipu.mapping = {block = array<i64: 1, 64>, kind = "block", tiles = array<i64: {{[0-9]+}}, 4, 1, 1, 1>}}
    %a = tensor.extract_slice %u[0, 0] [4, 64] [2, 1] : tensor<8x64xf32> to tensor<4x64xf32>
    // CHECK: ipu.matmul{{.*}} {ipu.mapping = {block = array<i64: 16, 16>, kind = "block", tiles = array<i64: 0, 4, 1, 4, 4>}
    %t = "ipu.matmul"(%w, %w) : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
    // CHECK: tensor.extract_slice {{.*}} {ipu.mapping = {block = array<i64: 4, 16>, kind = "block", tiles = array<i64: {{[0-9]+}}, 4, 1, 1, 1>}}
    %c = tensor.extract_slice %t[0, 0] [16, 16] [1, 1] : tensor<64x64xf32> to tensor<16x16xf32>
    // CHECK: tensor.extract_slice {{.*}} {ipu.mapping = {block = array<i64: 16, 2>, kind = "block", tiles = array<i64: 0, 4, 1, 1, 4>}}
    %d = tensor.extract_slice %t[0, 0] [64, 2] [1, 1] : tensor<64x64xf32> to tensor<64x2xf32>
    return %a, %c, %d : tensor<4x64xf32>, tensor<16x16xf32>, tensor<64x2xf32>
  }
}
