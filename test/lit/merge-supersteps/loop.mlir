// RUN: ipu-opt %s --split-input-file -p 'builtin.module(ipu-merge-supersteps)' | FileCheck %s

// Independent compute sets on disjoint tiles share a superstep inside a loop body as anywhere.

module attributes {ipu.target = "tiny"} {
  "ipu.buffer"() {sym_name = "x", tiles = array<i64: 0, 4, 1>, type = memref<8xf32>} : () -> ()
  "ipu.buffer"() {sym_name = "a", tiles = array<i64: 0, 4, 1>, type = memref<8xf32>} : () -> ()
  "ipu.buffer"() {sym_name = "y", tiles = array<i64: 4, 4, 1>, type = memref<8xf32>} : () -> ()
  "ipu.buffer"() {sym_name = "b", tiles = array<i64: 4, 4, 1>, type = memref<8xf32>} : () -> ()
  // CHECK-LABEL: func.func @inside(
  // CHECK: scf.for
  // CHECK-NEXT: "ipu.execute"() {compute_set = @a_cs_b_cs}
  // CHECK-NEXT: "ipu.sync"() {kind = "internal"}
  // CHECK-NEXT: }
  func.func @inside(%x: tensor<32xf32>, %y: tensor<32xf32>) -> (tensor<32xf32>, tensor<32xf32>) attributes {ipu.program} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c5 = arith.constant 5 : index
    "ipu.host_to_device"(%x) {buffer = @x, mapping = {kind = "linear", grain = 8 : i64, tiles = array<i64: 0, 4, 1>}} : (tensor<32xf32>) -> ()
    "ipu.host_to_device"(%y) {buffer = @y, mapping = {kind = "linear", grain = 8 : i64, tiles = array<i64: 4, 4, 1>}} : (tensor<32xf32>) -> ()
    "ipu.sync"() {kind = "external"} : () -> ()
    scf.for %i = %c0 to %c5 step %c1 {
      "ipu.execute"() {compute_set = @a_cs} : () -> ()
      "ipu.sync"() {kind = "internal"} : () -> ()
      "ipu.execute"() {compute_set = @b_cs} : () -> ()
      "ipu.sync"() {kind = "internal"} : () -> ()
    }
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
    "ipu.vertex_group"() {codelet = @exp, inputs = [@y], outputs = [@b], tiles = array<i64: 4, 4, 1>} : () -> ()
    return
  }
}

// -----

// One before the loop, one in its body: the body runs five times, the first compute set once;
// nothing moves across the loop's edge.

module attributes {ipu.target = "tiny"} {
  "ipu.buffer"() {sym_name = "x", tiles = array<i64: 0, 4, 1>, type = memref<8xf32>} : () -> ()
  "ipu.buffer"() {sym_name = "a", tiles = array<i64: 0, 4, 1>, type = memref<8xf32>} : () -> ()
  "ipu.buffer"() {sym_name = "y", tiles = array<i64: 4, 4, 1>, type = memref<8xf32>} : () -> ()
  "ipu.buffer"() {sym_name = "b", tiles = array<i64: 4, 4, 1>, type = memref<8xf32>} : () -> ()
  // CHECK-LABEL: func.func @across(
  // CHECK: "ipu.execute"() {compute_set = @a_cs}
  // CHECK-NEXT: "ipu.sync"() {kind = "internal"}
  // CHECK-NEXT: scf.for
  // CHECK-NEXT: "ipu.execute"() {compute_set = @b_cs}
  // CHECK-NEXT: "ipu.sync"() {kind = "internal"}
  // CHECK-NEXT: }
  func.func @across(%x: tensor<32xf32>, %y: tensor<32xf32>) -> (tensor<32xf32>, tensor<32xf32>) attributes {ipu.program} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c5 = arith.constant 5 : index
    "ipu.host_to_device"(%x) {buffer = @x, mapping = {kind = "linear", grain = 8 : i64, tiles = array<i64: 0, 4, 1>}} : (tensor<32xf32>) -> ()
    "ipu.host_to_device"(%y) {buffer = @y, mapping = {kind = "linear", grain = 8 : i64, tiles = array<i64: 4, 4, 1>}} : (tensor<32xf32>) -> ()
    "ipu.sync"() {kind = "external"} : () -> ()
    "ipu.execute"() {compute_set = @a_cs} : () -> ()
    "ipu.sync"() {kind = "internal"} : () -> ()
    scf.for %i = %c0 to %c5 step %c1 {
      "ipu.execute"() {compute_set = @b_cs} : () -> ()
      "ipu.sync"() {kind = "internal"} : () -> ()
    }
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
    "ipu.vertex_group"() {codelet = @exp, inputs = [@y], outputs = [@b], tiles = array<i64: 4, 4, 1>} : () -> ()
    return
  }
}
