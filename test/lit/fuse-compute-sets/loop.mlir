// RUN: ipu-opt %s --split-input-file -p 'builtin.module(ipu-fuse-compute-sets)' | FileCheck %s

// Compute sets inside a loop body (Poplar's Repeat) fuse like any others: @x -> exp -> @t ->
// add @b -> @y, all in the body.

module attributes {ipu.target = "tiny"} {
  "ipu.buffer"() {sym_name = "x", tiles = array<i64: 0, 4, 1>, type = memref<8xf32>} : () -> ()
  "ipu.buffer"() {sym_name = "t", tiles = array<i64: 0, 4, 1>, type = memref<8xf32>} : () -> ()
  "ipu.buffer"() {sym_name = "b", tiles = array<i64: 0, 4, 1>, type = memref<8xf32>} : () -> ()
  "ipu.buffer"() {sym_name = "y", tiles = array<i64: 0, 4, 1>, type = memref<8xf32>} : () -> ()
  // CHECK-LABEL: func.func @inside(
  // CHECK: scf.for
  // CHECK-NEXT: "ipu.execute"() {compute_set = @exp_cs_add_cs}
  // CHECK-NEXT: "ipu.sync"() {kind = "internal"}
  // CHECK-NEXT: }
  func.func @inside(%x: tensor<32xf32>, %b: tensor<32xf32>) -> tensor<32xf32> attributes {ipu.program} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c5 = arith.constant 5 : index
    "ipu.host_to_device"(%x) {buffer = @x, mapping = {kind = "linear", grain = 8 : i64, tiles = array<i64: 0, 4, 1>}} : (tensor<32xf32>) -> ()
    "ipu.host_to_device"(%b) {buffer = @b, mapping = {kind = "linear", grain = 8 : i64, tiles = array<i64: 0, 4, 1>}} : (tensor<32xf32>) -> ()
    "ipu.sync"() {kind = "external"} : () -> ()
    scf.for %i = %c0 to %c5 step %c1 {
      "ipu.execute"() {compute_set = @exp_cs} : () -> ()
      "ipu.sync"() {kind = "internal"} : () -> ()
      "ipu.execute"() {compute_set = @add_cs} : () -> ()
      "ipu.sync"() {kind = "internal"} : () -> ()
    }
    "ipu.sync"() {kind = "external"} : () -> ()
    %y = "ipu.device_to_host"() {buffer = @y, mapping = {kind = "linear", grain = 8 : i64, tiles = array<i64: 0, 4, 1>}} : () -> tensor<32xf32>
    return %y : tensor<32xf32>
  }
  func.func private @exp(%a: tensor<8xf32>) -> tensor<8xf32> attributes {ipu.codelet} {
    %e = math.exp %a : tensor<8xf32>
    return %e : tensor<8xf32>
  }
  func.func private @add(%a: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<8xf32> attributes {ipu.codelet} {
    %s = arith.addf %a, %b : tensor<8xf32>
    return %s : tensor<8xf32>
  }
  func.func private @exp_cs() attributes {ipu.compute_set} {
    "ipu.vertex_group"() {codelet = @exp, inputs = [@x], outputs = [@t], tiles = array<i64: 0, 4, 1>} : () -> ()
    return
  }
  func.func private @add_cs() attributes {ipu.compute_set} {
    "ipu.vertex_group"() {codelet = @add, inputs = [@t, @b], outputs = [@y], tiles = array<i64: 0, 4, 1>} : () -> ()
    return
  }
}

// -----

// The producer before the loop, the consumer inside it: the body runs it again and again on
// the same @t, so nothing moves across the loop's edge.

module attributes {ipu.target = "tiny"} {
  "ipu.buffer"() {sym_name = "x", tiles = array<i64: 0, 4, 1>, type = memref<8xf32>} : () -> ()
  "ipu.buffer"() {sym_name = "t", tiles = array<i64: 0, 4, 1>, type = memref<8xf32>} : () -> ()
  "ipu.buffer"() {sym_name = "b", tiles = array<i64: 0, 4, 1>, type = memref<8xf32>} : () -> ()
  "ipu.buffer"() {sym_name = "y", tiles = array<i64: 0, 4, 1>, type = memref<8xf32>} : () -> ()
  // CHECK-LABEL: func.func @across(
  // CHECK: "ipu.execute"() {compute_set = @exp_cs}
  // CHECK-NEXT: "ipu.sync"() {kind = "internal"}
  // CHECK-NEXT: scf.for
  // CHECK-NEXT: "ipu.execute"() {compute_set = @add_cs}
  // CHECK-NEXT: "ipu.sync"() {kind = "internal"}
  // CHECK-NEXT: }
  func.func @across(%x: tensor<32xf32>, %b: tensor<32xf32>) -> tensor<32xf32> attributes {ipu.program} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c5 = arith.constant 5 : index
    "ipu.host_to_device"(%x) {buffer = @x, mapping = {kind = "linear", grain = 8 : i64, tiles = array<i64: 0, 4, 1>}} : (tensor<32xf32>) -> ()
    "ipu.host_to_device"(%b) {buffer = @b, mapping = {kind = "linear", grain = 8 : i64, tiles = array<i64: 0, 4, 1>}} : (tensor<32xf32>) -> ()
    "ipu.sync"() {kind = "external"} : () -> ()
    "ipu.execute"() {compute_set = @exp_cs} : () -> ()
    "ipu.sync"() {kind = "internal"} : () -> ()
    scf.for %i = %c0 to %c5 step %c1 {
      "ipu.execute"() {compute_set = @add_cs} : () -> ()
      "ipu.sync"() {kind = "internal"} : () -> ()
    }
    "ipu.sync"() {kind = "external"} : () -> ()
    %y = "ipu.device_to_host"() {buffer = @y, mapping = {kind = "linear", grain = 8 : i64, tiles = array<i64: 0, 4, 1>}} : () -> tensor<32xf32>
    return %y : tensor<32xf32>
  }
  func.func private @exp(%a: tensor<8xf32>) -> tensor<8xf32> attributes {ipu.codelet} {
    %e = math.exp %a : tensor<8xf32>
    return %e : tensor<8xf32>
  }
  func.func private @add(%a: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<8xf32> attributes {ipu.codelet} {
    %s = arith.addf %a, %b : tensor<8xf32>
    return %s : tensor<8xf32>
  }
  func.func private @exp_cs() attributes {ipu.compute_set} {
    "ipu.vertex_group"() {codelet = @exp, inputs = [@x], outputs = [@t], tiles = array<i64: 0, 4, 1>} : () -> ()
    return
  }
  func.func private @add_cs() attributes {ipu.compute_set} {
    "ipu.vertex_group"() {codelet = @add, inputs = [@t, @b], outputs = [@y], tiles = array<i64: 0, 4, 1>} : () -> ()
    return
  }
}
