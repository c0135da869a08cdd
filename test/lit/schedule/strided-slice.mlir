// RUN: ipu-opt %s --split-input-file -p 'builtin.module(ipu-schedule)' | FileCheck %s

// ipu-schedule on hand-written L2 slices with non-unit strides (tiny): one exchange each,
// the strides becoming offset steps of the copies' grids.

// Strided extract_slice x[1::3, ::2] of a 16x8 tensor in two 8-row blocks (tiles 0, 1):
// element by element (size 1), the grid stepping 3 rows (24) and 2 columns in the source:
// rows 1, 4, 7 from tile 0, row 10 from tile 1.
// CHECK-LABEL: func.func @extract(
// CHECK: "ipu.sync"() {kind = "external"}
// CHECK-NEXT: "ipu.copy"() {dest = @extract_slice0, dst_offset = array<i64: 0, 4, 1>, dst_tiles = array<i64: 2, 3, 0, 4, 0>, size = 1 : i64, source = @arg0_0, src_offset = array<i64: 8, 24, 2>, src_tiles = array<i64: 0, 3, 0, 4, 0>}
// CHECK-NEXT: "ipu.copy"() {dest = @extract_slice0, dst_offset = array<i64: 12, 1>, dst_tiles = array<i64: 2, 4, 0>, size = 1 : i64, source = @arg0_0, src_offset = array<i64: 16, 2>, src_tiles = array<i64: 1, 4, 0>}
// CHECK-NEXT: "ipu.sync"() {kind = "internal"}

module attributes {ipu.target = "tiny"} {
  func.func @extract(%x: tensor<16x8xf32> {ipu.mapping = {kind = "block", block = array<i64: 8, 8>, tiles = array<i64: 0, 2, 1, 1, 0>}}) -> tensor<4x4xf32> {
    %s = tensor.extract_slice %x[1, 0] [4, 4] [3, 2] {ipu.mapping = {kind = "block", block = array<i64: 4, 4>, tiles = array<i64: 2, 1, 0, 1, 0>}}
        : tensor<16x8xf32> to tensor<4x4xf32>
    return %s : tensor<4x4xf32>
  }
}

// -----

// Strided insert_slice into rows 0, 2, 4, 6 and columns 1, 3, 5, 7: first the destination
// operand's other elements (row 7; rows 1, 3, 5 as one strided box; then in the slice's rows
// column 0 and columns 2, 4, 6), then the source, stepping 2 rows (16) and 2 columns.
// CHECK-LABEL: func.func @insert(
// CHECK: "ipu.sync"() {kind = "external"}
// CHECK-NEXT: "ipu.copy"() {dest = @insert_slice0, dst_offset = array<i64: 56, 0>, dst_tiles = array<i64: 2, 1, 0>, size = 8 : i64, source = @arg0_0, src_offset = array<i64: 56, 0>, src_tiles = array<i64: 0, 1, 0>}
// CHECK-NEXT: "ipu.copy"() {dest = @insert_slice0, dst_offset = array<i64: 8, 16>, dst_tiles = array<i64: 2, 3, 0>, size = 8 : i64, source = @arg0_0, src_offset = array<i64: 8, 16>, src_tiles = array<i64: 0, 3, 0>}
// CHECK-NEXT: "ipu.copy"() {dest = @insert_slice0, dst_offset = array<i64: 0, 16>, dst_tiles = array<i64: 2, 4, 0>, size = 1 : i64, source = @arg0_0, src_offset = array<i64: 0, 16>, src_tiles = array<i64: 0, 4, 0>}
// CHECK-NEXT: "ipu.copy"() {dest = @insert_slice0, dst_offset = array<i64: 2, 16, 2>, dst_tiles = array<i64: 2, 4, 0, 3, 0>, size = 1 : i64, source = @arg0_0, src_offset = array<i64: 2, 16, 2>, src_tiles = array<i64: 0, 4, 0, 3, 0>}
// CHECK-NEXT: "ipu.copy"() {dest = @insert_slice0, dst_offset = array<i64: 1, 16, 2>, dst_tiles = array<i64: 2, 4, 0, 4, 0>, size = 1 : i64, source = @arg1_0, src_offset = array<i64: 0, 4, 1>, src_tiles = array<i64: 1, 4, 0, 4, 0>}
// CHECK-NEXT: "ipu.sync"() {kind = "internal"}

module attributes {ipu.target = "tiny"} {
  func.func @insert(%x: tensor<8x8xf32> {ipu.mapping = {kind = "block", block = array<i64: 8, 8>, tiles = array<i64: 0, 1, 0, 1, 0>}},
                    %y: tensor<4x4xf32> {ipu.mapping = {kind = "block", block = array<i64: 4, 4>, tiles = array<i64: 1, 1, 0, 1, 0>}}) -> tensor<8x8xf32> {
    %i = tensor.insert_slice %y into %x[0, 1] [4, 4] [2, 2] {ipu.mapping = {kind = "block", block = array<i64: 8, 8>, tiles = array<i64: 2, 1, 0, 1, 0>}}
        : tensor<4x4xf32> into tensor<8x8xf32>
    return %i : tensor<8x8xf32>
  }
}

// -----

// A rank-reducing strided slice (row 2, columns 1, 3, 5, 7) is scheduled at full rank: the
// dropped row is one part; row 2 lives on tile 1 at local row 0.
// CHECK-LABEL: func.func @rank_reducing(
// CHECK: "ipu.sync"() {kind = "external"}
// CHECK-NEXT: "ipu.copy"() {dest = @extract_slice0, dst_offset = array<i64: 0, 1>, dst_tiles = array<i64: 3, 4, 0>, size = 1 : i64, source = @arg0_0, src_offset = array<i64: 1, 2>, src_tiles = array<i64: 1, 4, 0>}
// CHECK-NEXT: "ipu.sync"() {kind = "internal"}

module attributes {ipu.target = "tiny"} {
  func.func @rank_reducing(%x: tensor<4x8xf32> {ipu.mapping = {kind = "block", block = array<i64: 2, 8>, tiles = array<i64: 0, 2, 1, 1, 0>}}) -> tensor<4xf32> {
    %s = tensor.extract_slice %x[2, 1] [1, 4] [1, 2] {ipu.mapping = {kind = "block", block = array<i64: 4>, tiles = array<i64: 3, 1, 0>}}
        : tensor<4x8xf32> to tensor<4xf32>
    return %s : tensor<4xf32>
  }
}
