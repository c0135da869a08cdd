// RUN: ipu-opt %s --split-input-file -p 'builtin.module(ipu-memory-plan)' | FileCheck %s

// Four buffers live at the same time. A buffer has one offset on all its tiles, but buffers
// on disjoint tiles never meet: @left (tiles 0..7) and @right (8..15) share offset 0. @middle
// (tiles 4..11) meets both and goes above them. @far (tile 15 only) meets @right alone: it
// goes above @right, at the same offset as @middle, whose tiles it does not share.

module attributes {ipu.target = "tiny"} {
  // CHECK: "ipu.buffer"() {offset = 0 : i64, sym_name = "left", tiles = array<i64: 0, 8, 1>
  // CHECK-NEXT: "ipu.buffer"() {offset = 0 : i64, sym_name = "right", tiles = array<i64: 8, 8, 1>
  // CHECK-NEXT: "ipu.buffer"() {offset = 256 : i64, sym_name = "middle", tiles = array<i64: 4, 8, 1>
  // CHECK-NEXT: "ipu.buffer"() {offset = 256 : i64, sym_name = "far", tiles = array<i64: 15, 1, 1>
  // CHECK-LABEL: func.func @together
  "ipu.buffer"() {sym_name = "left", tiles = array<i64: 0, 8, 1>, type = memref<64xf32>} : () -> ()
  "ipu.buffer"() {sym_name = "right", tiles = array<i64: 8, 8, 1>, type = memref<64xf32>} : () -> ()
  "ipu.buffer"() {sym_name = "middle", tiles = array<i64: 4, 8, 1>, type = memref<64xf32>} : () -> ()
  "ipu.buffer"() {sym_name = "far", tiles = array<i64: 15, 1, 1>, type = memref<16xf32>} : () -> ()
  func.func @together(%a: tensor<512xf32>, %b: tensor<512xf32>, %c: tensor<512xf32>, %d: tensor<16xf32>) -> (tensor<512xf32>, tensor<512xf32>, tensor<512xf32>, tensor<16xf32>) attributes {ipu.program} {
    "ipu.host_to_device"(%a) {buffer = @left, mapping = {grain = 64 : i64, kind = "linear", tiles = array<i64: 0, 8, 1>}} : (tensor<512xf32>) -> ()
    "ipu.host_to_device"(%b) {buffer = @right, mapping = {grain = 64 : i64, kind = "linear", tiles = array<i64: 8, 8, 1>}} : (tensor<512xf32>) -> ()
    "ipu.host_to_device"(%c) {buffer = @middle, mapping = {grain = 64 : i64, kind = "linear", tiles = array<i64: 4, 8, 1>}} : (tensor<512xf32>) -> ()
    "ipu.host_to_device"(%d) {buffer = @far, mapping = {grain = 16 : i64, kind = "linear", tiles = array<i64: 15, 1, 1>}} : (tensor<16xf32>) -> ()
    "ipu.sync"() {kind = "external"} : () -> ()
    %0 = "ipu.device_to_host"() {buffer = @left, mapping = {grain = 64 : i64, kind = "linear", tiles = array<i64: 0, 8, 1>}} : () -> tensor<512xf32>
    %1 = "ipu.device_to_host"() {buffer = @right, mapping = {grain = 64 : i64, kind = "linear", tiles = array<i64: 8, 8, 1>}} : () -> tensor<512xf32>
    %2 = "ipu.device_to_host"() {buffer = @middle, mapping = {grain = 64 : i64, kind = "linear", tiles = array<i64: 4, 8, 1>}} : () -> tensor<512xf32>
    %3 = "ipu.device_to_host"() {buffer = @far, mapping = {grain = 16 : i64, kind = "linear", tiles = array<i64: 15, 1, 1>}} : () -> tensor<16xf32>
    return %0, %1, %2, %3 : tensor<512xf32>, tensor<512xf32>, tensor<512xf32>, tensor<16xf32>
  }
}

// -----

// Interleaved grids: even tiles (0, 2, .., 14) and odd tiles (1, 3, .., 15) span the same
// tile range but share no tile, so they share offset 0. A 2-D grid, the 2x2 blocks at tiles
// {0, 1, 4, 5}, meets both.

module attributes {ipu.target = "tiny"} {
  // CHECK: "ipu.buffer"() {offset = 0 : i64, sym_name = "even", tiles = array<i64: 0, 8, 2>
  // CHECK-NEXT: "ipu.buffer"() {offset = 0 : i64, sym_name = "odd", tiles = array<i64: 1, 8, 2>
  // CHECK-NEXT: "ipu.buffer"() {offset = 256 : i64, sym_name = "square", tiles = array<i64: 0, 2, 4, 2, 1>
  // CHECK-LABEL: func.func @interleaved
  "ipu.buffer"() {sym_name = "even", tiles = array<i64: 0, 8, 2>, type = memref<64xf32>} : () -> ()
  "ipu.buffer"() {sym_name = "odd", tiles = array<i64: 1, 8, 2>, type = memref<64xf32>} : () -> ()
  "ipu.buffer"() {sym_name = "square", tiles = array<i64: 0, 2, 4, 2, 1>, type = memref<64xf32>} : () -> ()
  func.func @interleaved(%a: tensor<512xf32>, %b: tensor<512xf32>, %c: tensor<256xf32>) -> (tensor<512xf32>, tensor<512xf32>, tensor<256xf32>) attributes {ipu.program} {
    "ipu.host_to_device"(%a) {buffer = @even, mapping = {grain = 64 : i64, kind = "linear", tiles = array<i64: 0, 8, 2>}} : (tensor<512xf32>) -> ()
    "ipu.host_to_device"(%b) {buffer = @odd, mapping = {grain = 64 : i64, kind = "linear", tiles = array<i64: 1, 8, 2>}} : (tensor<512xf32>) -> ()
    "ipu.host_to_device"(%c) {buffer = @square, mapping = {grain = 64 : i64, kind = "linear", tiles = array<i64: 0, 2, 4, 2, 1>}} : (tensor<256xf32>) -> ()
    "ipu.sync"() {kind = "external"} : () -> ()
    %0 = "ipu.device_to_host"() {buffer = @even, mapping = {grain = 64 : i64, kind = "linear", tiles = array<i64: 0, 8, 2>}} : () -> tensor<512xf32>
    %1 = "ipu.device_to_host"() {buffer = @odd, mapping = {grain = 64 : i64, kind = "linear", tiles = array<i64: 1, 8, 2>}} : () -> tensor<512xf32>
    %2 = "ipu.device_to_host"() {buffer = @square, mapping = {grain = 64 : i64, kind = "linear", tiles = array<i64: 0, 2, 4, 2, 1>}} : () -> tensor<256xf32>
    return %0, %1, %2 : tensor<512xf32>, tensor<512xf32>, tensor<256xf32>
  }
}
