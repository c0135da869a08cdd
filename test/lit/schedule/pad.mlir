// RUN: ipu-opt %s --split-input-file -p 'builtin.module(ipu-schedule)' | FileCheck %s

// ipu-schedule on hand-written L2 tensor.pad (tiny: 16 tiles).

// A 4x4 tensor on tile 0 padded by one on every side into a 6x6 result cut in two row
// blocks (tiles 1, 2): a compute set fills both blocks with the padding value, then one
// exchange phase writes the source's rows into the interior.
module attributes {ipu.target = "tiny"} {
  func.func @pad(%x: tensor<4x4xf32> {ipu.mapping = {kind = "block", block = array<i64: 4, 4>, tiles = array<i64: 0, 1, 0, 1, 0>}}) -> tensor<6x6xf32> {
    %c = arith.constant 0.5 : f32
    %p = tensor.pad %x low[1, 1] high[1, 1] {
    ^bb0(%i: index, %j: index):
      tensor.yield %c : f32
    } {ipu.mapping = {kind = "block", block = array<i64: 3, 6>, tiles = array<i64: 1, 2, 1, 1, 0>}} : tensor<4x4xf32> to tensor<6x6xf32>
    return %p : tensor<6x6xf32>
  }
}

// CHECK-DAG: "ipu.buffer"() {sym_name = "arg0_0", tiles = array<i64: 0, 1, 0, 1, 0>, type = memref<16xf32>}
// CHECK-DAG: "ipu.buffer"() {sym_name = "pad0", tiles = array<i64: 1, 2, 1, 1, 0>, type = memref<18xf32>}
// CHECK-LABEL: func.func @pad(
// CHECK-NEXT: "ipu.host_to_device"(%arg0) {buffer = @arg0_0
// CHECK-NEXT: "ipu.sync"() {kind = "external"}
// CHECK-NEXT: "ipu.execute"() {compute_set = @pad_cs0}
// CHECK-NEXT: "ipu.sync"() {kind = "internal"}
// CHECK-NEXT: "ipu.copy"() {dest = @pad0, dst_offset = array<i64: 1, 6, 6>, dst_tiles = array<i64: 2, 2, -1, 2, 0>, size = 4 : i64, source = @arg0_0, src_offset = array<i64: 8, -8, 4>, src_tiles = array<i64: 0, 2, 0, 2, 0>}
// CHECK-NEXT: "ipu.sync"() {kind = "internal"}
// CHECK-NEXT: "ipu.sync"() {kind = "external"}
// CHECK-NEXT: %0 = "ipu.device_to_host"() {buffer = @pad0
// CHECK-NEXT: return
// CHECK-LABEL: func.func private @pad_fill0() -> tensor<3x6xf32> attributes {ipu.codelet}
// CHECK-NEXT: arith.constant dense<5.000000e-01> : tensor<3x6xf32>
// CHECK-LABEL: func.func private @pad_cs0() attributes {ipu.compute_set}
// CHECK-NEXT: "ipu.vertex_group"() {codelet = @pad_fill0, inputs = [], outputs = [@pad0], tiles = array<i64: 1, 2, 1, 1, 0>}

// -----

// Padding only after the last row, into blocks of 2 rows of which the last is short: two
// fill codelets (2x3 and 1x3), one per class of alike tiles.
module attributes {ipu.target = "tiny"} {
  func.func @pad_high(%x: tensor<4x3xi32> {ipu.mapping = {kind = "block", block = array<i64: 2, 3>, tiles = array<i64: 0, 2, 1, 1, 0>}}) -> tensor<5x3xi32> {
    %c = arith.constant -1 : i32
    %p = tensor.pad %x low[0, 0] high[1, 0] {
    ^bb0(%i: index, %j: index):
      tensor.yield %c : i32
    } {ipu.mapping = {kind = "block", block = array<i64: 2, 3>, tiles = array<i64: 0, 3, 1, 1, 0>}} : tensor<4x3xi32> to tensor<5x3xi32>
    return %p : tensor<5x3xi32>
  }
}

// CHECK-DAG: "ipu.buffer"() {sym_name = "arg0_0", tiles = array<i64: 0, 2, 1, 1, 0>, type = memref<6xi32>}
// CHECK-DAG: "ipu.buffer"() {sym_name = "pad0", tiles = array<i64: 0, 3, 1, 1, 0>, type = memref<6xi32>}
// CHECK-LABEL: func.func @pad_high(
// CHECK-NEXT: "ipu.host_to_device"(%arg0) {buffer = @arg0_0
// CHECK-NEXT: "ipu.sync"() {kind = "external"}
// CHECK-NEXT: "ipu.execute"() {compute_set = @pad_cs0}
// CHECK-NEXT: "ipu.sync"() {kind = "internal"}
// CHECK-NEXT: "ipu.copy"() {dest = @pad0, dst_offset = array<i64: 0, 0>, dst_tiles = array<i64: 0, 2, 1>, size = 6 : i64, source = @arg0_0, src_offset = array<i64: 0, 0>, src_tiles = array<i64: 0, 2, 1>}
// CHECK-NEXT: "ipu.sync"() {kind = "internal"}
// CHECK-NEXT: "ipu.sync"() {kind = "external"}
// CHECK-NEXT: %0 = "ipu.device_to_host"() {buffer = @pad0
// CHECK-NEXT: return
// CHECK-LABEL: func.func private @pad_fill0() -> tensor<2x3xi32> attributes {ipu.codelet}
// CHECK-NEXT: arith.constant dense<-1> : tensor<2x3xi32>
// CHECK-LABEL: func.func private @pad_fill1() -> tensor<1x3xi32> attributes {ipu.codelet}
// CHECK-NEXT: arith.constant dense<-1> : tensor<1x3xi32>
// CHECK-LABEL: func.func private @pad_cs0() attributes {ipu.compute_set}
// CHECK-NEXT: "ipu.vertex_group"() {codelet = @pad_fill0, inputs = [], outputs = [@pad0], tiles = array<i64: 0, 2, 1, 1, 0>}
// CHECK-NEXT: "ipu.vertex_group"() {codelet = @pad_fill1, inputs = [], outputs = [@pad0], tiles = array<i64: 2, 1, 1, 1, 0>}
