// RUN: ipu-opt %s --split-input-file -p 'builtin.module(ipu-schedule)' | FileCheck %s

// ipu-schedule on hand-written L2 reshapes (tiny: 16 tiles): a reshape whose result blocks
// are whole rows of its source's blocks reuses the source's buffers; otherwise the source is
// first copied into the layout that makes it so.

// collapse_shape whose result blocks are whole rows of the source's blocks: a view, the
// result is stored in the source's buffers (no copy, no sync).
module attributes {ipu.target = "tiny"} {
  func.func @collapse_view(%x: tensor<8x4xf32> {ipu.mapping = {kind = "block", block = array<i64: 2, 4>, tiles = array<i64: 0, 4, 1, 1, 0>}}) -> tensor<32xf32> {
    %c = tensor.collapse_shape %x [[0, 1]] {ipu.mapping = {kind = "block", block = array<i64: 8>, tiles = array<i64: 0, 4, 1>}}
        : tensor<8x4xf32> into tensor<32xf32>
    return %c : tensor<32xf32>
  }
}

// CHECK-DAG: "ipu.buffer"() {sym_name = "arg0_0", tiles = array<i64: 0, 4, 1, 1, 0>, type = memref<8xf32>}
// CHECK-LABEL: func.func @collapse_view(
// CHECK-NEXT: "ipu.host_to_device"(%arg0) {buffer = @arg0_0
// CHECK-NEXT: "ipu.sync"() {kind = "external"}
// CHECK-NEXT: "ipu.sync"() {kind = "external"}
// CHECK-NEXT: %0 = "ipu.device_to_host"() {buffer = @arg0_0
// CHECK-NEXT: return

// -----

// collapse_shape to a result mapped elsewhere (tile 5, whole): the source is copied into the
// layout the result's buffer needs, then a sync.
module attributes {ipu.target = "tiny"} {
  func.func @collapse_moved(%x: tensor<8x4xf32> {ipu.mapping = {kind = "block", block = array<i64: 2, 4>, tiles = array<i64: 0, 4, 1, 1, 0>}}) -> tensor<32xf32> {
    %c = tensor.collapse_shape %x [[0, 1]] {ipu.mapping = {kind = "block", block = array<i64: 32>, tiles = array<i64: 5, 1, 0>}}
        : tensor<8x4xf32> into tensor<32xf32>
    return %c : tensor<32xf32>
  }
}

// CHECK-DAG: "ipu.buffer"() {sym_name = "arg0_0", tiles = array<i64: 0, 4, 1, 1, 0>, type = memref<8xf32>}
// CHECK-DAG: "ipu.buffer"() {sym_name = "reshape0", tiles = array<i64: 5, 1, 0, 1, 0>, type = memref<32xf32>}
// CHECK-LABEL: func.func @collapse_moved(
// CHECK-NEXT: "ipu.host_to_device"(%arg0) {buffer = @arg0_0
// CHECK-NEXT: "ipu.sync"() {kind = "external"}
// CHECK-NEXT: "ipu.copy"() {dest = @reshape0, dst_offset = array<i64: 0, 8>, dst_tiles = array<i64: 5, 4, 0>, size = 8 : i64, source = @arg0_0, src_offset = array<i64: 0, 0>, src_tiles = array<i64: 0, 4, 1>}
// CHECK-NEXT: "ipu.sync"() {kind = "internal"}
// CHECK-NEXT: "ipu.sync"() {kind = "external"}
// CHECK-NEXT: %0 = "ipu.device_to_host"() {buffer = @reshape0
// CHECK-NEXT: return

// -----

// expand_shape: the result's cut of dim 0 (one 4x4 matrix per tile) falls on the source's
// blocks of 4 rows: a view again.
module attributes {ipu.target = "tiny"} {
  func.func @expand_view(%x: tensor<8x4xf32> {ipu.mapping = {kind = "block", block = array<i64: 4, 4>, tiles = array<i64: 2, 2, 1, 1, 0>}}) -> tensor<2x4x4xf32> {
    %e = tensor.expand_shape %x [[0, 1], [2]] output_shape [2, 4, 4] {ipu.mapping = {kind = "block", block = array<i64: 1, 4, 4>, tiles = array<i64: 2, 2, 1, 1, 0, 1, 0>}}
        : tensor<8x4xf32> into tensor<2x4x4xf32>
    return %e : tensor<2x4x4xf32>
  }
}

// CHECK-DAG: "ipu.buffer"() {sym_name = "arg0_0", tiles = array<i64: 2, 2, 1, 1, 0>, type = memref<16xf32>}
// CHECK-LABEL: func.func @expand_view(
// CHECK-NEXT: "ipu.host_to_device"(%arg0) {buffer = @arg0_0
// CHECK-NEXT: "ipu.sync"() {kind = "external"}
// CHECK-NEXT: "ipu.sync"() {kind = "external"}
// CHECK-NEXT: %0 = "ipu.device_to_host"() {buffer = @arg0_0
// CHECK-NEXT: return
