// RUN: ipu-opt %s -p 'builtin.module(ipu-memory-plan{report=-})' 2>%t.report | FileCheck %s
// RUN: FileCheck %s --check-prefix=REPORT < %t.report

// The chain of reuse.mlir with @x a device variable (ipu.variable): the host writes it once,
// every run reads it, so its bytes are kept for the whole program and @t, which took @x's
// bytes when @x was an input, gets bytes of its own.

module attributes {ipu.target = "tiny"} {
  // CHECK: "ipu.buffer"() {offset = 0 : i64, sym_name = "x", tiles = array<i64: 0, 16, 1>, type = memref<64xf32>}
  // CHECK: "ipu.buffer"() {offset = 256 : i64, sym_name = "y"
  // CHECK-NEXT: "ipu.buffer"() {offset = 512 : i64, sym_name = "t"
  // REPORT: @x (256 B, live ops 0-6, at 0)
  "ipu.buffer"() {sym_name = "x", tiles = array<i64: 0, 16, 1>, type = memref<64xf32>} : () -> ()
  "ipu.variable"() {name = "param:x", buffer = @x, type = tensor<1024xf32>, mapping = {grain = 64 : i64, kind = "linear", tiles = array<i64: 0, 16, 1>}} : () -> ()
  "ipu.buffer"() {sym_name = "y", tiles = array<i64: 0, 16, 1>, type = memref<64xf32>} : () -> ()
  "ipu.buffer"() {sym_name = "t", tiles = array<i64: 0, 16, 1>, type = memref<64xf32>} : () -> ()
  func.func @chain() -> tensor<1024xf32> attributes {ipu.program} {
    "ipu.sync"() {kind = "external"} : () -> ()
    "ipu.execute"() {compute_set = @x_to_y} : () -> ()
    "ipu.sync"() {kind = "internal"} : () -> ()
    "ipu.execute"() {compute_set = @y_to_t} : () -> ()
    "ipu.sync"() {kind = "external"} : () -> ()
    %0 = "ipu.device_to_host"() {buffer = @t, mapping = {grain = 64 : i64, kind = "linear", tiles = array<i64: 0, 16, 1>}} : () -> tensor<1024xf32>
    return %0 : tensor<1024xf32>
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
