// The verifier's rules for the ring of an `ipu.ring_all_reduce` (L3): by replica, the IPU holding
// its copy; distinct IPUs of the target, the first the tensor's own. One line each.
// RUN: ipu-opt %s --split-input-file --verify-diagnostics

module attributes {ipu.target = "m2000"} {
  "ipu.buffer"() {sym_name = "g", type = memref<4xf32>, tiles = array<i64: 1472, 16, 1>} : () -> ()
  "ipu.buffer"() {sym_name = "r", type = memref<4xf32>, tiles = array<i64: 1472, 16, 1>} : () -> ()
  func.func @not_the_tensors_ipu() {
    // expected-error @+1 {{'ipu.ring_all_reduce' op expects 'ring' to begin with IPU 1, which holds the tensor (replica 0's), got [0, 2]}}
    "ipu.ring_all_reduce"() {source = @g, dest = @r, type = tensor<64xf32>, mapping = {kind = "linear", grain = 4 : i64, tiles = array<i64: 1472, 16, 1>},
                             replicas = 2 : i64, ring = array<i64: 0, 2>, reduction = "mean"} : () -> ()
    return
  }
}

// -----

module attributes {ipu.target = "m2000"} {
  "ipu.buffer"() {sym_name = "g", type = memref<4xf32>, tiles = array<i64: 1472, 16, 1>} : () -> ()
  "ipu.buffer"() {sym_name = "r", type = memref<4xf32>, tiles = array<i64: 1472, 16, 1>} : () -> ()
  func.func @outside_the_target() {
    // expected-error @+1 {{'ipu.ring_all_reduce' op expects 'ring' to list 2 distinct IPUs of target 'm2000', one a replica, got [1, 5]}}
    "ipu.ring_all_reduce"() {source = @g, dest = @r, type = tensor<64xf32>, mapping = {kind = "linear", grain = 4 : i64, tiles = array<i64: 1472, 16, 1>},
                             replicas = 2 : i64, ring = array<i64: 1, 5>, reduction = "mean"} : () -> ()
    return
  }
}

// -----

module attributes {ipu.target = "m2000"} {
  "ipu.buffer"() {sym_name = "g", type = memref<4xf32>, tiles = array<i64: 1472, 16, 1>} : () -> ()
  "ipu.buffer"() {sym_name = "r", type = memref<4xf32>, tiles = array<i64: 1472, 16, 1>} : () -> ()
  func.func @one_per_replica() {
    // expected-error @+1 {{'ipu.ring_all_reduce' op expects 'ring' to list 2 distinct IPUs of target 'm2000', one a replica, got [1, 3, 0, 2]}}
    "ipu.ring_all_reduce"() {source = @g, dest = @r, type = tensor<64xf32>, mapping = {kind = "linear", grain = 4 : i64, tiles = array<i64: 1472, 16, 1>},
                             replicas = 2 : i64, ring = array<i64: 1, 3, 0, 2>, reduction = "mean"} : () -> ()
    return
  }
}
