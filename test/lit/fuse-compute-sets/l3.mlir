// RUN: ipu-opt %s --split-input-file -p 'builtin.module(ipu-fuse-compute-sets)' | FileCheck %s

// ipu-fuse-compute-sets on hand-written L3 (tiny: 16 tiles). @x -> exp -> @t -> add @b -> @y
// on tiles 0..3; the pattern fuses the two compute sets when @t is read by nothing else.

module attributes {ipu.target = "tiny"} {
  "ipu.buffer"() {sym_name = "x", tiles = array<i64: 0, 4, 1>, type = memref<8xf32>} : () -> ()
  "ipu.buffer"() {sym_name = "t", tiles = array<i64: 0, 4, 1>, type = memref<8xf32>} : () -> ()
  "ipu.buffer"() {sym_name = "b", tiles = array<i64: 0, 1, 0>, type = memref<8xf32>} : () -> ()
  "ipu.buffer"() {sym_name = "b_in", tiles = array<i64: 0, 4, 1>, type = memref<8xf32>} : () -> ()
  "ipu.buffer"() {sym_name = "y", tiles = array<i64: 0, 4, 1>, type = memref<8xf32>} : () -> ()
  // CHECK-NOT: sym_name = "t"
  // CHECK-LABEL: func.func @fused(
  // CHECK-NEXT: "ipu.host_to_device"(%arg0) {buffer = @x
  // CHECK-NEXT: "ipu.host_to_device"(%arg1) {buffer = @b
  // CHECK-NEXT: "ipu.sync"() {kind = "external"}
  // CHECK-NEXT: "ipu.copy"() {dest = @b_in, {{.*}}source = @b
  // CHECK-NEXT: "ipu.execute"() {compute_set = @exp_cs_add_cs}
  // CHECK-NEXT: "ipu.sync"() {kind = "internal"}
  // CHECK-NEXT: "ipu.sync"() {kind = "external"}
  // CHECK-NEXT: "ipu.device_to_host"() {buffer = @y
  // CHECK-NEXT: return
  func.func @fused(%x: tensor<32xf32>, %b: tensor<8xf32>) -> tensor<32xf32> attributes {ipu.program} {
    "ipu.host_to_device"(%x) {buffer = @x, mapping = {kind = "linear", grain = 8 : i64, tiles = array<i64: 0, 4, 1>}} : (tensor<32xf32>) -> ()
    "ipu.host_to_device"(%b) {buffer = @b, mapping = {kind = "linear", grain = 8 : i64, tiles = array<i64: 0, 1, 0>}} : (tensor<8xf32>) -> ()
    "ipu.sync"() {kind = "external"} : () -> ()
    "ipu.execute"() {compute_set = @exp_cs} : () -> ()
    "ipu.sync"() {kind = "internal"} : () -> ()
    "ipu.copy"() {source = @b, dest = @b_in, size = 8 : i64, src_tiles = array<i64: 0, 4, 0>, dst_tiles = array<i64: 0, 4, 1>, src_offset = array<i64: 0, 0>, dst_offset = array<i64: 0, 0>} : () -> ()
    "ipu.execute"() {compute_set = @add_cs} : () -> ()
    "ipu.sync"() {kind = "internal"} : () -> ()
    "ipu.sync"() {kind = "external"} : () -> ()
    %y = "ipu.device_to_host"() {buffer = @y, mapping = {kind = "linear", grain = 8 : i64, tiles = array<i64: 0, 4, 1>}} : () -> tensor<32xf32>
    return %y : tensor<32xf32>
  }
  // CHECK-LABEL: func.func private @exp_cs_add_cs() attributes {ipu.compute_set}
  // CHECK-NEXT: "ipu.vertex_group"() {codelet = @exp_add, inputs = [@x, @b_in], outputs = [@y], tiles = array<i64: 0, 4, 1>}
  // CHECK-LABEL: func.func private @exp_add(%arg0: tensor<8xf32>, %arg1: tensor<8xf32>) -> tensor<8xf32> attributes {ipu.codelet}
  // CHECK-NEXT: %[[E:.*]] = math.exp %arg0
  // CHECK-NEXT: %[[S:.*]] = arith.addf %[[E]], %arg1
  // CHECK-NEXT: return %[[S]]
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
    "ipu.vertex_group"() {codelet = @add, inputs = [@t, @b_in], outputs = [@y], tiles = array<i64: 0, 4, 1>} : () -> ()
    return
  }
}

// -----

// The intermediate @t also leaves for the host: it must land in memory, no fusion.
module attributes {ipu.target = "tiny"} {
  "ipu.buffer"() {sym_name = "x", tiles = array<i64: 0, 4, 1>, type = memref<8xf32>} : () -> ()
  "ipu.buffer"() {sym_name = "t", tiles = array<i64: 0, 4, 1>, type = memref<8xf32>} : () -> ()
  "ipu.buffer"() {sym_name = "y", tiles = array<i64: 0, 4, 1>, type = memref<8xf32>} : () -> ()
  // CHECK-LABEL: func.func @read_elsewhere(
  // CHECK: "ipu.execute"() {compute_set = @exp_cs}
  // CHECK-NEXT: "ipu.sync"() {kind = "internal"}
  // CHECK-NEXT: "ipu.execute"() {compute_set = @exp2_cs}
  // CHECK-LABEL: func.func private @exp_cs()
  // CHECK-LABEL: func.func private @exp2_cs()
  func.func @read_elsewhere(%x: tensor<32xf32>) -> (tensor<32xf32>, tensor<32xf32>) attributes {ipu.program} {
    "ipu.host_to_device"(%x) {buffer = @x, mapping = {kind = "linear", grain = 8 : i64, tiles = array<i64: 0, 4, 1>}} : (tensor<32xf32>) -> ()
    "ipu.sync"() {kind = "external"} : () -> ()
    "ipu.execute"() {compute_set = @exp_cs} : () -> ()
    "ipu.sync"() {kind = "internal"} : () -> ()
    "ipu.execute"() {compute_set = @exp2_cs} : () -> ()
    "ipu.sync"() {kind = "internal"} : () -> ()
    "ipu.sync"() {kind = "external"} : () -> ()
    %t = "ipu.device_to_host"() {buffer = @t, mapping = {kind = "linear", grain = 8 : i64, tiles = array<i64: 0, 4, 1>}} : () -> tensor<32xf32>
    %y = "ipu.device_to_host"() {buffer = @y, mapping = {kind = "linear", grain = 8 : i64, tiles = array<i64: 0, 4, 1>}} : () -> tensor<32xf32>
    return %t, %y : tensor<32xf32>, tensor<32xf32>
  }
  func.func private @exp(%a: tensor<8xf32>) -> tensor<8xf32> attributes {ipu.codelet} {
    %e = math.exp %a : tensor<8xf32>
    return %e : tensor<8xf32>
  }
  func.func private @exp_cs() attributes {ipu.compute_set} {
    "ipu.vertex_group"() {codelet = @exp, inputs = [@x], outputs = [@t], tiles = array<i64: 0, 4, 1>} : () -> ()
    return
  }
  func.func private @exp2_cs() attributes {ipu.compute_set} {
    "ipu.vertex_group"() {codelet = @exp, inputs = [@t], outputs = [@y], tiles = array<i64: 0, 4, 1>} : () -> ()
    return
  }
}

// -----

// The consumer runs on other tiles (4..7) than the producer (0..3): no fusion.
module attributes {ipu.target = "tiny"} {
  "ipu.buffer"() {sym_name = "x", tiles = array<i64: 0, 4, 1>, type = memref<8xf32>} : () -> ()
  "ipu.buffer"() {sym_name = "t", tiles = array<i64: 0, 8, 1>, type = memref<8xf32>} : () -> ()
  "ipu.buffer"() {sym_name = "y", tiles = array<i64: 4, 4, 1>, type = memref<8xf32>} : () -> ()
  // CHECK-LABEL: func.func @other_tiles(
  // CHECK: "ipu.execute"() {compute_set = @exp_cs}
  // CHECK-NEXT: "ipu.sync"() {kind = "internal"}
  // CHECK-NEXT: "ipu.copy"()
  // CHECK-NEXT: "ipu.execute"() {compute_set = @exp2_cs}
  func.func @other_tiles(%x: tensor<32xf32>) -> tensor<32xf32> attributes {ipu.program} {
    "ipu.host_to_device"(%x) {buffer = @x, mapping = {kind = "linear", grain = 8 : i64, tiles = array<i64: 0, 4, 1>}} : (tensor<32xf32>) -> ()
    "ipu.sync"() {kind = "external"} : () -> ()
    "ipu.execute"() {compute_set = @exp_cs} : () -> ()
    "ipu.sync"() {kind = "internal"} : () -> ()
    "ipu.copy"() {source = @t, dest = @t, size = 8 : i64, src_tiles = array<i64: 0, 4, 1>, dst_tiles = array<i64: 4, 4, 1>, src_offset = array<i64: 0, 0>, dst_offset = array<i64: 0, 0>} : () -> ()
    "ipu.execute"() {compute_set = @exp2_cs} : () -> ()
    "ipu.sync"() {kind = "internal"} : () -> ()
    "ipu.sync"() {kind = "external"} : () -> ()
    %y = "ipu.device_to_host"() {buffer = @y, mapping = {kind = "linear", grain = 8 : i64, tiles = array<i64: 4, 4, 1>}} : () -> tensor<32xf32>
    return %y : tensor<32xf32>
  }
  func.func private @exp(%a: tensor<8xf32>) -> tensor<8xf32> attributes {ipu.codelet} {
    %e = math.exp %a : tensor<8xf32>
    return %e : tensor<8xf32>
  }
  func.func private @exp_cs() attributes {ipu.compute_set} {
    "ipu.vertex_group"() {codelet = @exp, inputs = [@x], outputs = [@t], tiles = array<i64: 0, 4, 1>} : () -> ()
    return
  }
  func.func private @exp2_cs() attributes {ipu.compute_set} {
    "ipu.vertex_group"() {codelet = @exp, inputs = [@t], outputs = [@y], tiles = array<i64: 4, 4, 1>} : () -> ()
    return
  }
}
