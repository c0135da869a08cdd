// RUN: ipu-opt %s --split-input-file --verify-diagnostics -p 'builtin.module(ipu-memory-plan)'
// RUN: not ipu-opt %s --split-input-file -p 'builtin.module(ipu-memory-plan{reuse=false})' 2>&1 | FileCheck %s --check-prefix=NOREUSE

// Poplar's compile-time error when a tile's buffers do not fit in its 65536 bytes (tiny),
// at the largest buffer on the worst tile.

// -----

// All three are live together; only tile 3 holds all of them: 40000 + 24000 + 4000 bytes.

module attributes {ipu.target = "tiny"} {
  // expected-error-re@+2 {{Out of memory on tile 3: 68000 bytes used but tiles only have 65536 bytes; largest buffers there: @big (40000 B, live ops 0-4, placed by the op at {{.*}}out-of-memory.mlir:{{[0-9]+}}:3), @mid (24000 B, live ops 1-5, placed by the op at {{.*}}out-of-memory.mlir:{{[0-9]+}}:3), @small (4000 B, live ops 2-6, placed by the op at {{.*}}out-of-memory.mlir:{{[0-9]+}}:3)}}
  // NOREUSE: out-of-memory.mlir:[[@LINE+1]]:3: error: Out of memory on tile 3: 68000 bytes used but tiles only have 65536 bytes; largest buffers there: @big (40000 B, live ops 0-4, placed by the op at {{.*}}out-of-memory.mlir:{{[0-9]+}}:3), @mid (24000 B, live ops 1-5, placed by the op at {{.*}}out-of-memory.mlir:{{[0-9]+}}:3), @small (4000 B, live ops 2-6, placed by the op at {{.*}}out-of-memory.mlir:{{[0-9]+}}:3)
  "ipu.buffer"() {sym_name = "big", tiles = array<i64: 0, 16, 1>, type = memref<10000xf32>} : () -> ()
  "ipu.buffer"() {sym_name = "mid", tiles = array<i64: 2, 4, 1>, type = memref<6000xf32>} : () -> ()
  "ipu.buffer"() {sym_name = "small", tiles = array<i64: 3, 1, 1>, type = memref<1000xf32>} : () -> ()
  func.func @three(%a: tensor<160000xf32>, %b: tensor<24000xf32>, %c: tensor<1000xf32>) -> (tensor<160000xf32>, tensor<24000xf32>, tensor<1000xf32>) attributes {ipu.program} {
    "ipu.host_to_device"(%a) {buffer = @big, mapping = {grain = 10000 : i64, kind = "linear", tiles = array<i64: 0, 16, 1>}} : (tensor<160000xf32>) -> ()
    "ipu.host_to_device"(%b) {buffer = @mid, mapping = {grain = 6000 : i64, kind = "linear", tiles = array<i64: 2, 4, 1>}} : (tensor<24000xf32>) -> ()
    "ipu.host_to_device"(%c) {buffer = @small, mapping = {grain = 1000 : i64, kind = "linear", tiles = array<i64: 3, 1, 1>}} : (tensor<1000xf32>) -> ()
    "ipu.sync"() {kind = "external"} : () -> ()
    %0 = "ipu.device_to_host"() {buffer = @big, mapping = {grain = 10000 : i64, kind = "linear", tiles = array<i64: 0, 16, 1>}} : () -> tensor<160000xf32>
    %1 = "ipu.device_to_host"() {buffer = @mid, mapping = {grain = 6000 : i64, kind = "linear", tiles = array<i64: 2, 4, 1>}} : () -> tensor<24000xf32>
    %2 = "ipu.device_to_host"() {buffer = @small, mapping = {grain = 1000 : i64, kind = "linear", tiles = array<i64: 3, 1, 1>}} : () -> tensor<1000xf32>
    return %0, %1, %2 : tensor<160000xf32>, tensor<24000xf32>, tensor<1000xf32>
  }
}

// -----

// Every tile overflows by the same amount: the first is named, and the count of them.

module attributes {ipu.target = "tiny"} {
  "ipu.buffer"() {sym_name = "p", tiles = array<i64: 0, 16, 1>, type = memref<7500xf32>} : () -> ()
  // expected-error-re@+2 {{Out of memory on tile 0: 70000 bytes used but tiles only have 65536 bytes; largest buffers there: @q (40000 B, live ops 1-3, placed by the op at {{.*}}out-of-memory.mlir:{{[0-9]+}}:3), @p (30000 B, live ops 0-4, placed by the op at {{.*}}out-of-memory.mlir:{{[0-9]+}}:3); 16 tiles are out of memory, tile 0 is the worst}}
  // NOREUSE: out-of-memory.mlir:[[@LINE+1]]:3: error: Out of memory on tile 0: 70000 bytes used but tiles only have 65536 bytes; largest buffers there: @q (40000 B, live ops 1-3, placed by the op at {{.*}}out-of-memory.mlir:{{[0-9]+}}:3), @p (30000 B, live ops 0-4, placed by the op at {{.*}}out-of-memory.mlir:{{[0-9]+}}:3); 16 tiles are out of memory, tile 0 is the worst
  "ipu.buffer"() {sym_name = "q", tiles = array<i64: 0, 16, 1>, type = memref<10000xf32>} : () -> ()
  func.func @everywhere(%a: tensor<120000xf32>, %b: tensor<160000xf32>) -> (tensor<120000xf32>, tensor<160000xf32>) attributes {ipu.program} {
    "ipu.host_to_device"(%a) {buffer = @p, mapping = {grain = 7500 : i64, kind = "linear", tiles = array<i64: 0, 16, 1>}} : (tensor<120000xf32>) -> ()
    "ipu.host_to_device"(%b) {buffer = @q, mapping = {grain = 10000 : i64, kind = "linear", tiles = array<i64: 0, 16, 1>}} : (tensor<160000xf32>) -> ()
    "ipu.sync"() {kind = "external"} : () -> ()
    %1 = "ipu.device_to_host"() {buffer = @q, mapping = {grain = 10000 : i64, kind = "linear", tiles = array<i64: 0, 16, 1>}} : () -> tensor<160000xf32>
    %0 = "ipu.device_to_host"() {buffer = @p, mapping = {grain = 7500 : i64, kind = "linear", tiles = array<i64: 0, 16, 1>}} : () -> tensor<120000xf32>
    return %0, %1 : tensor<120000xf32>, tensor<160000xf32>
  }
}

// -----

// Two 40000-byte buffers one after the other fit only because @second reuses @first's bytes:
// no error here, but with reuse=false the tile needs 80000 bytes.

module attributes {ipu.target = "tiny"} {
  // NOREUSE: out-of-memory.mlir:[[@LINE+1]]:3: error: Out of memory on tile 0: 80000 bytes used but tiles only have 65536 bytes; largest buffers there: @first (40000 B, live ops 0-2, placed by the op at {{.*}}out-of-memory.mlir:{{[0-9]+}}:3), @second (40000 B, live ops 4-6, placed by the op at {{.*}}out-of-memory.mlir:{{[0-9]+}}:3); 16 tiles are out of memory, tile 0 is the worst
  "ipu.buffer"() {sym_name = "first", tiles = array<i64: 0, 16, 1>, type = memref<10000xf32>} : () -> ()
  "ipu.buffer"() {sym_name = "second", tiles = array<i64: 0, 16, 1>, type = memref<10000xf32>} : () -> ()
  func.func @one_after_the_other(%a: tensor<160000xf32>, %b: tensor<160000xf32>) -> (tensor<160000xf32>, tensor<160000xf32>) attributes {ipu.program} {
    "ipu.host_to_device"(%a) {buffer = @first, mapping = {grain = 10000 : i64, kind = "linear", tiles = array<i64: 0, 16, 1>}} : (tensor<160000xf32>) -> ()
    "ipu.sync"() {kind = "external"} : () -> ()
    %0 = "ipu.device_to_host"() {buffer = @first, mapping = {grain = 10000 : i64, kind = "linear", tiles = array<i64: 0, 16, 1>}} : () -> tensor<160000xf32>
    "ipu.sync"() {kind = "external"} : () -> ()
    "ipu.host_to_device"(%b) {buffer = @second, mapping = {grain = 10000 : i64, kind = "linear", tiles = array<i64: 0, 16, 1>}} : (tensor<160000xf32>) -> ()
    "ipu.sync"() {kind = "external"} : () -> ()
    %1 = "ipu.device_to_host"() {buffer = @second, mapping = {grain = 10000 : i64, kind = "linear", tiles = array<i64: 0, 16, 1>}} : () -> tensor<160000xf32>
    return %0, %1 : tensor<160000xf32>, tensor<160000xf32>
  }
}

// -----

// Live data would fit, but offsets cannot be packed: @a, @b and @c meet pairwise (tiles
// {0, 1}, {0, 2}, {1, 2}), so they need three disjoint byte ranges, 72000 bytes, though no
// tile holds more than two of them. The message says so.

module attributes {ipu.target = "tiny"} {
  // expected-error-re@+1 {{Out of memory on tile 0: 72000 bytes used but tiles only have 65536 bytes; largest buffers there: @a (28000 B, live ops 0-4, placed by the op at {{.*}}out-of-memory.mlir:{{[0-9]+}}:3), @b (16000 B, live ops 1-5, placed by the op at {{.*}}out-of-memory.mlir:{{[0-9]+}}:3) (at most 44000 bytes are live at once there: buffers' offsets, shared by all their tiles, leave gaps); 2 tiles are out of memory, tile 0 is the worst}}
  "ipu.buffer"() {sym_name = "a", tiles = array<i64: 0, 2, 1>, type = memref<7000xf32>} : () -> ()
  "ipu.buffer"() {sym_name = "b", tiles = array<i64: 0, 2, 2>, type = memref<4000xf32>} : () -> ()
  "ipu.buffer"() {sym_name = "c", tiles = array<i64: 1, 2, 1>, type = memref<7000xf32>} : () -> ()
  func.func @triangle(%a: tensor<14000xf32>, %b: tensor<8000xf32>, %c: tensor<14000xf32>) -> (tensor<14000xf32>, tensor<8000xf32>, tensor<14000xf32>) attributes {ipu.program} {
    "ipu.host_to_device"(%a) {buffer = @a, mapping = {grain = 7000 : i64, kind = "linear", tiles = array<i64: 0, 2, 1>}} : (tensor<14000xf32>) -> ()
    "ipu.host_to_device"(%b) {buffer = @b, mapping = {grain = 4000 : i64, kind = "linear", tiles = array<i64: 0, 2, 2>}} : (tensor<8000xf32>) -> ()
    "ipu.host_to_device"(%c) {buffer = @c, mapping = {grain = 7000 : i64, kind = "linear", tiles = array<i64: 1, 2, 1>}} : (tensor<14000xf32>) -> ()
    "ipu.sync"() {kind = "external"} : () -> ()
    %0 = "ipu.device_to_host"() {buffer = @a, mapping = {grain = 7000 : i64, kind = "linear", tiles = array<i64: 0, 2, 1>}} : () -> tensor<14000xf32>
    %1 = "ipu.device_to_host"() {buffer = @b, mapping = {grain = 4000 : i64, kind = "linear", tiles = array<i64: 0, 2, 2>}} : () -> tensor<8000xf32>
    %2 = "ipu.device_to_host"() {buffer = @c, mapping = {grain = 7000 : i64, kind = "linear", tiles = array<i64: 1, 2, 1>}} : () -> tensor<14000xf32>
    return %0, %1, %2 : tensor<14000xf32>, tensor<8000xf32>, tensor<14000xf32>
  }
}
