// RUN: ipu-opt %s --split-input-file -p 'builtin.module(ipu-schedule)' | FileCheck %s

// ipu-schedule on hand-written L2 matmuls (tiny: 16 tiles). Each part of the partition
// (`ipu.partition`: block size per loop m, n, k; `ipu.tiles`: one grid dimension per loop)
// becomes one vertex of a vertex group; the exchange brings each tile the operand pieces its
// part reads, with one copy pattern per operand (a broadcast where parts share a piece).

// Rows cut over tiles 0 and 1: lhs is already where the parts read it; the whole rhs,
// on tile 0, is broadcast to both tiles by one copy.
module attributes {ipu.target = "tiny"} {
  func.func @rows(%a: tensor<8x4xf32> {ipu.mapping = {kind = "block", block = array<i64: 4, 4>, tiles = array<i64: 0, 2, 1, 1, 0>}},
                  %b: tensor<4x6xf32> {ipu.mapping = {kind = "block", block = array<i64: 4, 6>, tiles = array<i64: 0, 1, 0, 1, 0>}}) -> tensor<8x6xf32> {
    %c = "ipu.matmul"(%a, %b) {ipu.partition = array<i64: 4, 6, 4>, ipu.tiles = array<i64: 0, 2, 1, 1, 0, 1, 0>,
                               ipu.mapping = {kind = "block", block = array<i64: 4, 6>, tiles = array<i64: 0, 2, 1, 1, 0>}}
        : (tensor<8x4xf32>, tensor<4x6xf32>) -> tensor<8x6xf32>
    return %c : tensor<8x6xf32>
  }
}

// CHECK-DAG: "ipu.buffer"() {sym_name = "arg0_0", tiles = array<i64: 0, 2, 1, 1, 0>, type = memref<16xf32>}
// CHECK-DAG: "ipu.buffer"() {sym_name = "arg1_0", tiles = array<i64: 0, 1, 0, 1, 0>, type = memref<24xf32>}
// CHECK-DAG: "ipu.buffer"() {sym_name = "matmul_in0", tiles = array<i64: 0, 1, 0, 1, 0, 2, 1>, type = memref<24xf32>}
// CHECK-DAG: "ipu.buffer"() {sym_name = "matmul0", tiles = array<i64: 0, 2, 1, 1, 0>, type = memref<24xf32>}
// CHECK-LABEL: func.func @rows(
// CHECK-NEXT: "ipu.host_to_device"(%arg0) {buffer = @arg0_0
// CHECK-NEXT: "ipu.host_to_device"(%arg1) {buffer = @arg1_0
// CHECK-NEXT: "ipu.sync"() {kind = "external"}
// CHECK-NEXT: "ipu.copy"() {dest = @matmul_in0, dst_offset = array<i64: 0, 0>, dst_tiles = array<i64: 0, 2, 1>, size = 24 : i64, source = @arg1_0, src_offset = array<i64: 0, 0>, src_tiles = array<i64: 0, 2, 0>}
// CHECK-NEXT: "ipu.execute"() {compute_set = @matmul_cs0}
// CHECK-NEXT: "ipu.sync"() {kind = "internal"}
// CHECK-NEXT: "ipu.sync"() {kind = "external"}
// CHECK-NEXT: %0 = "ipu.device_to_host"() {buffer = @matmul0
// CHECK-NEXT: return
// CHECK-LABEL: func.func private @matmul_v0(%arg0: tensor<4x4xf32>, %arg1: tensor<4x6xf32>) -> tensor<4x6xf32> attributes {ipu.codelet}
// CHECK-NEXT: "ipu.matmul"(%arg0, %arg1) : (tensor<4x4xf32>, tensor<4x6xf32>) -> tensor<4x6xf32>
// CHECK-LABEL: func.func private @matmul_cs0() attributes {ipu.compute_set}
// CHECK-NEXT: "ipu.vertex_group"() {codelet = @matmul_v0, inputs = [@arg0_0, @matmul_in0], outputs = [@matmul0], tiles = array<i64: 0, 2, 1, 1, 0, 1, 0>}

// -----

// A 2x2 grid of output blocks (m on tile stride 2, n on stride 1): each tile needs a row
// block of lhs and a column block of rhs, gathered from tiles 8 and 9.
module attributes {ipu.target = "tiny"} {
  func.func @grid(%a: tensor<4x4xf32> {ipu.mapping = {kind = "block", block = array<i64: 4, 4>, tiles = array<i64: 8, 1, 0, 1, 0>}},
                  %b: tensor<4x4xf32> {ipu.mapping = {kind = "block", block = array<i64: 4, 4>, tiles = array<i64: 9, 1, 0, 1, 0>}}) -> tensor<4x4xf32> {
    %c = "ipu.matmul"(%a, %b) {ipu.partition = array<i64: 2, 2, 4>, ipu.tiles = array<i64: 0, 2, 2, 2, 1, 1, 0>,
                               ipu.mapping = {kind = "block", block = array<i64: 2, 2>, tiles = array<i64: 0, 2, 2, 2, 1>}}
        : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
    return %c : tensor<4x4xf32>
  }
}

// CHECK-DAG: "ipu.buffer"() {sym_name = "arg0_0", tiles = array<i64: 8, 1, 0, 1, 0>, type = memref<16xf32>}
// CHECK-DAG: "ipu.buffer"() {sym_name = "arg1_0", tiles = array<i64: 9, 1, 0, 1, 0>, type = memref<16xf32>}
// CHECK-DAG: "ipu.buffer"() {sym_name = "matmul_in0", tiles = array<i64: 0, 2, 2, 1, 0, 2, 1>, type = memref<8xf32>}
// CHECK-DAG: "ipu.buffer"() {sym_name = "matmul_in1", tiles = array<i64: 0, 1, 0, 2, 1, 2, 2>, type = memref<8xf32>}
// CHECK-DAG: "ipu.buffer"() {sym_name = "matmul0", tiles = array<i64: 0, 2, 2, 2, 1>, type = memref<4xf32>}
// CHECK-LABEL: func.func @grid(
// CHECK-NEXT: "ipu.host_to_device"(%arg0) {buffer = @arg0_0
// CHECK-NEXT: "ipu.host_to_device"(%arg1) {buffer = @arg1_0
// CHECK-NEXT: "ipu.sync"() {kind = "external"}
// CHECK-NEXT: "ipu.copy"() {dest = @matmul_in0, dst_offset = array<i64: 0, 0, 0>, dst_tiles = array<i64: 0, 2, 2, 2, 1>, size = 8 : i64, source = @arg0_0, src_offset = array<i64: 0, 8, 0>, src_tiles = array<i64: 8, 2, 0, 2, 0>}
// CHECK-NEXT: "ipu.copy"() {dest = @matmul_in1, dst_offset = array<i64: 0, 0, 0, 2>, dst_tiles = array<i64: 0, 2, 1, 2, 2, 4, 0>, size = 2 : i64, source = @arg1_0, src_offset = array<i64: 0, 2, 0, 4>, src_tiles = array<i64: 9, 2, 0, 2, 0, 4, 0>}
// CHECK-NEXT: "ipu.execute"() {compute_set = @matmul_cs0}
// CHECK-NEXT: "ipu.sync"() {kind = "internal"}
// CHECK-NEXT: "ipu.sync"() {kind = "external"}
// CHECK-NEXT: %0 = "ipu.device_to_host"() {buffer = @matmul0
// CHECK-NEXT: return
// CHECK-LABEL: func.func private @matmul_v0(%arg0: tensor<2x4xf32>, %arg1: tensor<4x2xf32>) -> tensor<2x2xf32> attributes {ipu.codelet}
// CHECK-NEXT: "ipu.matmul"(%arg0, %arg1) : (tensor<2x4xf32>, tensor<4x2xf32>) -> tensor<2x2xf32>
// CHECK-LABEL: func.func private @matmul_cs0() attributes {ipu.compute_set}
// CHECK-NEXT: "ipu.vertex_group"() {codelet = @matmul_v0, inputs = [@matmul_in0, @matmul_in1], outputs = [@matmul0], tiles = array<i64: 0, 2, 2, 2, 1, 1, 0>}

// -----

// Batched: the batch loop is cut, every operand already lives with its part: no exchange.
module attributes {ipu.target = "tiny"} {
  func.func @batched(%a: tensor<2x4x3xf32> {ipu.mapping = {kind = "block", block = array<i64: 1, 4, 3>, tiles = array<i64: 0, 2, 1, 1, 0, 1, 0>}},
                     %b: tensor<2x3x5xf32> {ipu.mapping = {kind = "block", block = array<i64: 1, 3, 5>, tiles = array<i64: 0, 2, 1, 1, 0, 1, 0>}}) -> tensor<2x4x5xf32> {
    %c = "ipu.matmul"(%a, %b) {ipu.partition = array<i64: 1, 4, 5, 3>, ipu.tiles = array<i64: 0, 2, 1, 1, 0, 1, 0, 1, 0>,
                               ipu.mapping = {kind = "block", block = array<i64: 1, 4, 5>, tiles = array<i64: 0, 2, 1, 1, 0, 1, 0>}}
        : (tensor<2x4x3xf32>, tensor<2x3x5xf32>) -> tensor<2x4x5xf32>
    return %c : tensor<2x4x5xf32>
  }
}

// CHECK-DAG: "ipu.buffer"() {sym_name = "arg0_0", tiles = array<i64: 0, 2, 1, 1, 0, 1, 0>, type = memref<12xf32>}
// CHECK-DAG: "ipu.buffer"() {sym_name = "arg1_0", tiles = array<i64: 0, 2, 1, 1, 0, 1, 0>, type = memref<15xf32>}
// CHECK-DAG: "ipu.buffer"() {sym_name = "matmul0", tiles = array<i64: 0, 2, 1, 1, 0, 1, 0>, type = memref<20xf32>}
// CHECK-LABEL: func.func @batched(
// CHECK-NEXT: "ipu.host_to_device"(%arg0) {buffer = @arg0_0
// CHECK-NEXT: "ipu.host_to_device"(%arg1) {buffer = @arg1_0
// CHECK-NEXT: "ipu.sync"() {kind = "external"}
// CHECK-NEXT: "ipu.execute"() {compute_set = @matmul_cs0}
// CHECK-NEXT: "ipu.sync"() {kind = "internal"}
// CHECK-NEXT: "ipu.sync"() {kind = "external"}
// CHECK-NEXT: %0 = "ipu.device_to_host"() {buffer = @matmul0
// CHECK-NEXT: return
// CHECK-LABEL: func.func private @matmul_v0(%arg0: tensor<1x4x3xf32>, %arg1: tensor<1x3x5xf32>) -> tensor<1x4x5xf32> attributes {ipu.codelet}
// CHECK-NEXT: "ipu.matmul"(%arg0, %arg1) : (tensor<1x4x3xf32>, tensor<1x3x5xf32>) -> tensor<1x4x5xf32>
// CHECK-LABEL: func.func private @matmul_cs0() attributes {ipu.compute_set}
// CHECK-NEXT: "ipu.vertex_group"() {codelet = @matmul_v0, inputs = [@arg0_0, @arg1_0], outputs = [@matmul0], tiles = array<i64: 0, 2, 1, 1, 0, 1, 0, 1, 0>}
