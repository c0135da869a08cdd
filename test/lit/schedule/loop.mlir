// RUN: ipu-opt %s --split-input-file -p 'builtin.module(ipu-schedule,ipu-verify)' | FileCheck %s

// A loop (L2, planned) becomes an L3 scf.for (Poplar's Repeat) around its body's supersteps,
// scheduled once. The carried tensor gets a buffer of its own: the initial value is copied in
// before the loop; the result is read from it. The yielded value, in the buffer's layout and
// computed where nothing reads the old value after it (the generic reads it element for
// element where it writes), is written straight into it: no copy at the end of the body.

// CHECK-DAG: "ipu.buffer"() {sym_name = "[[X:arg0_0]]", tiles = array<i64: 0, 4, 1>, type = memref<64xf32>}
// CHECK-DAG: "ipu.buffer"() {sym_name = "[[U:carried0]]", tiles = array<i64: 0, 4, 1>, type = memref<64xf32>}
// CHECK-NOT: "ipu.buffer"() {sym_name = "generic0"
// CHECK-LABEL: func.func @main
// CHECK: "ipu.sync"() {kind = "external"}
// CHECK-NEXT: "ipu.copy"() {dest = @[[U]], {{.*}}source = @[[X]]
// CHECK-NEXT: "ipu.sync"() {kind = "internal"}
// CHECK-NEXT: %[[LB:.*]] = arith.constant 0 : index
// CHECK-NEXT: %[[UB:.*]] = arith.constant 5 : index
// CHECK-NEXT: %[[STEP:.*]] = arith.constant 1 : index
// CHECK-NEXT: scf.for %{{.*}} = %[[LB]] to %[[UB]] step %[[STEP]] {
// CHECK-NEXT: "ipu.execute"() {compute_set = @generic_cs0}
// CHECK-NEXT: "ipu.sync"() {kind = "internal"}
// CHECK-NEXT: }
// CHECK-NEXT: "ipu.sync"() {kind = "external"}
// CHECK-NEXT: "ipu.device_to_host"() {buffer = @[[U]]
// CHECK-LABEL: func.func private @generic_cs0()
// CHECK-NEXT: "ipu.vertex_group"() {codelet = @generic_v0, inputs = [@[[U]], @arg1_0], outputs = [@[[U]]]

#map = affine_map<(d0) -> (d0)>
module attributes {ipu.target = "tiny"} {
  func.func @main(%arg0: tensor<256xf32> {ipu.mapping = {block = array<i64: 64>, kind = "block", tiles = array<i64: 0, 4, 1>}}, %arg1: tensor<256xf32> {ipu.mapping = {block = array<i64: 64>, kind = "block", tiles = array<i64: 0, 4, 1>}}) -> tensor<256xf32> {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c5 = arith.constant 5 : index
    %0 = scf.for %arg2 = %c0 to %c5 step %c1 iter_args(%arg3 = %arg0) -> (tensor<256xf32>) {
      %1 = tensor.empty() : tensor<256xf32>
      %2 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel"]} ins(%arg3, %arg1 : tensor<256xf32>, tensor<256xf32>) outs(%1 : tensor<256xf32>) attrs =  {ipu.mapping = {block = array<i64: 64>, kind = "block", tiles = array<i64: 0, 4, 1>}, ipu.partition = array<i64: 64>, ipu.tiles = array<i64: 0, 4, 1>} {
      ^bb0(%in: f32, %in_0: f32, %out: f32):
        %3 = arith.addf %in, %in_0 : f32
        linalg.yield %3 : f32
      } -> tensor<256xf32>
      scf.yield %2 : tensor<256xf32>
    }
    return %0 : tensor<256xf32>
  }
}

// -----

// Carried tensors trading places, (a, b) <- (b, a + b): @carried1 is both read (for the new
// a) and written (with the new b) at the end of the body, so b is first staged in a buffer of
// its own, a superstep earlier; the yielded a + b, in a's layout, crosses tiles to b's.

// CHECK-LABEL: func.func @main
// CHECK: scf.for
// CHECK-NEXT: "ipu.copy"() {dest = @generic_in0, {{.*}}source = @carried1
// CHECK-NEXT: "ipu.execute"() {compute_set = @generic_cs0}
// CHECK-NEXT: "ipu.sync"() {kind = "internal"}
// CHECK-NEXT: "ipu.copy"() {dest = @staged0, {{.*}}source = @carried1
// CHECK-NEXT: "ipu.sync"() {kind = "internal"}
// CHECK-NEXT: "ipu.copy"() {dest = @carried0, {{.*}}source = @staged0
// CHECK-NEXT: "ipu.copy"() {dest = @carried1, {{.*}}source = @generic0
// CHECK-NEXT: "ipu.sync"() {kind = "internal"}
// CHECK-NEXT: }

#map = affine_map<(d0) -> (d0)>
module attributes {ipu.target = "tiny"} {
  func.func @main(%arg0: tensor<128xf32> {ipu.mapping = {block = array<i64: 64>, kind = "block", tiles = array<i64: 0, 2, 1>}}, %arg1: tensor<128xf32> {ipu.mapping = {block = array<i64: 64>, kind = "block", tiles = array<i64: 2, 2, 1>}}) -> (tensor<128xf32>, tensor<128xf32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c5 = arith.constant 5 : index
    %0:2 = scf.for %arg2 = %c0 to %c5 step %c1 iter_args(%arg3 = %arg0, %arg4 = %arg1) -> (tensor<128xf32>, tensor<128xf32>) {
      %1 = tensor.empty() : tensor<128xf32>
      %2 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel"]} ins(%arg3, %arg4 : tensor<128xf32>, tensor<128xf32>) outs(%1 : tensor<128xf32>) attrs =  {ipu.mapping = {block = array<i64: 64>, kind = "block", tiles = array<i64: 0, 2, 1>}, ipu.partition = array<i64: 64>, ipu.tiles = array<i64: 0, 2, 1>} {
      ^bb0(%in: f32, %in_0: f32, %out: f32):
        %3 = arith.addf %in, %in_0 : f32
        linalg.yield %3 : f32
      } -> tensor<128xf32>
      scf.yield %arg4, %2 : tensor<128xf32>, tensor<128xf32>
    }
    return %0#0, %0#1 : tensor<128xf32>, tensor<128xf32>
  }
}

// -----

// A 1-D stencil step, u + left(u) with a zero border: the halo exchange (pad, slice) repeats
// in the body; the pad's border is a constant, filled once before the loop. The slice is a
// window the generic reads in place from its piece of the pad (no buffer of its own); the
// generic, reading the old value there, writes the new one into the carried buffer.

// CHECK-LABEL: func.func @main
// CHECK: "ipu.execute"() {compute_set = @pad_cs0}
// CHECK-NEXT: "ipu.sync"() {kind = "internal"}
// CHECK-NEXT: scf.for
// CHECK-NOT: compute_set = @pad_cs
// CHECK: "ipu.copy"() {dest = @pad0, {{.*}}source = @carried0
// CHECK-NOT: @extract_slice
// CHECK: "ipu.copy"() {dest = @generic_in0, {{.*}}source = @pad0
// CHECK: "ipu.execute"() {compute_set = @generic_cs0}
// CHECK-NEXT: "ipu.sync"() {kind = "internal"}
// CHECK-NEXT: }
// CHECK-NOT: compute_set = @pad_cs
// CHECK: "ipu.vertex_group"() {codelet = @generic_v0, inputs = [@carried0, @generic_in0], outputs = [@carried0]

#map = affine_map<(d0) -> (d0)>
module attributes {ipu.target = "tiny"} {
  func.func @main(%arg0: tensor<256xf32> {ipu.mapping = {block = array<i64: 64>, kind = "block", tiles = array<i64: 0, 4, 1>}}) -> tensor<256xf32> {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c3 = arith.constant 3 : index
    %cst = arith.constant 0.000000e+00 : f32
    %0 = scf.for %arg1 = %c0 to %c3 step %c1 iter_args(%arg2 = %arg0) -> (tensor<256xf32>) {
      %padded = tensor.pad %arg2 low[1] high[1] {
      ^bb0(%arg3: index):
        tensor.yield %cst : f32
      } {ipu.mapping = {block = array<i64: 65>, kind = "block", tiles = array<i64: 4, 4, 1>}} : tensor<256xf32> to tensor<258xf32>
      %extracted_slice = tensor.extract_slice %padded[0] [256] [1] {ipu.mapping = {block = array<i64: 64>, kind = "block", tiles = array<i64: 8, 4, 1>}} : tensor<258xf32> to tensor<256xf32>
      %1 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel"]} ins(%arg2, %extracted_slice : tensor<256xf32>, tensor<256xf32>) outs(%arg2 : tensor<256xf32>) attrs =  {ipu.mapping = {block = array<i64: 64>, kind = "block", tiles = array<i64: 0, 4, 1>}, ipu.partition = array<i64: 64>, ipu.tiles = array<i64: 0, 4, 1>} {
      ^bb0(%in: f32, %in_0: f32, %out: f32):
        %2 = arith.addf %in, %in_0 : f32
        linalg.yield %2 : f32
      } -> tensor<256xf32>
      scf.yield %1 : tensor<256xf32>
    }
    return %0 : tensor<256xf32>
  }
}

// -----

// The old value read after the op computing the new one (here by a second generic, whose
// result is the loop's second carried tensor): the new value gets a buffer of its own and the
// end of the body copies it in. The second generic's result, read by nothing after it, is
// written into its carried buffer.

// CHECK-LABEL: func.func @main
// CHECK: scf.for
// CHECK-NEXT: "ipu.execute"() {compute_set = @generic_cs0}
// CHECK-NEXT: "ipu.sync"() {kind = "internal"}
// CHECK-NEXT: "ipu.execute"() {compute_set = @generic_cs1}
// CHECK-NEXT: "ipu.sync"() {kind = "internal"}
// CHECK-NEXT: "ipu.copy"() {dest = @carried0, {{.*}}source = @generic0
// CHECK-NEXT: "ipu.sync"() {kind = "internal"}
// CHECK-NEXT: }
// CHECK-LABEL: func.func private @generic_cs0()
// CHECK-NEXT: "ipu.vertex_group"() {codelet = @generic_v0, inputs = [@carried0, @arg1_0], outputs = [@generic0]
// CHECK-LABEL: func.func private @generic_cs1()
// CHECK-NEXT: "ipu.vertex_group"() {codelet = @generic_v1, inputs = [@carried0, @carried1], outputs = [@carried1]

#map = affine_map<(d0) -> (d0)>
module attributes {ipu.target = "tiny"} {
  func.func @main(%arg0: tensor<256xf32> {ipu.mapping = {block = array<i64: 64>, kind = "block", tiles = array<i64: 0, 4, 1>}}, %arg1: tensor<256xf32> {ipu.mapping = {block = array<i64: 64>, kind = "block", tiles = array<i64: 0, 4, 1>}}) -> (tensor<256xf32>, tensor<256xf32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c5 = arith.constant 5 : index
    %0:2 = scf.for %arg2 = %c0 to %c5 step %c1 iter_args(%arg3 = %arg0, %arg4 = %arg1) -> (tensor<256xf32>, tensor<256xf32>) {
      %1 = tensor.empty() : tensor<256xf32>
      %2 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel"]} ins(%arg3, %arg1 : tensor<256xf32>, tensor<256xf32>) outs(%1 : tensor<256xf32>) attrs =  {ipu.mapping = {block = array<i64: 64>, kind = "block", tiles = array<i64: 0, 4, 1>}, ipu.partition = array<i64: 64>, ipu.tiles = array<i64: 0, 4, 1>} {
      ^bb0(%in: f32, %in_0: f32, %out: f32):
        %3 = arith.addf %in, %in_0 : f32
        linalg.yield %3 : f32
      } -> tensor<256xf32>
      %4 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel"]} ins(%arg3, %arg4 : tensor<256xf32>, tensor<256xf32>) outs(%1 : tensor<256xf32>) attrs =  {ipu.mapping = {block = array<i64: 64>, kind = "block", tiles = array<i64: 0, 4, 1>}, ipu.partition = array<i64: 64>, ipu.tiles = array<i64: 0, 4, 1>} {
      ^bb0(%in: f32, %in_0: f32, %out: f32):
        %5 = arith.mulf %in, %in_0 : f32
        linalg.yield %5 : f32
      } -> tensor<256xf32>
      scf.yield %2, %4 : tensor<256xf32>, tensor<256xf32>
    }
    return %0#0, %0#1 : tensor<256xf32>, tensor<256xf32>
  }
}

// -----

// A row sum cut in four along its summed loop, accumulating into the carried tensor (its init):
// the second stage, reading the partials and the init element for element where it writes,
// writes the carried buffer itself.

// CHECK-LABEL: func.func @main
// CHECK: scf.for
// CHECK-NEXT: "ipu.execute"() {compute_set = @generic_cs0}
// CHECK-NEXT: "ipu.sync"() {kind = "internal"}
// CHECK-NEXT: "ipu.copy"() {dest = @generic_partials0, {{.*}}source = @generic_partial0
// CHECK-NEXT: "ipu.execute"() {compute_set = @generic_combine_cs0}
// CHECK-NEXT: "ipu.sync"() {kind = "internal"}
// CHECK-NEXT: }
// CHECK-LABEL: func.func private @generic_combine_cs0()
// CHECK-NEXT: "ipu.vertex_group"() {codelet = @generic_combine0, inputs = [@generic_partials0, @carried0], outputs = [@carried0]

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
module attributes {ipu.target = "tiny"} {
  func.func @main(%x: tensor<2x256xf32> {ipu.mapping = {kind = "block", block = array<i64: 1, 64>, tiles = array<i64: 0, 2, 4, 4, 1>}},
                  %init: tensor<2xf32> {ipu.mapping = {kind = "block", block = array<i64: 1>, tiles = array<i64: 0, 2, 1>}}) -> tensor<2xf32> {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c5 = arith.constant 5 : index
    %r = scf.for %i = %c0 to %c5 step %c1 iter_args(%acc0 = %init) -> (tensor<2xf32>) {
      %s = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<2x256xf32>) outs(%acc0 : tensor<2xf32>)
          attrs = {ipu.partition = array<i64: 1, 64>, ipu.tiles = array<i64: 0, 2, 4, 4, 1>,
                   ipu.mapping = {kind = "block", block = array<i64: 1>, tiles = array<i64: 0, 2, 1>}} {
      ^bb0(%in: f32, %acc: f32):
        %t = arith.addf %in, %acc : f32
        linalg.yield %t : f32
      } -> tensor<2xf32>
      scf.yield %s : tensor<2xf32>
    }
    return %r : tensor<2xf32>
  }
}

// -----

// A reduction reading the carried tensor indexed as its result (v * row sums, v read on every
// step of the summed loop): it would overwrite v while still reading it, so it writes a buffer
// of its own and the end of the body copies it in.

// CHECK-LABEL: func.func @main
// CHECK: scf.for
// CHECK-NEXT: "ipu.execute"() {compute_set = @generic_cs0}
// CHECK-NEXT: "ipu.sync"() {kind = "internal"}
// CHECK-NEXT: "ipu.copy"() {dest = @carried0, {{.*}}source = @generic0
// CHECK-NEXT: "ipu.sync"() {kind = "internal"}
// CHECK-NEXT: }
// CHECK-LABEL: func.func private @generic_cs0()
// CHECK-NEXT: "ipu.vertex_group"() {codelet = @generic_v0, inputs = [@arg0_0, @carried0, @arg2_0], outputs = [@generic0]

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
module attributes {ipu.target = "tiny"} {
  func.func @main(%x: tensor<4x64xf32> {ipu.mapping = {kind = "block", block = array<i64: 1, 64>, tiles = array<i64: 0, 4, 1, 1, 0>}},
                  %v0: tensor<4xf32> {ipu.mapping = {kind = "block", block = array<i64: 1>, tiles = array<i64: 0, 4, 1>}},
                  %z: tensor<4xf32> {ipu.mapping = {kind = "block", block = array<i64: 1>, tiles = array<i64: 0, 4, 1>}}) -> tensor<4xf32> {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c5 = arith.constant 5 : index
    %r = scf.for %i = %c0 to %c5 step %c1 iter_args(%v = %v0) -> (tensor<4xf32>) {
      %s = linalg.generic {indexing_maps = [#id, #row, #row], iterator_types = ["parallel", "reduction"]} ins(%x, %v : tensor<4x64xf32>, tensor<4xf32>) outs(%z : tensor<4xf32>)
          attrs = {ipu.partition = array<i64: 1, 64>, ipu.tiles = array<i64: 0, 4, 1, 1, 0>,
                   ipu.mapping = {kind = "block", block = array<i64: 1>, tiles = array<i64: 0, 4, 1>}} {
      ^bb0(%in: f32, %w: f32, %acc: f32):
        %p = arith.mulf %in, %w : f32
        %t = arith.addf %p, %acc : f32
        linalg.yield %t : f32
      } -> tensor<4xf32>
      scf.yield %s : tensor<4xf32>
    }
    return %r : tensor<4xf32>
  }
}
