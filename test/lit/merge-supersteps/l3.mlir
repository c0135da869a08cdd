// RUN: ipu-opt %s --split-input-file -p 'builtin.module(ipu-merge-supersteps)' | FileCheck %s

// ipu-merge-supersteps on hand-written L3 (tiny: 16 tiles): two compute sets separated by an
// internal sync share one superstep when the second (and its exchange) does not depend on the
// first and they run on disjoint tiles.

module attributes {ipu.target = "tiny"} {
  "ipu.buffer"() {sym_name = "x", tiles = array<i64: 0, 4, 1>, type = memref<8xf32>} : () -> ()
  "ipu.buffer"() {sym_name = "a", tiles = array<i64: 0, 4, 1>, type = memref<8xf32>} : () -> ()
  "ipu.buffer"() {sym_name = "y", tiles = array<i64: 0, 1, 0>, type = memref<32xf32>} : () -> ()
  "ipu.buffer"() {sym_name = "y_in", tiles = array<i64: 4, 4, 1>, type = memref<8xf32>} : () -> ()
  "ipu.buffer"() {sym_name = "b", tiles = array<i64: 4, 4, 1>, type = memref<8xf32>} : () -> ()
  // CHECK-LABEL: func.func @independent(
  // CHECK: "ipu.sync"() {kind = "external"}
  // CHECK-NEXT: "ipu.copy"() {dest = @y_in
  // CHECK-NEXT: "ipu.execute"() {compute_set = @a_cs_b_cs}
  // CHECK-NEXT: "ipu.sync"() {kind = "internal"}
  // CHECK-NEXT: "ipu.sync"() {kind = "external"}
  // CHECK-LABEL: func.func private @a_cs_b_cs() attributes {ipu.compute_set}
  // CHECK-NEXT: "ipu.vertex_group"() {codelet = @exp, inputs = [@x], outputs = [@a], tiles = array<i64: 0, 4, 1>}
  // CHECK-NEXT: "ipu.vertex_group"() {codelet = @exp, inputs = [@y_in], outputs = [@b], tiles = array<i64: 4, 4, 1>}
  // CHECK-NOT: func.func private @a_cs()
  // CHECK-NOT: func.func private @b_cs()
  func.func @independent(%x: tensor<32xf32>, %y: tensor<32xf32>) -> (tensor<32xf32>, tensor<32xf32>) attributes {ipu.program} {
    "ipu.host_to_device"(%x) {buffer = @x, mapping = {kind = "linear", grain = 8 : i64, tiles = array<i64: 0, 4, 1>}} : (tensor<32xf32>) -> ()
    "ipu.host_to_device"(%y) {buffer = @y, mapping = {kind = "linear", grain = 8 : i64, tiles = array<i64: 0, 1, 0>}} : (tensor<32xf32>) -> ()
    "ipu.sync"() {kind = "external"} : () -> ()
    "ipu.execute"() {compute_set = @a_cs} : () -> ()
    "ipu.sync"() {kind = "internal"} : () -> ()
    "ipu.copy"() {source = @y, dest = @y_in, size = 8 : i64, src_tiles = array<i64: 0, 4, 0>, dst_tiles = array<i64: 4, 4, 1>, src_offset = array<i64: 0, 8>, dst_offset = array<i64: 0, 0>} : () -> ()
    "ipu.execute"() {compute_set = @b_cs} : () -> ()
    "ipu.sync"() {kind = "internal"} : () -> ()
    "ipu.sync"() {kind = "external"} : () -> ()
    %a = "ipu.device_to_host"() {buffer = @a, mapping = {kind = "linear", grain = 8 : i64, tiles = array<i64: 0, 4, 1>}} : () -> tensor<32xf32>
    %b = "ipu.device_to_host"() {buffer = @b, mapping = {kind = "linear", grain = 8 : i64, tiles = array<i64: 4, 4, 1>}} : () -> tensor<32xf32>
    return %a, %b : tensor<32xf32>, tensor<32xf32>
  }
  func.func private @exp(%v: tensor<8xf32>) -> tensor<8xf32> attributes {ipu.codelet} {
    %e = math.exp %v : tensor<8xf32>
    return %e : tensor<8xf32>
  }
  func.func private @a_cs() attributes {ipu.compute_set} {
    "ipu.vertex_group"() {codelet = @exp, inputs = [@x], outputs = [@a], tiles = array<i64: 0, 4, 1>} : () -> ()
    return
  }
  func.func private @b_cs() attributes {ipu.compute_set} {
    "ipu.vertex_group"() {codelet = @exp, inputs = [@y_in], outputs = [@b], tiles = array<i64: 4, 4, 1>} : () -> ()
    return
  }
}

// -----

// The second compute set's exchange reads what the first writes (@a): it depends on it.
module attributes {ipu.target = "tiny"} {
  "ipu.buffer"() {sym_name = "x", tiles = array<i64: 0, 4, 1>, type = memref<8xf32>} : () -> ()
  "ipu.buffer"() {sym_name = "a", tiles = array<i64: 0, 4, 1>, type = memref<8xf32>} : () -> ()
  "ipu.buffer"() {sym_name = "a_in", tiles = array<i64: 4, 4, 1>, type = memref<8xf32>} : () -> ()
  "ipu.buffer"() {sym_name = "b", tiles = array<i64: 4, 4, 1>, type = memref<8xf32>} : () -> ()
  // CHECK-LABEL: func.func @dependent(
  // CHECK: "ipu.execute"() {compute_set = @a_cs}
  // CHECK-NEXT: "ipu.sync"() {kind = "internal"}
  // CHECK-NEXT: "ipu.copy"() {dest = @a_in
  // CHECK-NEXT: "ipu.execute"() {compute_set = @b_cs}
  func.func @dependent(%x: tensor<32xf32>) -> tensor<32xf32> attributes {ipu.program} {
    "ipu.host_to_device"(%x) {buffer = @x, mapping = {kind = "linear", grain = 8 : i64, tiles = array<i64: 0, 4, 1>}} : (tensor<32xf32>) -> ()
    "ipu.sync"() {kind = "external"} : () -> ()
    "ipu.execute"() {compute_set = @a_cs} : () -> ()
    "ipu.sync"() {kind = "internal"} : () -> ()
    "ipu.copy"() {source = @a, dest = @a_in, size = 8 : i64, src_tiles = array<i64: 0, 4, 1>, dst_tiles = array<i64: 4, 4, 1>, src_offset = array<i64: 0, 0>, dst_offset = array<i64: 0, 0>} : () -> ()
    "ipu.execute"() {compute_set = @b_cs} : () -> ()
    "ipu.sync"() {kind = "internal"} : () -> ()
    "ipu.sync"() {kind = "external"} : () -> ()
    %b = "ipu.device_to_host"() {buffer = @b, mapping = {kind = "linear", grain = 8 : i64, tiles = array<i64: 4, 4, 1>}} : () -> tensor<32xf32>
    return %b : tensor<32xf32>
  }
  func.func private @exp(%v: tensor<8xf32>) -> tensor<8xf32> attributes {ipu.codelet} {
    %e = math.exp %v : tensor<8xf32>
    return %e : tensor<8xf32>
  }
  func.func private @a_cs() attributes {ipu.compute_set} {
    "ipu.vertex_group"() {codelet = @exp, inputs = [@x], outputs = [@a], tiles = array<i64: 0, 4, 1>} : () -> ()
    return
  }
  func.func private @b_cs() attributes {ipu.compute_set} {
    "ipu.vertex_group"() {codelet = @exp, inputs = [@a_in], outputs = [@b], tiles = array<i64: 4, 4, 1>} : () -> ()
    return
  }
}

// -----

// Independent, but both run on tile 3: no merge.
module attributes {ipu.target = "tiny"} {
  "ipu.buffer"() {sym_name = "x", tiles = array<i64: 0, 8, 1>, type = memref<8xf32>} : () -> ()
  "ipu.buffer"() {sym_name = "a", tiles = array<i64: 0, 4, 1>, type = memref<8xf32>} : () -> ()
  "ipu.buffer"() {sym_name = "b", tiles = array<i64: 3, 4, 1>, type = memref<8xf32>} : () -> ()
  // CHECK-LABEL: func.func @overlapping_tiles(
  // CHECK: "ipu.execute"() {compute_set = @a_cs}
  // CHECK-NEXT: "ipu.sync"() {kind = "internal"}
  // CHECK-NEXT: "ipu.execute"() {compute_set = @b_cs}
  func.func @overlapping_tiles(%x: tensor<64xf32>) -> (tensor<32xf32>, tensor<32xf32>) attributes {ipu.program} {
    "ipu.host_to_device"(%x) {buffer = @x, mapping = {kind = "linear", grain = 8 : i64, tiles = array<i64: 0, 8, 1>}} : (tensor<64xf32>) -> ()
    "ipu.sync"() {kind = "external"} : () -> ()
    "ipu.execute"() {compute_set = @a_cs} : () -> ()
    "ipu.sync"() {kind = "internal"} : () -> ()
    "ipu.execute"() {compute_set = @b_cs} : () -> ()
    "ipu.sync"() {kind = "internal"} : () -> ()
    "ipu.sync"() {kind = "external"} : () -> ()
    %a = "ipu.device_to_host"() {buffer = @a, mapping = {kind = "linear", grain = 8 : i64, tiles = array<i64: 0, 4, 1>}} : () -> tensor<32xf32>
    %b = "ipu.device_to_host"() {buffer = @b, mapping = {kind = "linear", grain = 8 : i64, tiles = array<i64: 3, 4, 1>}} : () -> tensor<32xf32>
    return %a, %b : tensor<32xf32>, tensor<32xf32>
  }
  func.func private @exp(%v: tensor<8xf32>) -> tensor<8xf32> attributes {ipu.codelet} {
    %e = math.exp %v : tensor<8xf32>
    return %e : tensor<8xf32>
  }
  func.func private @a_cs() attributes {ipu.compute_set} {
    "ipu.vertex_group"() {codelet = @exp, inputs = [@x], outputs = [@a], tiles = array<i64: 0, 4, 1>} : () -> ()
    return
  }
  func.func private @b_cs() attributes {ipu.compute_set} {
    "ipu.vertex_group"() {codelet = @exp, inputs = [@x], outputs = [@b], tiles = array<i64: 3, 4, 1>} : () -> ()
    return
  }
}
