// RUN: ipu-opt %s -p 'builtin.module(ipu-memory-plan{report=-})' -o /dev/null 2>&1 | FileCheck %s
// RUN: ipu-opt %s -p 'builtin.module(ipu-memory-plan{report=%t.json})' -o /dev/null
// RUN: FileCheck %s --input-file %t.json --check-prefix=JSON
// RUN: ipu-opt %s -p 'builtin.module(ipu-memory-plan{report=%t.noreuse.json reuse=false})' -o /dev/null
// RUN: FileCheck %s --input-file %t.noreuse.json --check-prefix=NOREUSE
// RUN: not ipu-opt %s -p 'builtin.module(ipu-memory-plan{report=%t/missing/dir.json})' -o /dev/null 2>&1 | FileCheck %s --check-prefix=BADPATH

// The memory report of a chain x -> y -> t on the 16 tiles of tiny, then a gather of four
// elements of @t from each tile into @head (512 bytes) on tile 0. @t reuses @x's bytes and
// @head @y's; tile 0 also holds @head, live with @t, so it is the most loaded tile.

// CHECK:      memory plan for tiny: 16 tiles of 65536 bytes, 4 buffers, 5 supersteps, reuse on
// CHECK-NEXT: peak bytes per tile: max 768 (tile 0), mean 528 over the 16 tiles holding buffers; live at once: at most 768
// CHECK-NEXT: reuse: peak 768 bytes per tile with liveness-based reuse, 1280 without: ratio 0.600
// CHECK-NEXT: most loaded tiles:
// CHECK-NEXT:    tile     bytes      live  largest buffers
// CHECK-NEXT:       0       768       768  @head (512 B, live ops 6-9, at 256), @x (256 B, live ops 0-2, at 0), @y (256 B, live ops 2-4, at 256)
// CHECK-NEXT:       1       512       512  @x (256 B, live ops 0-2, at 0), @y (256 B, live ops 2-4, at 256), @t (256 B, live ops 4-8, at 0)
// CHECK-COUNT-3: 512       512  @x (256 B, live ops 0-2, at 0)
// CHECK-NOT: tile

// JSON:      "target": "tiny",
// JSON:      "reuse": true,
// JSON:      "peak_bytes_per_tile": {
// JSON-NEXT:   "max": 768,
// JSON-NEXT:   "max_tile": 0,
// JSON-NEXT:   "mean": 528.0,
// JSON-NEXT:   "tiles_holding_buffers": 16,
// JSON-NEXT:   "live_bound_max": 768
// JSON:      "bytes": [768, 512, 512, 512, 512, 512, 512, 512, 512, 512, 512, 512, 512, 512, 512, 512],
// JSON-NEXT: "live_bound": [768, 512, 512, 512, 512, 512, 512, 512, 512, 512, 512, 512, 512, 512, 512, 512],
// JSON-NEXT: "bytes_without_reuse": [1280, 768, 768, 768, 768, 768, 768, 768, 768, 768, 768, 768, 768, 768, 768, 768]
// JSON:      "top_tiles": [
// JSON-NEXT:   {
// JSON-NEXT:     "tile": 0,
// JSON-NEXT:     "bytes": 768,
// JSON-NEXT:     "live_bound": 768,
// JSON-NEXT:     "largest_buffers": ["head", "x", "y"]
// JSON:      "name": "t",
// JSON-NEXT: "bytes": 256,
// JSON-NEXT: "offset": 0,
// JSON-NEXT: "tiles": [0, 16, 1],
// JSON-NEXT: "num_tiles": 16,
// JSON-NEXT: "live_ops": [4, 8],
// JSON-NEXT: "live_supersteps": [2, 4]
// JSON:      "name": "head",
// JSON-NEXT: "bytes": 512,
// JSON-NEXT: "offset": 256,
// JSON:      "totals": {
// JSON-NEXT:   "peak_with_reuse": 768,
// JSON-NEXT:   "peak_without_reuse": 1280,
// JSON-NEXT:   "reuse_ratio": 0.6,
// JSON-NEXT:   "bytes_with_reuse": 8448,
// JSON-NEXT:   "bytes_without_reuse": 12800
// JSON-NEXT: },
// JSON-NEXT: "out_of_memory_tiles": 0

// With reuse=false the report describes the plan without reuse; the totals are the same.
// NOREUSE:      "reuse": false,
// NOREUSE:      "max": 1280,
// NOREUSE:      "name": "t",
// NOREUSE-NEXT: "bytes": 256,
// NOREUSE-NEXT: "offset": 512,
// NOREUSE:      "reuse_ratio": 0.6,

// BADPATH: error: cannot write the memory report '{{.*}}/missing/dir.json': No such file or directory

module attributes {ipu.target = "tiny"} {
  "ipu.buffer"() {sym_name = "x", tiles = array<i64: 0, 16, 1>, type = memref<64xf32>} : () -> ()
  "ipu.buffer"() {sym_name = "y", tiles = array<i64: 0, 16, 1>, type = memref<64xf32>} : () -> ()
  "ipu.buffer"() {sym_name = "t", tiles = array<i64: 0, 16, 1>, type = memref<64xf32>} : () -> ()
  "ipu.buffer"() {sym_name = "head", tiles = array<i64: 0, 1, 1>, type = memref<128xf32>} : () -> ()
  func.func @main(%arg0: tensor<1024xf32>) -> (tensor<1024xf32>, tensor<64xf32>) attributes {ipu.program} {
    "ipu.host_to_device"(%arg0) {buffer = @x, mapping = {grain = 64 : i64, kind = "linear", tiles = array<i64: 0, 16, 1>}} : (tensor<1024xf32>) -> ()
    "ipu.sync"() {kind = "external"} : () -> ()
    "ipu.execute"() {compute_set = @x_to_y} : () -> ()
    "ipu.sync"() {kind = "internal"} : () -> ()
    "ipu.execute"() {compute_set = @y_to_t} : () -> ()
    "ipu.sync"() {kind = "internal"} : () -> ()
    "ipu.copy"() {dest = @head, dst_offset = array<i64: 0, 4>, dst_tiles = array<i64: 0, 16, 0>, size = 4 : i64, source = @t, src_offset = array<i64: 0, 0>, src_tiles = array<i64: 0, 16, 1>} : () -> ()
    "ipu.sync"() {kind = "external"} : () -> ()
    %0 = "ipu.device_to_host"() {buffer = @t, mapping = {grain = 64 : i64, kind = "linear", tiles = array<i64: 0, 16, 1>}} : () -> tensor<1024xf32>
    %1 = "ipu.device_to_host"() {buffer = @head, mapping = {grain = 1 : i64, kind = "linear", tiles = array<i64: 0, 1, 1>}} : () -> tensor<64xf32>
    return %0, %1 : tensor<1024xf32>, tensor<64xf32>
  }
  func.func private @x_to_y() attributes {ipu.compute_set} {
    "ipu.vertex_group"() {codelet = @relu, inputs = [@x], outputs = [@y], tiles = array<i64: 0, 16, 1>} : () -> ()
    return
  }
  func.func private @y_to_t() attributes {ipu.compute_set} {
    "ipu.vertex_group"() {codelet = @relu, inputs = [@y], outputs = [@t], tiles = array<i64: 0, 16, 1>} : () -> ()
    return
  }
  func.func private @relu(%arg0: tensor<64xf32>) -> tensor<64xf32> attributes {ipu.codelet} {
    %cst = arith.constant dense<0.000000e+00> : tensor<64xf32>
    %0 = arith.maximumf %arg0, %cst : tensor<64xf32>
    return %0 : tensor<64xf32>
  }
}
