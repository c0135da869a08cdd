// RUN: not ipu-opt %s -p 'builtin.module(ipu-memory-plan)' 2>&1 | FileCheck %s

// The out-of-memory error names each of the largest buffers with the op that placed it:
// ipu-schedule gives a buffer the location of the op whose result it holds (here a reshape of
// layer.py and a matmul of model.py), so the error points at the model, not at the L3 text.

// CHECK-LABEL: layer.py:20:7: error: Out of memory on tile 5: 80000 bytes used but tiles only have 65536 bytes;
// CHECK-SAME: largest buffers there: @reshape0 (50000 B, live ops 0-3, placed by the op at layer.py:20:7),
// CHECK-SAME: @matmul0 (30000 B, live ops 1-4, placed by the op at model.py:10:5)
// CHECK-NOT: tiles are out of memory

module attributes {ipu.target = "tiny"} {
  "ipu.buffer"() {sym_name = "matmul0", tiles = array<i64: 0, 16, 1>, type = memref<7500xf32>} : () -> () loc("model.py":10:5)
  "ipu.buffer"() {sym_name = "reshape0", tiles = array<i64: 5, 1, 1>, type = memref<12500xf32>} : () -> () loc("layer.py":20:7)
  func.func @crowded(%a: tensor<12500xf32>, %b: tensor<120000xf32>) -> (tensor<12500xf32>, tensor<120000xf32>) attributes {ipu.program} {
    "ipu.host_to_device"(%a) {buffer = @reshape0, mapping = {grain = 12500 : i64, kind = "linear", tiles = array<i64: 5, 1, 1>}} : (tensor<12500xf32>) -> ()
    "ipu.host_to_device"(%b) {buffer = @matmul0, mapping = {grain = 7500 : i64, kind = "linear", tiles = array<i64: 0, 16, 1>}} : (tensor<120000xf32>) -> ()
    "ipu.sync"() {kind = "external"} : () -> ()
    %0 = "ipu.device_to_host"() {buffer = @reshape0, mapping = {grain = 12500 : i64, kind = "linear", tiles = array<i64: 5, 1, 1>}} : () -> tensor<12500xf32>
    %1 = "ipu.device_to_host"() {buffer = @matmul0, mapping = {grain = 7500 : i64, kind = "linear", tiles = array<i64: 0, 16, 1>}} : () -> tensor<120000xf32>
    return %0, %1 : tensor<12500xf32>, tensor<120000xf32>
  }
}
