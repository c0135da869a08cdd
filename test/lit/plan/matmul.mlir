// RUN: ipu-opt %s --split-input-file -p 'builtin.module(ipu-plan)' | FileCheck %s
// RUN: not ipu-opt %s --split-input-file -p 'builtin.module(ipu-plan{memory-fraction=0.01})' 2>&1 | FileCheck %s --check-prefix=OOM

// 64x96 @ 96x48 on the 16 tiles of `tiny`: m whole (the AMP vertex streams rows through its
// workers, so long blocks of rows are cheap), n cut in 4, k in 4. The partial sums of each
// 64x12 output block sit on 4 consecutive tiles, and the result's rows (the dim with the
// largest blocks) are cut 4 times further so each of them sums a 16x12 share: whole rows.

module attributes {ipu.target = "tiny"} {
  // CHECK-LABEL: func.func @matmul
  // The inputs arrive where the matmul reads them.
  // CHECK-SAME: tensor<64x96xf32> {ipu.mapping = {block = array<i64: 64, 24>, kind = "block", tiles = array<i64: 0, 1, 0, 4, 1>}}
  // CHECK-SAME: tensor<96x48xf32> {ipu.mapping = {block = array<i64: 24, 12>, kind = "block", tiles = array<i64: 0, 4, 1, 4, 4>}}
  func.func @matmul(%a: tensor<64x96xf32>, %b: tensor<96x48xf32>) -> tensor<64x48xf32> {
    // CHECK: "ipu.matmul"
    // CHECK-SAME: ipu.mapping = {block = array<i64: 16, 12>, kind = "block", tiles = array<i64: 0, 4, 1, 4, 4>}
    // CHECK-SAME: ipu.partition = array<i64: 64, 12, 24>
    // CHECK-SAME: ipu.tiles = array<i64: 0, 1, 0, 4, 4, 4, 1>
    // OOM: matmul.mlir:[[@LINE+1]]:10: error: 'ipu.matmul' op does not fit in 655 bytes per tile however it is cut, even computed serially in pieces of one row, column, channel or group (see ipu-plan memory-fraction)
    %c = "ipu.matmul"(%a, %b) : (tensor<64x96xf32>, tensor<96x48xf32>) -> tensor<64x48xf32>
    return %c : tensor<64x48xf32>
  }
}

// -----

// 512^3 on gc200: m cut in 8 (64 rows), n in 16 (32 columns: two whole chunks of the 16 conv
// units), k in 11 (48 inputs: 6 whole chunks of 8) on 1,408 tiles. Blocks of 74 rows and 40
// inputs on 1,456 tiles are 1.7% cheaper in simulated cycles, but of the sizes giving as many
// parts the planner takes the one with the largest power-of-two factor, which lines up with
// its neighbours' blocks (fewer, larger copies between ops); the grid's best, all 1,472 tiles
// with k in 23 (3 chunks of 8, the last partly filled), is 12% dearer.

module attributes {ipu.target = "gc200"} {
  // CHECK-LABEL: func.func @matmul_512
  func.func @matmul_512(%a: tensor<512x512xf32>, %b: tensor<512x512xf32>) -> tensor<512x512xf32> {
    // CHECK: ipu.partition = array<i64: 64, 32, 48>, ipu.tiles = array<i64: 0, 8, 11, 16, 88, 11, 1>
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
