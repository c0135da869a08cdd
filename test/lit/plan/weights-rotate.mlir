// RUN: ipu-opt %s --split-input-file -p 'builtin.module(ipu-plan)' | FileCheck %s

// Weights (constants and device variables, resident for the whole program) are placed by their
// first reader, in one replica of the pieces it reads: the one whose tiles hold the fewest weight
// bytes so far. Each matmul below (128x64 @ 64x64 on the 16 tiles of `tiny`) cuts m in 4 at
// tile stride 1 and n in 4 at stride 4, so its rhs is needed 4 times over (tiles j, j+4, j+8,
// j+12 each hold one replica j). Layers cut alike take turns: replica 0, 1, 2, 3, then 0 again
// (as Poplar's mapTensorLinearly starts each tensor at another tile). Always replica 0, BERT-base's
// weights sat on the first half of the tiles: 34 KiB a layer on its busiest tile against 20 on
// average, so 20 layers did not fit gc200.

module attributes {ipu.target = "tiny"} {
  // CHECK-LABEL: func.func @layers
  // CHECK: tiles = array<i64: 0, 1, 0, 4, 4>}} dense<1.0
  // CHECK: tiles = array<i64: 1, 1, 0, 4, 4>}} dense<2.0
  // CHECK: tiles = array<i64: 2, 1, 0, 4, 4>}} dense<3.0
  // CHECK: tiles = array<i64: 3, 1, 0, 4, 4>}} dense<4.0
  // CHECK: tiles = array<i64: 0, 1, 0, 4, 4>}} dense<5.0
  func.func @layers(%x: tensor<128x64xf32>) -> tensor<128x64xf32> {
    %w0 = arith.constant dense<1.0> : tensor<64x64xf32>
    %w1 = arith.constant dense<2.0> : tensor<64x64xf32>
    %w2 = arith.constant dense<3.0> : tensor<64x64xf32>
    %w3 = arith.constant dense<4.0> : tensor<64x64xf32>
    %w4 = arith.constant dense<5.0> : tensor<64x64xf32>
    %y0 = "ipu.matmul"(%x, %w0) : (tensor<128x64xf32>, tensor<64x64xf32>) -> tensor<128x64xf32>
    %y1 = "ipu.matmul"(%y0, %w1) : (tensor<128x64xf32>, tensor<64x64xf32>) -> tensor<128x64xf32>
    %y2 = "ipu.matmul"(%y1, %w2) : (tensor<128x64xf32>, tensor<64x64xf32>) -> tensor<128x64xf32>
    %y3 = "ipu.matmul"(%y2, %w3) : (tensor<128x64xf32>, tensor<64x64xf32>) -> tensor<128x64xf32>
    %y4 = "ipu.matmul"(%y3, %w4) : (tensor<128x64xf32>, tensor<64x64xf32>) -> tensor<128x64xf32>
    return %y4 : tensor<128x64xf32>
  }
}

// -----

// Device variables take turns too; an input streamed by every run (%x, %b) is no weight: it
// stays in the first replica.

module attributes {ipu.target = "tiny"} {
  // CHECK-LABEL: func.func @variables
  // CHECK-SAME: %arg0: tensor<64x64xf32> {ipu.mapping = {block = array<i64: 64, 16>, kind = "block", tiles = array<i64: 0, 1, 0, 4, 4>}, ipu.resident = "w0"}
  // CHECK-SAME: %arg1: tensor<64x64xf32> {ipu.mapping = {block = array<i64: 64, 16>, kind = "block", tiles = array<i64: 1, 1, 0, 4, 4>}, ipu.resident = "w1"}
  // CHECK-SAME: %arg2: tensor<128x64xf32> {ipu.mapping = {block = array<i64: 32, 64>, kind = "block", tiles = array<i64: 0, 4, 1, 1, 0>}}
  // CHECK-SAME: %arg3: tensor<64x64xf32> {ipu.mapping = {block = array<i64: 64, 16>, kind = "block", tiles = array<i64: 0, 1, 0, 4, 4>}}
  func.func @variables(%w0: tensor<64x64xf32> {ipu.resident = "w0"}, %w1: tensor<64x64xf32> {ipu.resident = "w1"},
                       %x: tensor<128x64xf32>, %b: tensor<64x64xf32>) -> tensor<128x64xf32> {
    %y0 = "ipu.matmul"(%x, %w0) : (tensor<128x64xf32>, tensor<64x64xf32>) -> tensor<128x64xf32>
    %y1 = "ipu.matmul"(%y0, %w1) : (tensor<128x64xf32>, tensor<64x64xf32>) -> tensor<128x64xf32>
    %y2 = "ipu.matmul"(%y1, %b) : (tensor<128x64xf32>, tensor<64x64xf32>) -> tensor<128x64xf32>
    return %y2 : tensor<128x64xf32>
  }
}
