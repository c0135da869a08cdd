// RUN: ipu-opt %s --split-input-file -p 'builtin.module(ipu-plan)' | FileCheck %s

// Reshapes are views: a tile's box must stay one contiguous run of each reassociation group.
// A group may be cut along any of its dimensions: the ones before the cut one in single
// indices, the ones after it whole.

// -----

// A fused q/k/v projection (nn.MultiheadAttention at BERT-base size): the matmul's column
// blocks (32: two chunks of the conv units) are runs within the 768-wide heads, so the
// reshape is a view of the matmul's layout (7 x 32 blocks), nothing moved. Cut only along the
// first dim of each group (sizes 1 and 1) it would sit whole, 1.18 MB, on one tile.

module attributes {ipu.target = "gc200"} {
  // CHECK-LABEL: func.func @qkv
  func.func @qkv(%x: tensor<128x768xf32>, %w: tensor<768x2304xf32>) -> tensor<1x128x1x3x768xf32> {
    %0 = "ipu.matmul"(%x, %w) : (tensor<128x768xf32>, tensor<768x2304xf32>) -> tensor<128x2304xf32>
    // CHECK: tensor.expand_shape
    // CHECK-SAME: ipu.mapping = {block = array<i64: 1, 7, 1, 1, 32>, kind = "block", tiles = array<i64: 0, 1, 19, 19, 1, 1, 1440, 3, 480, 24, 20>}
    %1 = tensor.expand_shape %0 [[0, 1], [2, 3, 4]] output_shape [1, 128, 1, 3, 768] : tensor<128x2304xf32> into tensor<1x128x1x3x768xf32>
    return %1 : tensor<1x128x1x3x768xf32>
  }
}

// -----

// When the source's layout is a view of the reshape's result, the result keeps it: the same
// buffers, nothing exchanged (rows of 96 on 16 tiles are rows of 3x32).

#id = affine_map<(d0, d1) -> (d0, d1)>
module attributes {ipu.target = "tiny"} {
  // CHECK-LABEL: func.func @view
  func.func @view(%x: tensor<16x96xf32>) -> tensor<16x3x32xf32> {
    %e = tensor.empty() : tensor<16x96xf32>
    // CHECK: linalg.generic
    // CHECK-SAME: ipu.mapping = {block = array<i64: 1, 96>, kind = "block", tiles = array<i64: 0, 16, 1, 1, 0>}
    %0 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<16x96xf32>) outs(%e : tensor<16x96xf32>) {
    ^bb0(%a: f32, %o: f32):
      %s = arith.negf %a : f32
      linalg.yield %s : f32
    } -> tensor<16x96xf32>
    // CHECK: tensor.expand_shape
    // CHECK-SAME: ipu.mapping = {block = array<i64: 1, 3, 32>, kind = "block", tiles = array<i64: 0, 16, 1, 1, 0, 1, 0>}
    %1 = tensor.expand_shape %0 [[0], [1, 2]] output_shape [16, 3, 32] : tensor<16x96xf32> into tensor<16x3x32xf32>
    return %1 : tensor<16x3x32xf32>
  }
}

// -----

// A collapse of a layout cut in both dims of a group: single images, then channels in halves;
// the collapsed rows are cut in blocks of 128 (2 x 64), whose tiles follow row-major.

module attributes {ipu.target = "tiny"} {
  // CHECK-LABEL: func.func @collapse
  // CHECK-SAME: {ipu.mapping = {block = array<i64: 1, 1, 2, 64>, kind = "block", tiles = array<i64: 0, 2, 6, 3, 2, 2, 1, 1, 1>}}
  func.func @collapse(%x: tensor<2x3x4x64xf32>) -> tensor<6x256xf32> {
    // CHECK: tensor.collapse_shape
    // CHECK-SAME: ipu.mapping = {block = array<i64: 1, 128>, kind = "block", tiles = array<i64: 0, 6, 2, 2, 1>}
    %1 = tensor.collapse_shape %x [[0, 1], [2, 3]] : tensor<2x3x4x64xf32> into tensor<6x256xf32>
    return %1 : tensor<6x256xf32>
  }
}
