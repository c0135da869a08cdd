// RUN: ipu-opt %s --split-input-file --verify-diagnostics -p 'builtin.module(ipu-fuse-compute-sets)'

// Malformed L3 input to ipu-fuse-compute-sets: the verifier rejects it when it is read, with
// the op's location, before the pass looks for compute sets to fuse.

module attributes {ipu.target = "tiny"} {
  "ipu.buffer"() {sym_name = "x", tiles = array<i64: 0, 4, 1>, type = memref<8xf32>} : () -> ()
  "ipu.buffer"() {sym_name = "t", tiles = array<i64: 0, 4, 1>, type = memref<8xf32>} : () -> ()
  func.func @missing_compute_set() attributes {ipu.program} {
    // expected-error @+1 {{'ipu.execute' op 'compute_set' @nope does not name a func.func marked ipu.compute_set}}
    "ipu.execute"() {compute_set = @nope} : () -> ()
    "ipu.sync"() {kind = "internal"} : () -> ()
    return
  }
  func.func private @exp(%v: tensor<8xf32>) -> tensor<8xf32> attributes {ipu.codelet} {
    %e = math.exp %v : tensor<8xf32>
    return %e : tensor<8xf32>
  }
}

// -----

module attributes {ipu.target = "tiny"} {
  "ipu.buffer"() {sym_name = "x", tiles = array<i64: 0, 4, 1>, type = memref<8xf32>} : () -> ()
  "ipu.buffer"() {sym_name = "t", tiles = array<i64: 0, 4, 1>, type = memref<8xf32>} : () -> ()
  func.func @group_outside_the_target() attributes {ipu.program} {
    "ipu.execute"() {compute_set = @cs} : () -> ()
    "ipu.sync"() {kind = "internal"} : () -> ()
    return
  }
  func.func private @exp(%v: tensor<8xf32>) -> tensor<8xf32> attributes {ipu.codelet} {
    %e = math.exp %v : tensor<8xf32>
    return %e : tensor<8xf32>
  }
  func.func private @cs() attributes {ipu.compute_set} {
    // expected-error @+1 {{'ipu.vertex_group' op 'tiles': tile grid reaches tiles 14..17, outside the target's 16 tiles (tiny)}}
    "ipu.vertex_group"() {codelet = @exp, inputs = [@x], outputs = [@t], tiles = array<i64: 14, 4, 1>} : () -> ()
    return
  }
}

// -----

module attributes {ipu.target = "tiny"} {
  "ipu.buffer"() {sym_name = "x", tiles = array<i64: 0, 4, 1>, type = memref<8xf32>} : () -> ()
  "ipu.buffer"() {sym_name = "t", tiles = array<i64: 0, 4, 1>, type = memref<8xf32>} : () -> ()
  func.func @codelet_as_buffer() attributes {ipu.program} {
    "ipu.execute"() {compute_set = @cs} : () -> ()
    "ipu.sync"() {kind = "internal"} : () -> ()
    return
  }
  func.func private @exp(%v: tensor<8xf32>) -> tensor<8xf32> attributes {ipu.codelet} {
    %e = math.exp %v : tensor<8xf32>
    return %e : tensor<8xf32>
  }
  func.func private @cs() attributes {ipu.compute_set} {
    // expected-error @+1 {{'ipu.vertex_group' op 'inputs' @exp does not name an ipu.buffer}}
    "ipu.vertex_group"() {codelet = @exp, inputs = [@exp], outputs = [@t], tiles = array<i64: 0, 4, 1>} : () -> ()
    return
  }
}
