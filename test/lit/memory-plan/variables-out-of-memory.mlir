// RUN: not ipu-opt %s -p 'builtin.module(ipu-memory-plan)' 2>&1 | FileCheck %s

// A step that does not fit: the error names the tile, its bytes, the device variables there
// (kept for the whole program) and the activations live at its fullest superstep.

// CHECK: variables-out-of-memory.mlir:[[@LINE+5]]:3: error: Out of memory on tile 0: 72400 bytes used but tiles only have 65536 bytes; largest buffers there: @w (40000 B, live ops 0-5,
// CHECK-SAME: ; device variables there: 40000 B in 1: 'param:w' (@w, 40000 B)
// CHECK-SAME: ; activations and inputs live at superstep 1: 32400 B in 3: @g (16000 B, live op 2, placed by the op at {{.*}}variables-out-of-memory.mlir:14:3),
// CHECK-SAME: @h (16000 B, live op 3, placed by the op at {{.*}}variables-out-of-memory.mlir:15:3), @x (400 B, live ops 0-3, placed by the op at {{.*}}variables-out-of-memory.mlir:13:3)
module attributes {ipu.target = "tiny"} {
  "ipu.buffer"() {sym_name = "w", tiles = array<i64: 0, 1, 1>, type = memref<10000xf32>} : () -> ()
  "ipu.variable"() {name = "param:w", buffer = @w, type = tensor<10000xf32>, mapping = {grain = 10000 : i64, kind = "linear", tiles = array<i64: 0, 1, 1>}} : () -> ()
  "ipu.buffer"() {sym_name = "x", tiles = array<i64: 0, 1, 1>, type = memref<100xf32>} : () -> ()
  "ipu.buffer"() {sym_name = "g", tiles = array<i64: 0, 1, 1>, type = memref<4000xf32>} : () -> ()
  "ipu.buffer"() {sym_name = "h", tiles = array<i64: 0, 1, 1>, type = memref<4000xf32>} : () -> ()
  func.func @step(%arg0: tensor<100xf32>) attributes {ipu.program} {
    "ipu.host_to_device"(%arg0) {buffer = @x, mapping = {grain = 100 : i64, kind = "linear", tiles = array<i64: 0, 1, 1>}} : (tensor<100xf32>) -> ()
    "ipu.sync"() {kind = "external"} : () -> ()
    "ipu.execute"() {compute_set = @forward} : () -> ()
    "ipu.execute"() {compute_set = @backward} : () -> ()
    "ipu.sync"() {kind = "internal"} : () -> ()
    return
  }
  func.func private @forward() attributes {ipu.compute_set} {
    "ipu.vertex_group"() {codelet = @id, inputs = [@x], outputs = [@g], tiles = array<i64: 0, 1, 1>} : () -> ()
    return
  }
  func.func private @backward() attributes {ipu.compute_set} {
    "ipu.vertex_group"() {codelet = @id, inputs = [@x], outputs = [@h], tiles = array<i64: 0, 1, 1>} : () -> ()
    return
  }
  func.func private @id(%arg0: tensor<100xf32>) -> tensor<100xf32> attributes {ipu.codelet} {
    return %arg0 : tensor<100xf32>
  }
}
