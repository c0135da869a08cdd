// RUN: ipu-opt %s --split-input-file -p 'builtin.module(ipu-schedule)' | FileCheck %s

// ipu-schedule on hand-written L2 reductions whose summed loop the partition cuts across
// tiles (tiny: 16 tiles): a first superstep computes partial results on the tiles of the cut,
// a second exchanges each output block's partials to one tile and combines them, in a codelet
// marked `ipu.combine` with its combiner and whether it starts from the op's init.

// The summed loop k cut over tiles 0..3: each tile computes a partial 4x4 product; a
// second superstep gathers the four partials of each result row onto the tile owning
// that row (`ipu.mapping`: one row per tile) and sums them.
module attributes {ipu.target = "tiny"} {
  func.func @matmul_k(%a: tensor<4x64xf32> {ipu.mapping = {kind = "block", block = array<i64: 4, 16>, tiles = array<i64: 0, 1, 0, 4, 1>}},
                      %b: tensor<64x4xf32> {ipu.mapping = {kind = "block", block = array<i64: 16, 4>, tiles = array<i64: 0, 4, 1, 1, 0>}}) -> tensor<4x4xf32> {
    %c = "ipu.matmul"(%a, %b) {ipu.partition = array<i64: 4, 4, 16>, ipu.tiles = array<i64: 0, 1, 0, 1, 0, 4, 1>,
                               ipu.mapping = {kind = "block", block = array<i64: 1, 4>, tiles = array<i64: 0, 4, 1, 1, 0>}}
        : (tensor<4x64xf32>, tensor<64x4xf32>) -> tensor<4x4xf32>
    return %c : tensor<4x4xf32>
  }
}

// CHECK-DAG: "ipu.buffer"() {sym_name = "arg0_0", tiles = array<i64: 0, 1, 0, 4, 1>, type = memref<64xf32>}
// CHECK-DAG: "ipu.buffer"() {sym_name = "arg1_0", tiles = array<i64: 0, 4, 1, 1, 0>, type = memref<64xf32>}
// CHECK-DAG: "ipu.buffer"() {sym_name = "matmul_partial0", tiles = array<i64: 0, 1, 0, 1, 0, 4, 1>, type = memref<16xf32>}
// CHECK-DAG: "ipu.buffer"() {sym_name = "matmul_partials0", tiles = array<i64: 0, 1, 0, 4, 1, 1, 0>, type = memref<16xf32>}
// CHECK-DAG: "ipu.buffer"() {sym_name = "matmul0", tiles = array<i64: 0, 4, 1, 1, 0>, type = memref<4xf32>}
// CHECK-LABEL: func.func @matmul_k(
// CHECK-NEXT: "ipu.host_to_device"(%arg0) {buffer = @arg0_0
// CHECK-NEXT: "ipu.host_to_device"(%arg1) {buffer = @arg1_0
// CHECK-NEXT: "ipu.sync"() {kind = "external"}
// CHECK-NEXT: "ipu.execute"() {compute_set = @matmul_cs0}
// CHECK-NEXT: "ipu.sync"() {kind = "internal"}
// CHECK-NEXT: "ipu.copy"() {dest = @matmul_partials0, dst_offset = array<i64: 0, 4, 0>, dst_tiles = array<i64: 0, 4, 0, 4, 1>, size = 4 : i64, source = @matmul_partial0, src_offset = array<i64: 0, 0, 4>, src_tiles = array<i64: 0, 4, 1, 4, 0>}
// CHECK-NEXT: "ipu.execute"() {compute_set = @matmul_combine_cs0}
// CHECK-NEXT: "ipu.sync"() {kind = "internal"}
// CHECK-NEXT: "ipu.sync"() {kind = "external"}
// CHECK-NEXT: %0 = "ipu.device_to_host"() {buffer = @matmul0
// CHECK-NEXT: return
// CHECK-LABEL: func.func private @matmul_v0(%arg0: tensor<4x16xf32>, %arg1: tensor<16x4xf32>) -> tensor<4x4xf32> attributes {ipu.codelet}
// CHECK-NEXT: "ipu.matmul"(%arg0, %arg1) : (tensor<4x16xf32>, tensor<16x4xf32>) -> tensor<4x4xf32>
// CHECK-LABEL: func.func private @matmul_cs0() attributes {ipu.compute_set}
// CHECK-NEXT: "ipu.vertex_group"() {codelet = @matmul_v0, inputs = [@arg0_0, @arg1_0], outputs = [@matmul_partial0], tiles = array<i64: 0, 1, 0, 1, 0, 4, 1>}
// CHECK-LABEL: func.func private @matmul_combine0(%arg0: tensor<4x1x4xf32>) -> tensor<1x4xf32> attributes {ipu.codelet, ipu.combine = {combiner = "arith.addf", epilogue = false, init = false}}
// CHECK-NEXT: arith.constant 0.000000e+00 : f32
// CHECK-LABEL: func.func private @matmul_combine_cs0() attributes {ipu.compute_set}
// CHECK-NEXT: "ipu.vertex_group"() {codelet = @matmul_combine0, inputs = [@matmul_partials0], outputs = [@matmul0], tiles = array<i64: 0, 4, 1, 1, 0>}

// -----

// A row sum whose summed loop is cut in four (tiles 0..3 for row 0, 4..7 for row 1): each
// part sums 64 elements from the identity; the combine step adds the partials and the
// generic's init (%init, which the body reads).
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
module attributes {ipu.target = "tiny"} {
  func.func @sum_rows(%x: tensor<2x256xf32> {ipu.mapping = {kind = "block", block = array<i64: 1, 64>, tiles = array<i64: 0, 2, 4, 4, 1>}},
                      %init: tensor<2xf32> {ipu.mapping = {kind = "block", block = array<i64: 1>, tiles = array<i64: 0, 2, 1>}}) -> tensor<2xf32> {
    %s = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<2x256xf32>) outs(%init : tensor<2xf32>)
        attrs = {ipu.partition = array<i64: 1, 64>, ipu.tiles = array<i64: 0, 2, 4, 4, 1>,
                 ipu.mapping = {kind = "block", block = array<i64: 1>, tiles = array<i64: 0, 2, 1>}} {
    ^bb0(%in: f32, %acc: f32):
      %t = arith.addf %in, %acc : f32
      linalg.yield %t : f32
    } -> tensor<2xf32>
    return %s : tensor<2xf32>
  }
}

// CHECK-DAG: "ipu.buffer"() {sym_name = "arg0_0", tiles = array<i64: 0, 2, 4, 4, 1>, type = memref<64xf32>}
// CHECK-DAG: "ipu.buffer"() {sym_name = "arg1_0", tiles = array<i64: 0, 2, 1>, type = memref<1xf32>}
// CHECK-DAG: "ipu.buffer"() {sym_name = "generic_partial0", tiles = array<i64: 0, 2, 4, 4, 1>, type = memref<1xf32>}
// CHECK-DAG: "ipu.buffer"() {sym_name = "generic_partials0", tiles = array<i64: 0, 1, 0, 2, 1>, type = memref<4xf32>}
// CHECK-DAG: "ipu.buffer"() {sym_name = "generic0", tiles = array<i64: 0, 2, 1>, type = memref<1xf32>}
// CHECK-LABEL: func.func @sum_rows(
// CHECK-NEXT: "ipu.host_to_device"(%arg0) {buffer = @arg0_0
// CHECK-NEXT: "ipu.host_to_device"(%arg1) {buffer = @arg1_0
// CHECK-NEXT: "ipu.sync"() {kind = "external"}
// CHECK-NEXT: "ipu.execute"() {compute_set = @generic_cs0}
// CHECK-NEXT: "ipu.sync"() {kind = "internal"}
// CHECK-NEXT: "ipu.copy"() {dest = @generic_partials0, dst_offset = array<i64: 0, 0, 1>, dst_tiles = array<i64: 0, 2, 1, 4, 0>, size = 1 : i64, source = @generic_partial0, src_offset = array<i64: 0, 0, 0>, src_tiles = array<i64: 0, 2, 4, 4, 1>}
// CHECK-NEXT: "ipu.execute"() {compute_set = @generic_combine_cs0}
// CHECK-NEXT: "ipu.sync"() {kind = "internal"}
// CHECK-NEXT: "ipu.sync"() {kind = "external"}
// CHECK-NEXT: %0 = "ipu.device_to_host"() {buffer = @generic0
// CHECK-NEXT: return
// CHECK-LABEL: func.func private @generic_v0(%arg0: tensor<1x64xf32>) -> tensor<1xf32> attributes {ipu.codelet}
// CHECK-NEXT: arith.constant 0.000000e+00 : f32
// CHECK-LABEL: func.func private @generic_cs0() attributes {ipu.compute_set}
// CHECK-NEXT: "ipu.vertex_group"() {codelet = @generic_v0, inputs = [@arg0_0], outputs = [@generic_partial0], tiles = array<i64: 0, 2, 4, 4, 1>}
// CHECK-LABEL: func.func private @generic_combine0(%arg0: tensor<4x1xf32>, %arg1: tensor<1xf32>) -> tensor<1xf32> attributes {ipu.codelet, ipu.combine = {combiner = "arith.addf", epilogue = false, init = true}}
// CHECK-NEXT: linalg.generic {indexing_maps = [{{.*}}], iterator_types = ["reduction", "parallel"]} ins(%arg0 : tensor<4x1xf32>) outs(%arg1 : tensor<1xf32>)
// CHECK: arith.addf
// CHECK-LABEL: func.func private @generic_combine_cs0() attributes {ipu.compute_set}
// CHECK-NEXT: "ipu.vertex_group"() {codelet = @generic_combine0, inputs = [@generic_partials0, @arg1_0], outputs = [@generic0], tiles = array<i64: 0, 2, 1>}

// -----

// A max over all 128 elements cut over tiles 0..3: the partials combine with maximumf, not
// a sum (a cut reduction's combiner follows the body).
#all = affine_map<(d0) -> (d0)>
#none = affine_map<(d0) -> ()>
module attributes {ipu.target = "tiny"} {
  func.func @max_all(%x: tensor<128xf32> {ipu.mapping = {kind = "block", block = array<i64: 32>, tiles = array<i64: 0, 4, 1>}},
                     %init: tensor<f32> {ipu.mapping = {kind = "linear", grain = 1 : i64, tiles = array<i64: 0, 1, 1>}}) -> tensor<f32> {
    %m = linalg.generic {indexing_maps = [#all, #none], iterator_types = ["reduction"]} ins(%x : tensor<128xf32>) outs(%init : tensor<f32>)
        attrs = {ipu.partition = array<i64: 32>, ipu.tiles = array<i64: 0, 4, 1>,
                 ipu.mapping = {kind = "linear", grain = 1 : i64, tiles = array<i64: 0, 1, 1>}} {
    ^bb0(%in: f32, %acc: f32):
      %t = arith.maximumf %in, %acc : f32
      linalg.yield %t : f32
    } -> tensor<f32>
    return %m : tensor<f32>
  }
}

// CHECK-DAG: "ipu.buffer"() {sym_name = "arg0_0", tiles = array<i64: 0, 4, 1>, type = memref<32xf32>}
// CHECK-DAG: "ipu.buffer"() {sym_name = "arg1_0", tiles = array<i64: 0, 1, 0>, type = memref<1xf32>}
// CHECK-DAG: "ipu.buffer"() {sym_name = "generic_partial0", tiles = array<i64: 0, 4, 1>, type = memref<1xf32>}
// CHECK-DAG: "ipu.buffer"() {sym_name = "generic_partials0", tiles = array<i64: 0, 1, 0>, type = memref<4xf32>}
// CHECK-DAG: "ipu.buffer"() {sym_name = "generic0", tiles = array<i64: 0, 1, 0>, type = memref<1xf32>}
// CHECK-LABEL: func.func @max_all(
// CHECK-NEXT: "ipu.host_to_device"(%arg0) {buffer = @arg0_0
// CHECK-NEXT: "ipu.host_to_device"(%arg1) {buffer = @arg1_0
// CHECK-NEXT: "ipu.sync"() {kind = "external"}
// CHECK-NEXT: "ipu.execute"() {compute_set = @generic_cs0}
// CHECK-NEXT: "ipu.sync"() {kind = "internal"}
// CHECK-NEXT: "ipu.copy"() {dest = @generic_partials0, dst_offset = array<i64: 0, 1>, dst_tiles = array<i64: 0, 4, 0>, size = 1 : i64, source = @generic_partial0, src_offset = array<i64: 0, 0>, src_tiles = array<i64: 0, 4, 1>}
// CHECK-NEXT: "ipu.execute"() {compute_set = @generic_combine_cs0}
// CHECK-NEXT: "ipu.sync"() {kind = "internal"}
// CHECK-NEXT: "ipu.sync"() {kind = "external"}
// CHECK-NEXT: %0 = "ipu.device_to_host"() {buffer = @generic0
// CHECK-NEXT: return
// CHECK-LABEL: func.func private @generic_v0(%arg0: tensor<32xf32>) -> tensor<f32> attributes {ipu.codelet}
// CHECK-NEXT: arith.constant 0xFF800000 : f32
// CHECK-LABEL: func.func private @generic_cs0() attributes {ipu.compute_set}
// CHECK-NEXT: "ipu.vertex_group"() {codelet = @generic_v0, inputs = [@arg0_0], outputs = [@generic_partial0], tiles = array<i64: 0, 4, 1>}
// CHECK-LABEL: func.func private @generic_combine0(%arg0: tensor<4xf32>, %arg1: tensor<f32>) -> tensor<f32> attributes {ipu.codelet, ipu.combine = {combiner = "arith.maximumf", epilogue = false, init = true}}
// CHECK-NEXT: linalg.generic {indexing_maps = [{{.*}}], iterator_types = ["reduction"]} ins(%arg0 : tensor<4xf32>) outs(%arg1 : tensor<f32>)
// CHECK: arith.maximumf
// CHECK-LABEL: func.func private @generic_combine_cs0() attributes {ipu.compute_set}
// CHECK-NEXT: "ipu.vertex_group"() {codelet = @generic_combine0, inputs = [@generic_partials0, @arg1_0], outputs = [@generic0], tiles = array<i64: 0, 1, 0>}
