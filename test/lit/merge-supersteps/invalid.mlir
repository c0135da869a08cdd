// RUN: ipu-opt %s --split-input-file --verify-diagnostics -p 'builtin.module(ipu-merge-supersteps)'

// Malformed L3 input to ipu-merge-supersteps: the verifier rejects it when it is read, with
// the op's location, before the pass looks for supersteps to merge.

module attributes {ipu.target = "tiny"} {
  "ipu.buffer"() {sym_name = "x", tiles = array<i64: 0, 4, 1>, type = memref<8xf32>} : () -> ()
  "ipu.buffer"() {sym_name = "t", tiles = array<i64: 0, 4, 1>, type = memref<8xf32>} : () -> ()
  func.func @two_writers() attributes {ipu.program} {
    "ipu.execute"() {compute_set = @cs} : () -> ()
    "ipu.sync"() {kind = "internal"} : () -> ()
    return
  }
  func.func private @exp(%v: tensor<8xf32>) -> tensor<8xf32> attributes {ipu.codelet} {
    %e = math.exp %v : tensor<8xf32>
    return %e : tensor<8xf32>
  }
  func.func private @cs() attributes {ipu.compute_set} {
    "ipu.vertex_group"() {codelet = @exp, inputs = [@x], outputs = [@t], tiles = array<i64: 0, 2, 1>} : () -> ()
    // expected-error @+1 {{'ipu.vertex_group' op writes @t on tile 1, which another vertex group}}
    "ipu.vertex_group"() {codelet = @exp, inputs = [@x], outputs = [@t], tiles = array<i64: 1, 3, 1>} : () -> ()
    return
  }
}

// -----

module attributes {ipu.target = "tiny"} {
  "ipu.buffer"() {sym_name = "x", tiles = array<i64: 0, 4, 1>, type = memref<8xf32>} : () -> ()
  "ipu.buffer"() {sym_name = "t", tiles = array<i64: 0, 4, 1>, type = memref<8xf32>} : () -> ()
  func.func @copy_past_the_buffer() attributes {ipu.program} {
    // expected-error @+1 {{'ipu.copy' op writes elements [4, 12) of @t on tile 1, which holds 8 per tile: the exchange overflows the tile's copy of it}}
    "ipu.copy"() {source = @x, dest = @t, size = 8 : i64, src_tiles = array<i64: 0, 2, 1>, dst_tiles = array<i64: 0, 2, 1>, src_offset = array<i64: 0, 0>, dst_offset = array<i64: 0, 4>} : () -> ()
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
  func.func @codelet_of_other_shape() attributes {ipu.program} {
    "ipu.execute"() {compute_set = @cs} : () -> ()
    "ipu.sync"() {kind = "internal"} : () -> ()
    return
  }
  func.func private @exp(%v: tensor<8xf32>) -> tensor<8xf32> attributes {ipu.codelet} {
    %e = math.exp %v : tensor<8xf32>
    return %e : tensor<8xf32>
  }
  "ipu.buffer"() {sym_name = "small", tiles = array<i64: 0, 4, 1>, type = memref<4xf32>} : () -> ()
  func.func private @cs() attributes {ipu.compute_set} {
    // expected-error @+1 {{'ipu.vertex_group' op expects argument #0 of codelet @exp (tensor<8xf32>) to fit in @small (memref<4xf32>): it views the buffer's leading elements}}
    "ipu.vertex_group"() {codelet = @exp, inputs = [@small], outputs = [@t], tiles = array<i64: 0, 4, 1>} : () -> ()
    return
  }
}
