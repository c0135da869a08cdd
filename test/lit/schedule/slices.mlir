// RUN: ipu-opt %s --split-input-file -p 'builtin.module(ipu-schedule)' | FileCheck %s

// ipu-schedule on hand-written L2 slices (tiny: 16 tiles): data movement only, each op one
// exchange phase of copies from the source's blocks to the result's, then a sync.

// extract_slice: rows 4..7 of a 16x8 tensor held in two 8-row blocks (tiles 0, 1) land on
// tile 2: one copy from tile 0, at the slice's offset in its block.
module attributes {ipu.target = "tiny"} {
  func.func @extract(%x: tensor<16x8xf32> {ipu.mapping = {kind = "block", block = array<i64: 8, 8>, tiles = array<i64: 0, 2, 1, 1, 0>}}) -> tensor<4x8xf32> {
    %s = tensor.extract_slice %x[4, 0] [4, 8] [1, 1] {ipu.mapping = {kind = "block", block = array<i64: 4, 8>, tiles = array<i64: 2, 1, 0, 1, 0>}}
        : tensor<16x8xf32> to tensor<4x8xf32>
    return %s : tensor<4x8xf32>
  }
}

// CHECK-DAG: "ipu.buffer"() {sym_name = "arg0_0", tiles = array<i64: 0, 2, 1, 1, 0>, type = memref<64xf32>}
// CHECK-DAG: "ipu.buffer"() {sym_name = "extract_slice0", tiles = array<i64: 2, 1, 0, 1, 0>, type = memref<32xf32>}
// CHECK-LABEL: func.func @extract(
// CHECK-NEXT: "ipu.host_to_device"(%arg0) {buffer = @arg0_0
// CHECK-NEXT: "ipu.sync"() {kind = "external"}
// CHECK-NEXT: "ipu.copy"() {dest = @extract_slice0, dst_offset = array<i64: 0, 0>, dst_tiles = array<i64: 2, 1, 0>, size = 32 : i64, source = @arg0_0, src_offset = array<i64: 32, 0>, src_tiles = array<i64: 0, 1, 0>}
// CHECK-NEXT: "ipu.sync"() {kind = "internal"}
// CHECK-NEXT: "ipu.sync"() {kind = "external"}
// CHECK-NEXT: %0 = "ipu.device_to_host"() {buffer = @extract_slice0
// CHECK-NEXT: return

// -----

// insert_slice: the result (tiles 4, 5) takes the destination outside the slice, then the
// source (on tile 3) inside it; a sync before anything reads it.
module attributes {ipu.target = "tiny"} {
  func.func @insert(%x: tensor<16x8xf32> {ipu.mapping = {kind = "block", block = array<i64: 8, 8>, tiles = array<i64: 0, 2, 1, 1, 0>}},
                    %y: tensor<4x8xf32> {ipu.mapping = {kind = "block", block = array<i64: 4, 8>, tiles = array<i64: 3, 1, 0, 1, 0>}}) -> tensor<16x8xf32> {
    %i = tensor.insert_slice %y into %x[8, 0] [4, 8] [1, 1] {ipu.mapping = {kind = "block", block = array<i64: 8, 8>, tiles = array<i64: 4, 2, 1, 1, 0>}}
        : tensor<4x8xf32> into tensor<16x8xf32>
    return %i : tensor<16x8xf32>
  }
}

// CHECK-DAG: "ipu.buffer"() {sym_name = "arg0_0", tiles = array<i64: 0, 2, 1, 1, 0>, type = memref<64xf32>}
// CHECK-DAG: "ipu.buffer"() {sym_name = "arg1_0", tiles = array<i64: 3, 1, 0, 1, 0>, type = memref<32xf32>}
// CHECK-DAG: "ipu.buffer"() {sym_name = "insert_slice0", tiles = array<i64: 4, 2, 1, 1, 0>, type = memref<64xf32>}
// CHECK-LABEL: func.func @insert(
// CHECK-NEXT: "ipu.host_to_device"(%arg0) {buffer = @arg0_0
// CHECK-NEXT: "ipu.host_to_device"(%arg1) {buffer = @arg1_0
// CHECK-NEXT: "ipu.sync"() {kind = "external"}
// CHECK-NEXT: "ipu.copy"() {dest = @insert_slice0, dst_offset = array<i64: 0, 0>, dst_tiles = array<i64: 4, 1, 0>, size = 64 : i64, source = @arg0_0, src_offset = array<i64: 0, 0>, src_tiles = array<i64: 0, 1, 0>}
// CHECK-NEXT: "ipu.copy"() {dest = @insert_slice0, dst_offset = array<i64: 32, 0>, dst_tiles = array<i64: 5, 1, 0>, size = 32 : i64, source = @arg0_0, src_offset = array<i64: 32, 0>, src_tiles = array<i64: 1, 1, 0>}
// CHECK-NEXT: "ipu.copy"() {dest = @insert_slice0, dst_offset = array<i64: 0, 0>, dst_tiles = array<i64: 5, 1, 0>, size = 32 : i64, source = @arg1_0, src_offset = array<i64: 0, 0>, src_tiles = array<i64: 3, 1, 0>}
// CHECK-NEXT: "ipu.sync"() {kind = "internal"}
// CHECK-NEXT: "ipu.sync"() {kind = "external"}
// CHECK-NEXT: %0 = "ipu.device_to_host"() {buffer = @insert_slice0
// CHECK-NEXT: return

// -----

// concat along dim 1: each source's columns land at their offset in the result's rows.
module attributes {ipu.target = "tiny"} {
  func.func @concat(%a: tensor<4x2xf32> {ipu.mapping = {kind = "block", block = array<i64: 4, 2>, tiles = array<i64: 0, 1, 0, 1, 0>}},
                    %b: tensor<4x6xf32> {ipu.mapping = {kind = "block", block = array<i64: 4, 6>, tiles = array<i64: 1, 1, 0, 1, 0>}}) -> tensor<4x8xf32> {
    %c = tensor.concat dim(1) %a, %b {ipu.mapping = {kind = "block", block = array<i64: 2, 8>, tiles = array<i64: 2, 2, 1, 1, 0>}}
        : (tensor<4x2xf32>, tensor<4x6xf32>) -> tensor<4x8xf32>
    return %c : tensor<4x8xf32>
  }
}

// CHECK-DAG: "ipu.buffer"() {sym_name = "arg0_0", tiles = array<i64: 0, 1, 0, 1, 0>, type = memref<8xf32>}
// CHECK-DAG: "ipu.buffer"() {sym_name = "arg1_0", tiles = array<i64: 1, 1, 0, 1, 0>, type = memref<24xf32>}
// CHECK-DAG: "ipu.buffer"() {sym_name = "concat0", tiles = array<i64: 2, 2, 1, 1, 0>, type = memref<16xf32>}
// CHECK-LABEL: func.func @concat(
// CHECK-NEXT: "ipu.host_to_device"(%arg0) {buffer = @arg0_0
// CHECK-NEXT: "ipu.host_to_device"(%arg1) {buffer = @arg1_0
// CHECK-NEXT: "ipu.sync"() {kind = "external"}
// CHECK-NEXT: "ipu.copy"() {dest = @concat0, dst_offset = array<i64: 0, 0, 8>, dst_tiles = array<i64: 2, 2, 1, 2, 0>, size = 2 : i64, source = @arg0_0, src_offset = array<i64: 0, 4, 2>, src_tiles = array<i64: 0, 2, 0, 2, 0>}
// CHECK-NEXT: "ipu.copy"() {dest = @concat0, dst_offset = array<i64: 2, 0, 8>, dst_tiles = array<i64: 2, 2, 1, 2, 0>, size = 6 : i64, source = @arg1_0, src_offset = array<i64: 0, 12, 6>, src_tiles = array<i64: 1, 2, 0, 2, 0>}
// CHECK-NEXT: "ipu.sync"() {kind = "internal"}
// CHECK-NEXT: "ipu.sync"() {kind = "external"}
// CHECK-NEXT: %0 = "ipu.device_to_host"() {buffer = @concat0
// CHECK-NEXT: return
