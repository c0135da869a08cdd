// RUN: ipu-opt %s --split-input-file -p 'builtin.module(ipu-plan,ipu-schedule,ipu-verify)' | FileCheck %s

// Slices that only linalg.generic ops read, each dimension by a loop, are windows read in
// place (`slice_view`): no buffer and no copy of their own. The shifted slices of one tensor (a
// stencil's neighbours) are one piece of it, the union of their windows, brought once; the
// codelet takes that piece and views each window in it. The insert of the new interior into
// the carried grid, yielded in its place, writes the carried buffer itself.

// -----

// A 3-point stencil over rows, 10x64 on tiny: the generic cuts its 8 rows into 4 parts of 2,
// the grid (placed by its reader) 5 blocks of 2 rows; part j reads rows 2j .. 2j+3. The pieces,
// columns 1 .. 62, do not hold the grid's first and last columns, so the grid stays in blocks
// and each step brings the pieces.

// CHECK-LABEL: "ipu.buffer"() {sym_name = "arg0_0"
// CHECK-NOT: sym_name = "extract_slice
// CHECK-NOT: sym_name = "insert_slice
// CHECK: func.func @heat
// CHECK: scf.for
// CHECK-NEXT: "ipu.copy"() {dest = @generic_in0, {{.*}}source = @carried0
// CHECK-NEXT: "ipu.execute"() {compute_set = @generic_cs0}
// CHECK-NEXT: "ipu.sync"() {kind = "internal"}
// CHECK-NEXT: "ipu.copy"() {dest = @carried0, {{.*}}source = @generic0
// CHECK-NEXT: "ipu.sync"() {kind = "internal"}
// CHECK-NEXT: }
// CHECK: func.func private @generic_v0(%arg0: tensor<4x62xf32>) -> tensor<2x62xf32>
// CHECK-NEXT: tensor.extract_slice %arg0[0, 0] [2, 62] [1, 1]
// CHECK-NEXT: tensor.extract_slice %arg0[1, 0] [2, 62] [1, 1]
// CHECK-NEXT: tensor.extract_slice %arg0[2, 0] [2, 62] [1, 1]
// CHECK: "ipu.vertex_group"() {codelet = @generic_v0, inputs = [@generic_in0], outputs = [@generic0]

#id = affine_map<(d0, d1) -> (d0, d1)>
module attributes {ipu.target = "tiny"} {
  func.func @heat(%u0: tensor<10x64xf32>) -> tensor<10x64xf32> {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %r = scf.for %t = %c0 to %c4 step %c1 iter_args(%u = %u0) -> tensor<10x64xf32> {
      %n = tensor.extract_slice %u[0, 1] [8, 62] [1, 1] : tensor<10x64xf32> to tensor<8x62xf32>
      %c = tensor.extract_slice %u[1, 1] [8, 62] [1, 1] : tensor<10x64xf32> to tensor<8x62xf32>
      %s = tensor.extract_slice %u[2, 1] [8, 62] [1, 1] : tensor<10x64xf32> to tensor<8x62xf32>
      %e = tensor.empty() : tensor<8x62xf32>
      %v = linalg.generic {indexing_maps = [#id, #id, #id, #id], iterator_types = ["parallel", "parallel"]}
          ins(%n, %c, %s : tensor<8x62xf32>, tensor<8x62xf32>, tensor<8x62xf32>) outs(%e : tensor<8x62xf32>) {
      ^bb0(%a: f32, %b: f32, %d: f32, %o: f32):
        %x = arith.addf %a, %d : f32
        %y = arith.addf %x, %b : f32
        linalg.yield %y : f32
      } -> tensor<8x62xf32>
      %next = tensor.insert_slice %v into %u[1, 1] [8, 62] [1, 1] : tensor<8x62xf32> into tensor<10x64xf32>
      scf.yield %next : tensor<10x64xf32>
    }
    return %r : tensor<10x64xf32>
  }
}

// -----

// The same over whole rows: the pieces (rows j .. j+2 on part j), halos included, hold every
// element of the grid, and the grid is read only through them, so the carried grid is stored
// as those pieces (`halo_storage`): the generic reads it in place, with no copy before it, and
// the insert's copy of each new row goes to its own piece and to the halos of the pieces
// beside it. After the loop the grid goes back into blocks.

// CHECK-LABEL: "ipu.buffer"() {sym_name = "arg0_0", tiles = array<i64: 0, 10, 1, 1, 1>, type = memref<64xf32>}
// CHECK-NEXT: "ipu.buffer"() {sym_name = "carried0", tiles = array<i64: 1, 8, 1, 1, 1>, type = memref<192xf32>}
// CHECK-NEXT: "ipu.buffer"() {sym_name = "generic0", tiles = array<i64: 1, 8, 1, 1, 1>, type = memref<64xf32>}
// CHECK-NEXT: "ipu.buffer"() {sym_name = "carried1", tiles = array<i64: 0, 10, 1, 1, 1>, type = memref<64xf32>}
// CHECK: scf.for
// CHECK-NEXT: "ipu.execute"() {compute_set = @generic_cs0}
// CHECK-NEXT: "ipu.sync"() {kind = "internal"}
// CHECK-NEXT: "ipu.copy"() {dest = @carried0, dst_offset = array<i64: 64, 0>, dst_tiles = array<i64: 1, 8, 1>, size = 64 : i64, source = @generic0
// CHECK-NEXT: "ipu.copy"() {dest = @carried0, dst_offset = array<i64: 0, 0, 128>, dst_tiles = array<i64: 2, 7, 1, 2, -1>, size = 64 : i64, source = @generic0
// CHECK-NEXT: "ipu.sync"() {kind = "internal"}
// CHECK-NEXT: }
// CHECK-NEXT: "ipu.copy"() {dest = @carried1, {{.*}}source = @carried0
// CHECK: "ipu.device_to_host"() {buffer = @carried1
// CHECK: "ipu.vertex_group"() {codelet = @generic_v0, inputs = [@carried0], outputs = [@generic0]

#id = affine_map<(d0, d1) -> (d0, d1)>
module attributes {ipu.target = "tiny"} {
  func.func @rows(%u0: tensor<10x64xf32>) -> tensor<10x64xf32> {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %r = scf.for %t = %c0 to %c4 step %c1 iter_args(%u = %u0) -> tensor<10x64xf32> {
      %n = tensor.extract_slice %u[0, 0] [8, 64] [1, 1] : tensor<10x64xf32> to tensor<8x64xf32>
      %c = tensor.extract_slice %u[1, 0] [8, 64] [1, 1] : tensor<10x64xf32> to tensor<8x64xf32>
      %s = tensor.extract_slice %u[2, 0] [8, 64] [1, 1] : tensor<10x64xf32> to tensor<8x64xf32>
      %e = tensor.empty() : tensor<8x64xf32>
      %v = linalg.generic {indexing_maps = [#id, #id, #id, #id], iterator_types = ["parallel", "parallel"]}
          ins(%n, %c, %s : tensor<8x64xf32>, tensor<8x64xf32>, tensor<8x64xf32>) outs(%e : tensor<8x64xf32>) {
      ^bb0(%a: f32, %b: f32, %d: f32, %o: f32):
        %x = arith.addf %a, %d : f32
        %y = arith.addf %x, %b : f32
        linalg.yield %y : f32
      } -> tensor<8x64xf32>
      %next = tensor.insert_slice %v into %u[1, 0] [8, 64] [1, 1] : tensor<8x64xf32> into tensor<10x64xf32>
      scf.yield %next : tensor<10x64xf32>
    }
    return %r : tensor<10x64xf32>
  }
}

// -----

// A slice also returned is stored (a buffer, filled by a copy); the generic reads that buffer.

// CHECK-LABEL: func.func @kept
// CHECK: "ipu.copy"() {dest = @extract_slice0, {{.*}}source = @arg0_0
// CHECK: "ipu.vertex_group"() {codelet = @generic_v0, inputs = [@extract_slice0]

#id1 = affine_map<(d0) -> (d0)>
module attributes {ipu.target = "tiny"} {
  func.func @kept(%u: tensor<256xf32>) -> (tensor<128xf32>, tensor<128xf32>) {
    %a = tensor.extract_slice %u[64] [128] [1] : tensor<256xf32> to tensor<128xf32>
    %e = tensor.empty() : tensor<128xf32>
    %v = linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]}
        ins(%a : tensor<128xf32>) outs(%e : tensor<128xf32>) {
    ^bb0(%x: f32, %o: f32):
      %y = arith.addf %x, %x : f32
      linalg.yield %y : f32
    } -> tensor<128xf32>
    return %v, %a : tensor<128xf32>, tensor<128xf32>
  }
}
