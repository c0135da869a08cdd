// RUN: ipu-opt %s --split-input-file -p 'builtin.module(ipu-plan)' | FileCheck %s
// RUN: not ipu-opt %s --split-input-file -p 'builtin.module(ipu-plan{memory-fraction=0.01})' 2>&1 | FileCheck %s --check-prefix=OOM

// 64x96 @ 96x48 on the 16 tiles of `tiny`: m cut in 2, n in 2, k in 4. The partial sums of
// each 32x24 output block sit on 4 consecutive tiles, and the result's rows (the dim with the
// largest blocks) are cut 4 times further so each of them sums an 8x24 share: whole rows.

module attributes {ipu.target = "tiny"} {
  // CHECK-LABEL: func.func @matmul
  // The inputs arrive where the matmul reads them.
  // CHECK-SAME: tensor<64x96xf32> {ipu.mapping = {block = array<i64: 32, 24>, kind = "block", tiles = array<i64: 0, 2, 4, 4, 1>}}
  // CHECK-SAME: tensor<96x48xf32> {ipu.mapping = {block = array<i64: 24, 24>, kind = "block", tiles = array<i64: 0, 4, 1, 2, 8>}}
  func.func @matmul(%a: tensor<64x96xf32>, %b: tensor<96x48xf32>) -> tensor<64x48xf32> {
    // CHECK: "ipu.matmul"
    // CHECK-SAME: ipu.mapping = {block = array<i64: 8, 24>, kind = "block", tiles = array<i64: 0, 8, 1, 2, 8>}
    // CHECK-SAME: ipu.partition = array<i64: 32, 24, 24>
    // CHECK-SAME: ipu.tiles = array<i64: 0, 2, 4, 2, 8, 4, 1>
    // OOM: matmul.mlir:[[@LINE+1]]:10: error: 'ipu.matmul' op does not fit in 655 bytes per tile however it is cut, even computed serially in pieces of one row, column, channel or group (see ipu-plan memory-fraction)
    %c = "ipu.matmul"(%a, %b) : (tensor<64x96xf32>, tensor<96x48xf32>) -> tensor<64x48xf32>
    return %c : tensor<64x48xf32>
  }
}

// -----

// 512^3 on gc200 uses all 1,472 tiles: 8 x 23 x 8.

module attributes {ipu.target = "gc200"} {
  // CHECK-LABEL: func.func @matmul_512
  func.func @matmul_512(%a: tensor<512x512xf32>, %b: tensor<512x512xf32>) -> tensor<512x512xf32> {
    // CHECK: ipu.partition = array<i64: 64, 23, 64>, ipu.tiles = array<i64: 0, 8, 8, 23, 64, 8, 1>
    %c = "ipu.matmul"(%a, %b) : (tensor<512x512xf32>, tensor<512x512xf32>) -> tensor<512x512xf32>
    return %c : tensor<512x512xf32>
  }
}

// -----

// A batched matmul cuts the batch first: each of the 16 tiles takes one of the 16 products.

module attributes {ipu.target = "tiny"} {
  // CHECK-LABEL: func.func @batched
  func.func @batched(%a: tensor<16x8x8xf32>, %b: tensor<16x8x8xf32>) -> tensor<16x8x8xf32> {
    // CHECK: ipu.partition = array<i64: 1, 8, 8, 8>
    %c = "ipu.matmul"(%a, %b) : (tensor<16x8x8xf32>, tensor<16x8x8xf32>) -> tensor<16x8x8xf32>
    return %c : tensor<16x8x8xf32>
  }
}
