// Round trip of every ipu op, through both tools that load the one IRDL definition.
// RUN: ipu-opt %s --split-input-file | FileCheck %s
// RUN: ipu-opt %s --split-input-file | ipu-opt --split-input-file | FileCheck %s
// RUN: %mlir-opt-ipu %s --split-input-file | FileCheck %s
// RUN: %mlir-opt-ipu %s --split-input-file | ipu-opt --split-input-file | FileCheck %s

// CHECK-LABEL: func.func @l1_matmul
func.func @l1_matmul(%a: tensor<2x128x64xf32>, %b: tensor<2x64x32xf32>) -> tensor<2x128x32xf32> {
  // CHECK: "ipu.matmul"(%{{.*}}, %{{.*}}) : (tensor<2x128x64xf32>, tensor<2x64x32xf32>) -> tensor<2x128x32xf32>
  %c = "ipu.matmul"(%a, %b) : (tensor<2x128x64xf32>, tensor<2x64x32xf32>) -> tensor<2x128x32xf32>
  return %c : tensor<2x128x32xf32>
}

// Poplar's QUARTER metadata: the operands' FP8 format and a power-of-two scale of the product.
// CHECK-LABEL: func.func @l1_matmul_quarter
func.func @l1_matmul_quarter(%a: tensor<4x8xf8E4M3FNUZ>, %b: tensor<8x2xf8E4M3FNUZ>) -> tensor<4x2xf16> {
  // CHECK: "ipu.matmul"(%{{.*}}, %{{.*}}) {ipu.quarter = {format = "f143", log2_scale = -6 : i32}} : (tensor<4x8xf8E4M3FNUZ>, tensor<8x2xf8E4M3FNUZ>) -> tensor<4x2xf16>
  %c = "ipu.matmul"(%a, %b) {ipu.quarter = {format = "f143", log2_scale = -6 : i32}} : (tensor<4x8xf8E4M3FNUZ>, tensor<8x2xf8E4M3FNUZ>) -> tensor<4x2xf16>
  return %c : tensor<4x2xf16>
}

// CHECK-LABEL: func.func @l1_matmul_i8
func.func @l1_matmul_i8(%a: tensor<4x8xi8>, %b: tensor<8x2xi8>) -> tensor<4x2xi32> {
  // CHECK: "ipu.matmul"(%{{.*}}, %{{.*}}) : (tensor<4x8xi8>, tensor<8x2xi8>) -> tensor<4x2xi32>
  %c = "ipu.matmul"(%a, %b) : (tensor<4x8xi8>, tensor<8x2xi8>) -> tensor<4x2xi32>
  return %c : tensor<4x2xi32>
}

// CHECK-LABEL: func.func @l1_conv
func.func @l1_conv(%x: tensor<1x3x32x32xf32>, %w: tensor<8x3x3x3xf32>) -> tensor<1x8x16x16xf32> {
  // CHECK: "ipu.conv"(%{{.*}}, %{{.*}}) {dilations = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>}
  // CHECK-SAME: (tensor<1x3x32x32xf32>, tensor<8x3x3x3xf32>) -> tensor<1x8x16x16xf32>
  %y = "ipu.conv"(%x, %w) {strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, groups = 1 : i64} : (tensor<1x3x32x32xf32>, tensor<8x3x3x3xf32>) -> tensor<1x8x16x16xf32>
  return %y : tensor<1x8x16x16xf32>
}

// CHECK-LABEL: func.func @l1_depthwise_conv
func.func @l1_depthwise_conv(%x: tensor<1x8x10x10xf16>, %w: tensor<8x1x3x3xf16>) -> tensor<1x8x6x6xf16> {
  // CHECK: "ipu.conv"(%{{.*}}, %{{.*}}) {dilations = array<i64: 2, 2>, groups = 8 : i64
  %y = "ipu.conv"(%x, %w) {strides = array<i64: 1, 1>, dilations = array<i64: 2, 2>, padding = array<i64: 0, 0, 0, 0>, groups = 8 : i64} : (tensor<1x8x10x10xf16>, tensor<8x1x3x3xf16>) -> tensor<1x8x6x6xf16>
  return %y : tensor<1x8x6x6xf16>
}

// CHECK-LABEL: func.func @l2_mapped
func.func @l2_mapped(%a: tensor<64x64xf32> {ipu.mapping = {kind = "block", block = array<i64: 16, 64>, tiles = array<i64: 0, 4, 1, 1, 0>}}) -> tensor<64x64xf32> {
  // CHECK: "ipu.exchange"(%{{.*}}) {mapping = {block = array<i64: 64, 16>, kind = "block", tiles = array<i64: 4, 1, 0, 4, 1>}} : (tensor<64x64xf32>) -> tensor<64x64xf32>
  %b = "ipu.exchange"(%a) {mapping = {kind = "block", block = array<i64: 64, 16>, tiles = array<i64: 4, 1, 0, 4, 1>}} : (tensor<64x64xf32>) -> tensor<64x64xf32>
  // CHECK: "ipu.exchange"(%{{.*}}) {mapping = {grain = 8 : i64, kind = "linear", tiles = array<i64: 0, 16, 1>}}
  %c = "ipu.exchange"(%b) {mapping = {kind = "linear", grain = 8 : i64, tiles = array<i64: 0, 16, 1>}} : (tensor<64x64xf32>) -> tensor<64x64xf32>
  // CHECK: "ipu.exchange"(%{{.*}}) {mapping = {intervals = array<i64: 0, 4000, 3, 4000, 4096, 7>, kind = "intervals"}}
  %d = "ipu.exchange"(%c) {mapping = {kind = "intervals", intervals = array<i64: 0, 4000, 3, 4000, 4096, 7>}} : (tensor<64x64xf32>) -> tensor<64x64xf32>
  // CHECK: arith.addf %{{.*}}, %{{.*}} {ipu.mapping = {grain = 64 : i64, kind = "linear", tiles = array<i64: 0, 64, 1>}} : tensor<64x64xf32>
  %e = arith.addf %d, %d {ipu.mapping = {kind = "linear", grain = 64 : i64, tiles = array<i64: 0, 64, 1>}} : tensor<64x64xf32>
  return %e : tensor<64x64xf32>
}

// -----

// An L3 program: relu of 1,024 floats on the 16 tiles of the tiny target.
module attributes {ipu.target = "tiny"} {
  // CHECK: "ipu.buffer"() {offset = 0 : i64, sym_name = "x", tiles = array<i64: 0, 16, 1>, type = memref<64xf32>} : () -> ()
  "ipu.buffer"() {sym_name = "x", type = memref<64xf32>, tiles = array<i64: 0, 16, 1>, offset = 0 : i64} : () -> ()
  // CHECK: "ipu.buffer"() {offset = 256 : i64, sym_name = "y"
  "ipu.buffer"() {sym_name = "y", type = memref<64xf32>, tiles = array<i64: 0, 16, 1>, offset = 256 : i64} : () -> ()
  // CHECK: "ipu.buffer"() {sym_name = "sum", tiles = array<i64: 0, 1, 1>, type = memref<16xf32>}
  "ipu.buffer"() {sym_name = "sum", type = memref<16xf32>, tiles = array<i64: 0, 1, 1>} : () -> ()
  // CHECK: "ipu.buffer"() {sym_name = "flag", tiles = array<i64: 0, 1, 1>, type = memref<1xi1>}
  "ipu.buffer"() {sym_name = "flag", type = memref<1xi1>, tiles = array<i64: 0, 1, 1>} : () -> ()
  // A device variable kept in tile memory from run to run (never streamed).
  // CHECK: "ipu.buffer"() {sym_name = "scale", tiles = array<i64: 0, 16, 1>, type = memref<4xf32>}
  "ipu.buffer"() {sym_name = "scale", type = memref<4xf32>, tiles = array<i64: 0, 16, 1>} : () -> ()
  // CHECK: "ipu.variable"() {buffer = @scale, mapping = {grain = 4 : i64, kind = "linear", tiles = array<i64: 0, 16, 1>}, name = "param:scale", type = tensor<64xf32>} : () -> ()
  "ipu.variable"() {name = "param:scale", buffer = @scale, type = tensor<64xf32>, mapping = {kind = "linear", grain = 4 : i64, tiles = array<i64: 0, 16, 1>}} : () -> ()

  // CHECK-LABEL: func.func @main
  func.func @main(%arg0: tensor<1024xf32>) -> tensor<1024xf32> attributes {ipu.program} {
    // CHECK: "ipu.host_to_device"(%{{.*}}) {buffer = @x, mapping = {grain = 64 : i64, kind = "linear", tiles = array<i64: 0, 16, 1>}} : (tensor<1024xf32>) -> ()
    "ipu.host_to_device"(%arg0) {buffer = @x, mapping = {kind = "linear", grain = 64 : i64, tiles = array<i64: 0, 16, 1>}} : (tensor<1024xf32>) -> ()
    // CHECK: "ipu.sync"() {kind = "external"} : () -> ()
    "ipu.sync"() {kind = "external"} : () -> ()
    // CHECK: "ipu.execute"() {compute_set = @relu_cs} : () -> ()
    "ipu.execute"() {compute_set = @relu_cs} : () -> ()
    // CHECK: "ipu.sync"() {kind = "internal"} : () -> ()
    "ipu.sync"() {kind = "internal"} : () -> ()
    // Gather element 0 of every tile's y into tile 0's sum, one element per tile.
    // CHECK: "ipu.copy"() {dest = @sum, dst_offset = array<i64: 0, 1>, dst_tiles = array<i64: 0, 16, 0>, size = 1 : i64, source = @y, src_offset = array<i64: 0, 0>, src_tiles = array<i64: 0, 16, 1>} : () -> ()
    "ipu.copy"() {source = @y, dest = @sum, size = 1 : i64, src_tiles = array<i64: 0, 16, 1>, dst_tiles = array<i64: 0, 16, 0>, src_offset = array<i64: 0, 0>, dst_offset = array<i64: 0, 1>} : () -> ()
    // The condition of Poplar's If: a device scalar, read from the tile holding it.
    // CHECK: %[[P:.*]] = "ipu.predicate"() {buffer = @flag, tile = 0 : i64} : () -> i1
    // CHECK-NEXT: scf.if %[[P]] {
    %p = "ipu.predicate"() {buffer = @flag, tile = 0 : i64} : () -> i1
    scf.if %p {
      "ipu.sync"() {kind = "internal"} : () -> ()
    }
    "ipu.sync"() {kind = "external"} : () -> ()
    // CHECK: "ipu.device_to_host"() {buffer = @y, mapping = {grain = 64 : i64, kind = "linear", tiles = array<i64: 0, 16, 1>}} : () -> tensor<1024xf32>
    %out = "ipu.device_to_host"() {buffer = @y, mapping = {kind = "linear", grain = 64 : i64, tiles = array<i64: 0, 16, 1>}} : () -> tensor<1024xf32>
    return %out : tensor<1024xf32>
  }

  // CHECK-LABEL: func.func private @relu_cs
  // CHECK-SAME: attributes {ipu.compute_set}
  func.func private @relu_cs() attributes {ipu.compute_set} {
    // CHECK: "ipu.vertex_group"() {codelet = @relu, inputs = [@x], outputs = [@y], tiles = array<i64: 0, 16, 1>} : () -> ()
    "ipu.vertex_group"() {codelet = @relu, tiles = array<i64: 0, 16, 1>, inputs = [@x], outputs = [@y]} : () -> ()
    return
  }

  // CHECK-LABEL: func.func private @relu
  func.func private @relu(%x: tensor<64xf32>) -> tensor<64xf32> attributes {ipu.codelet} {
    %zero = arith.constant dense<0.0> : tensor<64xf32>
    %y = arith.maximumf %x, %zero : tensor<64xf32>
    return %y : tensor<64xf32>
  }
}
