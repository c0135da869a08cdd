// RUN: ipu-opt %s --split-input-file -p 'builtin.module(ipu-schedule)' | FileCheck %s

// ipu-schedule on hand-written L2 convolutions (tiny: 16 tiles). The partition has one block
// size per loop: n, f, oh, ow (parallel), c, kh, kw (summed).

// Output channels cut in two (tiles 0 and 1): both parts read the whole input, which is
// broadcast from tile 0; each reads its half of the filters.
module attributes {ipu.target = "tiny"} {
  func.func @channels(%x: tensor<1x2x6x6xf32> {ipu.mapping = {kind = "block", block = array<i64: 1, 2, 6, 6>, tiles = array<i64: 0, 1, 0, 1, 0, 1, 0, 1, 0>}},
                      %w: tensor<4x2x3x3xf32> {ipu.mapping = {kind = "block", block = array<i64: 2, 2, 3, 3>, tiles = array<i64: 0, 2, 1, 1, 0, 1, 0, 1, 0>}}) -> tensor<1x4x4x4xf32> {
    %y = "ipu.conv"(%x, %w) {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, groups = 1 : i64,
                             ipu.partition = array<i64: 1, 2, 4, 4, 2, 3, 3>, ipu.tiles = array<i64: 0, 1, 0, 2, 1, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0>,
                             ipu.mapping = {kind = "block", block = array<i64: 1, 2, 4, 4>, tiles = array<i64: 0, 1, 0, 2, 1, 1, 0, 1, 0>}}
        : (tensor<1x2x6x6xf32>, tensor<4x2x3x3xf32>) -> tensor<1x4x4x4xf32>
    return %y : tensor<1x4x4x4xf32>
  }
}

// CHECK-DAG: "ipu.buffer"() {sym_name = "arg0_0", tiles = array<i64: 0, 1, 0, 1, 0, 1, 0, 1, 0>, type = memref<72xf32>}
// CHECK-DAG: "ipu.buffer"() {sym_name = "arg1_0", tiles = array<i64: 0, 2, 1, 1, 0, 1, 0, 1, 0>, type = memref<36xf32>}
// CHECK-DAG: "ipu.buffer"() {sym_name = "conv_in0", tiles = array<i64: 0, 1, 0, 1, 0, 1, 0, 1, 0, 2, 1>, type = memref<72xf32>}
// CHECK-DAG: "ipu.buffer"() {sym_name = "conv0", tiles = array<i64: 0, 1, 0, 2, 1, 1, 0, 1, 0>, type = memref<32xf32>}
// CHECK-LABEL: func.func @channels(
// CHECK-NEXT: "ipu.host_to_device"(%arg0) {buffer = @arg0_0
// CHECK-NEXT: "ipu.host_to_device"(%arg1) {buffer = @arg1_0
// CHECK-NEXT: "ipu.sync"() {kind = "external"}
// CHECK-NEXT: "ipu.copy"() {dest = @conv_in0, dst_offset = array<i64: 0, 0>, dst_tiles = array<i64: 0, 2, 1>, size = 72 : i64, source = @arg0_0, src_offset = array<i64: 0, 0>, src_tiles = array<i64: 0, 2, 0>}
// CHECK-NEXT: "ipu.execute"() {compute_set = @conv_cs0}
// CHECK-NEXT: "ipu.sync"() {kind = "internal"}
// CHECK-NEXT: "ipu.sync"() {kind = "external"}
// CHECK-NEXT: %0 = "ipu.device_to_host"() {buffer = @conv0
// CHECK-NEXT: return
// CHECK-LABEL: func.func private @conv_v0(%arg0: tensor<1x2x6x6xf32>, %arg1: tensor<2x2x3x3xf32>) -> tensor<1x2x4x4xf32> attributes {ipu.codelet}
// CHECK-NEXT: "ipu.conv"(%arg0, %arg1) {dilations = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x2x6x6xf32>, tensor<2x2x3x3xf32>) -> tensor<1x2x4x4xf32>
// CHECK-LABEL: func.func private @conv_cs0() attributes {ipu.compute_set}
// CHECK-NEXT: "ipu.vertex_group"() {codelet = @conv_v0, inputs = [@conv_in0, @arg1_0], outputs = [@conv0], tiles = array<i64: 0, 1, 0, 2, 1, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0>}

// -----

// Output rows cut in two with zero padding 1: each part reads its rows plus a halo; the top
// part's piece is padded above, the bottom one's below, so the two tiles get codelets of
// their own (two vertex groups).
module attributes {ipu.target = "tiny"} {
  func.func @halo(%x: tensor<1x1x4x4xf32> {ipu.mapping = {kind = "block", block = array<i64: 1, 1, 4, 4>, tiles = array<i64: 4, 1, 0, 1, 0, 1, 0, 1, 0>}},
                  %w: tensor<1x1x3x3xf32> {ipu.mapping = {kind = "block", block = array<i64: 1, 1, 3, 3>, tiles = array<i64: 4, 1, 0, 1, 0, 1, 0, 1, 0>}}) -> tensor<1x1x4x4xf32> {
    %y = "ipu.conv"(%x, %w) {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, groups = 1 : i64,
                             ipu.partition = array<i64: 1, 1, 2, 4, 1, 3, 3>, ipu.tiles = array<i64: 0, 1, 0, 1, 0, 2, 1, 1, 0, 1, 0, 1, 0, 1, 0>,
                             ipu.mapping = {kind = "block", block = array<i64: 1, 1, 2, 4>, tiles = array<i64: 0, 1, 0, 1, 0, 2, 1, 1, 0>}}
        : (tensor<1x1x4x4xf32>, tensor<1x1x3x3xf32>) -> tensor<1x1x4x4xf32>
    return %y : tensor<1x1x4x4xf32>
  }
}

// CHECK-DAG: "ipu.buffer"() {sym_name = "arg0_0", tiles = array<i64: 4, 1, 0, 1, 0, 1, 0, 1, 0>, type = memref<16xf32>}
// CHECK-DAG: "ipu.buffer"() {sym_name = "arg1_0", tiles = array<i64: 4, 1, 0, 1, 0, 1, 0, 1, 0>, type = memref<9xf32>}
// CHECK-DAG: "ipu.buffer"() {sym_name = "conv_in0", tiles = array<i64: 0, 1, 0, 1, 0, 2, 1, 1, 0>, type = memref<12xf32>}
// CHECK-DAG: "ipu.buffer"() {sym_name = "conv_in1", tiles = array<i64: 0, 1, 0, 1, 0, 1, 0, 1, 0, 2, 1>, type = memref<9xf32>}
// CHECK-DAG: "ipu.buffer"() {sym_name = "conv0", tiles = array<i64: 0, 1, 0, 1, 0, 2, 1, 1, 0>, type = memref<8xf32>}
// CHECK-LABEL: func.func @halo(
// CHECK-NEXT: "ipu.host_to_device"(%arg0) {buffer = @arg0_0
// CHECK-NEXT: "ipu.host_to_device"(%arg1) {buffer = @arg1_0
// CHECK-NEXT: "ipu.sync"() {kind = "external"}
// CHECK-NEXT: "ipu.copy"() {dest = @conv_in0, dst_offset = array<i64: 0, 0>, dst_tiles = array<i64: 0, 2, 1>, size = 12 : i64, source = @arg0_0, src_offset = array<i64: 0, 4>, src_tiles = array<i64: 4, 2, 0>}
// CHECK-NEXT: "ipu.copy"() {dest = @conv_in1, dst_offset = array<i64: 0, 0>, dst_tiles = array<i64: 0, 2, 1>, size = 9 : i64, source = @arg1_0, src_offset = array<i64: 0, 0>, src_tiles = array<i64: 4, 2, 0>}
// CHECK-NEXT: "ipu.execute"() {compute_set = @conv_cs0}
// CHECK-NEXT: "ipu.sync"() {kind = "internal"}
// CHECK-NEXT: "ipu.sync"() {kind = "external"}
// CHECK-NEXT: %0 = "ipu.device_to_host"() {buffer = @conv0
// CHECK-NEXT: return
// CHECK-LABEL: func.func private @conv_v0(%arg0: tensor<1x1x3x4xf32>, %arg1: tensor<1x1x3x3xf32>) -> tensor<1x1x2x4xf32> attributes {ipu.codelet}
// CHECK-NEXT: "ipu.conv"(%arg0, %arg1) {dilations = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 1, 1, 0, 1>, strides = array<i64: 1, 1>} : (tensor<1x1x3x4xf32>, tensor<1x1x3x3xf32>) -> tensor<1x1x2x4xf32>
// CHECK-LABEL: func.func private @conv_v1(%arg0: tensor<1x1x3x4xf32>, %arg1: tensor<1x1x3x3xf32>) -> tensor<1x1x2x4xf32> attributes {ipu.codelet}
// CHECK-NEXT: "ipu.conv"(%arg0, %arg1) {dilations = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 0, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x1x3x4xf32>, tensor<1x1x3x3xf32>) -> tensor<1x1x2x4xf32>
// CHECK-LABEL: func.func private @conv_cs0() attributes {ipu.compute_set}
// CHECK-NEXT: "ipu.vertex_group"() {codelet = @conv_v0, inputs = [@conv_in0, @conv_in1], outputs = [@conv0], tiles = array<i64: 0, 1, 0, 1, 0, 1, 1, 1, 0, 1, 0, 1, 0, 1, 0>}
// CHECK-NEXT: "ipu.vertex_group"() {codelet = @conv_v1, inputs = [@conv_in0, @conv_in1], outputs = [@conv0], tiles = array<i64: 1, 1, 0, 1, 0, 1, 1, 1, 0, 1, 0, 1, 0, 1, 0>}
