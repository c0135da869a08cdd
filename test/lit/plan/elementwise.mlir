// RUN: ipu-opt %s --split-input-file -p 'builtin.module(ipu-plan)' | FileCheck %s
// RUN: ipu-opt %s --split-input-file -p 'builtin.module(ipu-plan{grain=1024})' | FileCheck %s --check-prefix=GRAIN

// Element-wise work is cut row-major with at least `grain` (64) elements per tile: 40x33 has
// 1320 elements, so 20 tiles' worth; rows of 33 give 14 blocks of 3 rows. Arguments are
// placed where their first user reads them: %a like the result, the bias whole on tile 0.

#map = affine_map<(d0, d1) -> (d0, d1)>
#map1 = affine_map<(d0, d1) -> (d1)>
module attributes {ipu.target = "tiny"} {
  // CHECK-LABEL: func.func @bias_relu
  // CHECK-SAME: %{{.*}}: tensor<40x33xf32> {ipu.mapping = {block = array<i64: 3, 33>, kind = "block", tiles = array<i64: 0, 14, 1, 1, 0>}}
  // CHECK-SAME: %{{.*}}: tensor<33xf32> {ipu.mapping = {block = array<i64: 33>, kind = "block", tiles = array<i64: 0, 1, 0>}}
  // GRAIN-LABEL: func.func @bias_relu
  // GRAIN-SAME: block = array<i64: 40, 33>
  func.func @bias_relu(%a: tensor<40x33xf32>, %b: tensor<33xf32>) -> tensor<40x33xf32> {
    %c = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<40x33xf32>
    // CHECK: linalg.generic
    // CHECK-SAME: ipu.mapping = {block = array<i64: 3, 33>, kind = "block", tiles = array<i64: 0, 14, 1, 1, 0>}
    // CHECK-SAME: ipu.partition = array<i64: 3, 33>
    // CHECK-SAME: ipu.tiles = array<i64: 0, 14, 1, 1, 0>
    %r = linalg.generic {indexing_maps = [#map, #map1, #map], iterator_types = ["parallel", "parallel"]} ins(%a, %b : tensor<40x33xf32>, tensor<33xf32>) outs(%e : tensor<40x33xf32>) {
    ^bb0(%x: f32, %y: f32, %o: f32):
      %s = arith.addf %x, %y : f32
      %t = arith.maximumf %s, %c : f32
      linalg.yield %t : f32
    } -> tensor<40x33xf32>
    return %r : tensor<40x33xf32>
  }
}

// -----

// A row sum is not cut along the summed dim; its 256 rows spread over the 16 tiles.

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
module attributes {ipu.target = "tiny"} {
  // CHECK-LABEL: func.func @row_sum
  func.func @row_sum(%a: tensor<256x64xf32>, %init: tensor<256xf32>) -> tensor<256xf32> {
    // CHECK: linalg.generic
    // CHECK-SAME: ipu.partition = array<i64: 16, 64>
    // CHECK-SAME: ipu.tiles = array<i64: 0, 16, 1, 1, 0>
    %r = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%a : tensor<256x64xf32>) outs(%init : tensor<256xf32>) {
    ^bb0(%x: f32, %acc: f32):
      %s = arith.addf %x, %acc : f32
      linalg.yield %s : f32
    } -> tensor<256xf32>
    return %r : tensor<256xf32>
  }
}
