// Programs spanning the IPUs of a system (m2000: 4 x 1472 tiles, numbered globally): the
// verifier's multi-IPU rules (dialects/verify_scope.py, verify_program.py), each with its exact message, and the
// forms it accepts.
// RUN: ipu-opt %s --split-input-file --verify-diagnostics

// A copy from IPU 0 (tiles 0..15) to IPU 1 (tiles 1472..1487) after a global sync: the link form.
module attributes {ipu.target = "m2000"} {
  "ipu.buffer"() {sym_name = "x", type = memref<8xf32>, tiles = array<i64: 0, 16, 1>} : () -> ()
  "ipu.buffer"() {sym_name = "y", type = memref<8xf32>, tiles = array<i64: 1472, 16, 1>} : () -> ()
  func.func @link_copy() attributes {ipu.program} {
    "ipu.sync"() {kind = "global"} : () -> ()
    "ipu.copy"() {source = @x, dest = @y, size = 8 : i64, src_tiles = array<i64: 0, 16, 1>, dst_tiles = array<i64: 1472, 16, 1>, src_offset = array<i64: 0, 0>, dst_offset = array<i64: 0, 0>} : () -> ()
    "ipu.sync"() {kind = "internal"} : () -> ()
    return
  }
}

// -----

// The host's sync is every IPU's too.
module attributes {ipu.target = "m2000"} {
  "ipu.buffer"() {sym_name = "x", type = memref<8xf32>, tiles = array<i64: 0, 16, 1>} : () -> ()
  "ipu.buffer"() {sym_name = "y", type = memref<8xf32>, tiles = array<i64: 1472, 16, 1>} : () -> ()
  func.func @link_copy_after_host_sync() attributes {ipu.program} {
    "ipu.sync"() {kind = "external"} : () -> ()
    "ipu.copy"() {source = @x, dest = @y, size = 8 : i64, src_tiles = array<i64: 0, 16, 1>, dst_tiles = array<i64: 1472, 16, 1>, src_offset = array<i64: 0, 0>, dst_offset = array<i64: 0, 0>} : () -> ()
    return
  }
}

// -----

module attributes {ipu.target = "m2000"} {
  "ipu.buffer"() {sym_name = "x", type = memref<8xf32>, tiles = array<i64: 0, 16, 1>} : () -> ()
  "ipu.buffer"() {sym_name = "y", type = memref<8xf32>, tiles = array<i64: 1472, 16, 1>} : () -> ()
  func.func @copy_after_internal_sync() attributes {ipu.program} {
    "ipu.sync"() {kind = "internal"} : () -> ()
    // expected-error @+1 {{'ipu.copy' op copies from IPU 0 to IPU 1 (tiles 0.. to 1472..) outside the link form: an inter-IPU copy needs a "global" ipu.sync before its exchange phase}}
    "ipu.copy"() {source = @x, dest = @y, size = 8 : i64, src_tiles = array<i64: 0, 16, 1>, dst_tiles = array<i64: 1472, 16, 1>, src_offset = array<i64: 0, 0>, dst_offset = array<i64: 0, 0>} : () -> ()
    return
  }
}

// -----

// No sync before it in its block at all: not the link form either.
module attributes {ipu.target = "m2000"} {
  "ipu.buffer"() {sym_name = "x", type = memref<8xf32>, tiles = array<i64: 4416, 16, 1>} : () -> ()
  "ipu.buffer"() {sym_name = "y", type = memref<8xf32>, tiles = array<i64: 0, 16, 1>} : () -> ()
  func.func @copy_without_sync() attributes {ipu.program} {
    // expected-error @+1 {{'ipu.copy' op copies from IPU 3 to IPU 0 (tiles 4416.. to 0..) outside the link form}}
    "ipu.copy"() {source = @x, dest = @y, size = 8 : i64, src_tiles = array<i64: 4416, 16, 1>, dst_tiles = array<i64: 0, 16, 1>, src_offset = array<i64: 0, 0>, dst_offset = array<i64: 0, 0>} : () -> ()
    return
  }
}

// -----

// On one chip an internal sync opens any exchange phase: the link rules apply to systems only.
module attributes {ipu.target = "gc200"} {
  "ipu.buffer"() {sym_name = "x", type = memref<8xf32>, tiles = array<i64: 1464, 8, 1>} : () -> ()
  "ipu.buffer"() {sym_name = "y", type = memref<8xf32>, tiles = array<i64: 1456, 8, 1>} : () -> ()
  func.func @one_chip() attributes {ipu.program} {
    "ipu.sync"() {kind = "internal"} : () -> ()
    "ipu.copy"() {source = @x, dest = @y, size = 8 : i64, src_tiles = array<i64: 1464, 8, 1>, dst_tiles = array<i64: 1456, 8, 1>, src_offset = array<i64: 0, 0>, dst_offset = array<i64: 0, 0>} : () -> ()
    return
  }
}

// -----

module attributes {ipu.target = "m2000"} {
  "ipu.buffer"() {sym_name = "x", type = memref<8xf32>, tiles = array<i64: 1464, 16, 1>} : () -> ()
  "ipu.buffer"() {sym_name = "y", type = memref<8xf32>, tiles = array<i64: 1464, 16, 1>} : () -> ()
  func.func private @id(%x: tensor<8xf32>) -> tensor<8xf32> attributes {ipu.codelet} {
    return %x : tensor<8xf32>
  }
  func.func private @cs() attributes {ipu.compute_set} {
    // expected-error @+1 {{'ipu.vertex_group' op 'tiles' spans IPUs 0..1 (tiles 1464..1479, 1472 per IPU on m2000): a vertex touches only its own IPU's memory}}
    "ipu.vertex_group"() {codelet = @id, tiles = array<i64: 1464, 16, 1>, inputs = [@x], outputs = [@y]} : () -> ()
    return
  }
}

// -----

module attributes {ipu.target = "m2000"} {
  func.func @partition_across_ipus(%a: tensor<8x4xf32>, %b: tensor<4x6xf32>) -> tensor<8x6xf32> {
    // expected-error @+1 {{'ipu.matmul' op 'ipu.tiles' spans IPUs 1..2 (tiles 2943..2944, 1472 per IPU on m2000): a vertex touches only its own IPU's memory}}
    %c = "ipu.matmul"(%a, %b) {ipu.partition = array<i64: 4, 6, 4>, ipu.tiles = array<i64: 2943, 2, 1, 1, 0, 1, 0>} : (tensor<8x4xf32>, tensor<4x6xf32>) -> tensor<8x6xf32>
    return %c : tensor<8x6xf32>
  }
}

// -----

// A sync is internal, external or global (IRDL).
// expected-error @below {{'"everywhere"' does not satisfy the constraint}}
"ipu.sync"() {kind = "everywhere"} : () -> ()
