// RUN: ipu-opt %s -p 'builtin.module(ipu-plan,ipu-schedule,ipu-verify)' | FileCheck %s
// RUN: ipu-opt %s -p 'builtin.module(ipu-plan,ipu-schedule)' | %mlir-opt-ipu > /dev/null

// A bias-add + ReLU on 40x33 over 14 tiles of `tiny`: 13 tiles hold 3 rows and the last one
// row, so there are two vertex groups, each with a codelet on its own shape, reading views of
// the same buffers. The inputs arrive where the op reads them; the bias, needed whole on
// every tile, arrives on tile 0 and is broadcast to the 14 tiles by one copy.

#map = affine_map<(d0, d1) -> (d0, d1)>
#map1 = affine_map<(d0, d1) -> (d1)>
module attributes {ipu.target = "tiny"} {
  func.func @bias_relu(%a: tensor<40x33xf32>, %b: tensor<33xf32>) -> tensor<40x33xf32> {
    %c = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<40x33xf32>
    %r = linalg.generic {indexing_maps = [#map, #map1, #map], iterator_types = ["parallel", "parallel"]} ins(%a, %b : tensor<40x33xf32>, tensor<33xf32>) outs(%e : tensor<40x33xf32>) {
    ^bb0(%x: f32, %y: f32, %o: f32):
      %s = arith.addf %x, %y : f32
      %t = arith.maximumf %s, %c : f32
      linalg.yield %t : f32
    } -> tensor<40x33xf32>
    return %r : tensor<40x33xf32>
  }
}

// CHECK-DAG: "ipu.buffer"() {sym_name = "[[A:arg0_0]]", tiles = array<i64: 0, 14, 1, 1, 0>, type = memref<99xf32>}
// CHECK-DAG: "ipu.buffer"() {sym_name = "[[B:arg1_0]]", tiles = array<i64: 0, 1, 0>, type = memref<33xf32>}
// CHECK-DAG: "ipu.buffer"() {sym_name = "[[BIAS:generic_in0]]", tiles = array<i64: 0, 1, 0, 14, 1>, type = memref<33xf32>}
// CHECK-DAG: "ipu.buffer"() {sym_name = "[[R:generic0]]", tiles = array<i64: 0, 14, 1, 1, 0>, type = memref<99xf32>}

// CHECK-LABEL: func.func @bias_relu
// CHECK-SAME: attributes {ipu.program}
// CHECK-NEXT: "ipu.host_to_device"(%arg0) {buffer = @[[A]]
// CHECK-NEXT: "ipu.host_to_device"(%arg1) {buffer = @[[B]]
// CHECK-NEXT: "ipu.sync"() {kind = "external"}
// CHECK-NEXT: "ipu.copy"() {dest = @[[BIAS]], dst_offset = array<i64: 0, 0>, dst_tiles = array<i64: 0, 14, 1>, size = 33 : i64, source = @[[B]], src_offset = array<i64: 0, 0>, src_tiles = array<i64: 0, 14, 0>}
// CHECK-NEXT: "ipu.execute"() {compute_set = @[[CS:generic_cs0]]}
// CHECK-NEXT: "ipu.sync"() {kind = "internal"}
// CHECK-NEXT: "ipu.sync"() {kind = "external"}
// CHECK-NEXT: "ipu.device_to_host"() {buffer = @[[R]]
// CHECK-NEXT: return

// CHECK-LABEL: func.func private @generic_v0(%arg0: tensor<3x33xf32>, %arg1: tensor<33xf32>) -> tensor<3x33xf32> attributes {ipu.codelet}
// CHECK: arith.constant 0.000000e+00 : f32
// CHECK: linalg.generic
// CHECK-LABEL: func.func private @generic_v1(%arg0: tensor<1x33xf32>, %arg1: tensor<33xf32>) -> tensor<1x33xf32>
// CHECK-LABEL: func.func private @generic_cs0() attributes {ipu.compute_set}
// CHECK-NEXT: "ipu.vertex_group"() {codelet = @generic_v0, inputs = [@[[A]], @[[BIAS]]], outputs = [@[[R]]], tiles = array<i64: 0, 13, 1, 1, 0>}
// CHECK-NEXT: "ipu.vertex_group"() {codelet = @generic_v1, inputs = [@[[A]], @[[BIAS]]], outputs = [@[[R]]], tiles = array<i64: 13, 1, 1, 1, 0>}
