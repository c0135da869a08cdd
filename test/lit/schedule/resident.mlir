// RUN: ipu-opt %s --split-input-file -p 'builtin.module(ipu-schedule,ipu-verify)' | FileCheck %s

// Device variables (L2 arguments with `ipu.resident`) become buffers named by an
// `ipu.variable`, with no host stream: the program's signature keeps the streamed argument and
// result only. The new value of param:w is computed straight into its buffer (the generic
// reads the old value element for element where it writes, and nothing reads it after);
// hyper:lr is only read.

// CHECK: "ipu.buffer"() {sym_name = "[[W:var0]]", tiles = array<i64: 0, 4, 1>, type = memref<64xf32>}
// CHECK-NEXT: "ipu.variable"() {buffer = @[[W]], mapping = {block = array<i64: 64>, kind = "block", tiles = array<i64: 0, 4, 1>}, name = "param:w", type = tensor<256xf32>}
// CHECK-NEXT: "ipu.buffer"() {sym_name = "[[LR:var1]]", tiles = array<i64: 0, 1, 0>, type = memref<1xf32>}
// CHECK-NEXT: "ipu.variable"() {buffer = @[[LR]], {{.*}}name = "hyper:lr", type = tensor<f32>}
// CHECK-LABEL: func.func @main(%arg0: tensor<256xf32>) -> tensor<256xf32> attributes {ipu.program}
// CHECK-NOT: "ipu.host_to_device"(%{{.*}}) {buffer = @[[W]]
// CHECK-NOT: "ipu.host_to_device"(%{{.*}}) {buffer = @[[LR]]
// CHECK: "ipu.copy"() {dest = @generic_in0, {{.*}}source = @[[LR]]
// CHECK-NOT: "ipu.copy"() {dest = @[[W]]
// CHECK: %[[OUT:.*]] = "ipu.device_to_host"() {buffer = @generic0
// CHECK-NEXT: return %[[OUT]] : tensor<256xf32>
// CHECK-LABEL: func.func private @generic_cs0()
// CHECK-NEXT: "ipu.vertex_group"() {codelet = @generic_v0, inputs = [@[[W]], @generic_in0, @arg2_0], outputs = [@[[W]]]

#id = affine_map<(d0) -> (d0)>
#scalar = affine_map<(d0) -> ()>
module attributes {ipu.target = "tiny"} {
  func.func @main(%w: tensor<256xf32> {ipu.mapping = {block = array<i64: 64>, kind = "block", tiles = array<i64: 0, 4, 1>}, ipu.resident = "param:w"}, %lr: tensor<f32> {ipu.mapping = {grain = 1 : i64, kind = "linear", tiles = array<i64: 0, 1, 1>}, ipu.resident = "hyper:lr"}, %g: tensor<256xf32> {ipu.mapping = {block = array<i64: 64>, kind = "block", tiles = array<i64: 0, 4, 1>}}) -> (tensor<256xf32> {ipu.resident = "param:w"}, tensor<256xf32>) {
    %e = tensor.empty() : tensor<256xf32>
    %nw = linalg.generic {indexing_maps = [#id, #scalar, #id, #id], iterator_types = ["parallel"]} ins(%w, %lr, %g : tensor<256xf32>, tensor<f32>, tensor<256xf32>) outs(%e : tensor<256xf32>) attrs = {ipu.mapping = {block = array<i64: 64>, kind = "block", tiles = array<i64: 0, 4, 1>}, ipu.partition = array<i64: 64>, ipu.tiles = array<i64: 0, 4, 1>} {
    ^bb0(%a: f32, %l: f32, %b: f32, %o: f32):
      %m = arith.mulf %l, %b : f32
      %s = arith.subf %a, %m : f32
      linalg.yield %s : f32
    } -> tensor<256xf32>
    %sq = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%g : tensor<256xf32>) outs(%e : tensor<256xf32>) attrs = {ipu.mapping = {block = array<i64: 64>, kind = "block", tiles = array<i64: 0, 4, 1>}, ipu.partition = array<i64: 64>, ipu.tiles = array<i64: 0, 4, 1>} {
    ^bb0(%b: f32, %o: f32):
      %m = arith.mulf %b, %b : f32
      linalg.yield %m : f32
    } -> tensor<256xf32>
    return %nw, %sq : tensor<256xf32>, tensor<256xf32>
  }
}

// -----

// The old value is streamed out too: it is read after the op computing the new one, so that
// op gets its own buffer, the old value is staged a superstep before the update's copy
// overwrites the variable, and the stream reads the staged copy.

// CHECK-LABEL: func.func @main() -> tensor<256xf32> attributes {ipu.program}
// CHECK: "ipu.execute"() {compute_set = @generic_cs0}
// CHECK-NEXT: "ipu.sync"() {kind = "internal"}
// CHECK-NEXT: "ipu.copy"() {dest = @[[STAGED:staged0]], {{.*}}source = @[[W:var0]]
// CHECK-NEXT: "ipu.sync"() {kind = "internal"}
// CHECK-NEXT: "ipu.copy"() {dest = @[[W]], {{.*}}source = @generic0
// CHECK-NEXT: "ipu.sync"() {kind = "internal"}
// CHECK-NEXT: "ipu.sync"() {kind = "external"}
// CHECK-NEXT: "ipu.device_to_host"() {buffer = @[[STAGED]]

#id = affine_map<(d0) -> (d0)>
module attributes {ipu.target = "tiny"} {
  func.func @main(%w: tensor<256xf32> {ipu.mapping = {block = array<i64: 64>, kind = "block", tiles = array<i64: 0, 4, 1>}, ipu.resident = "param:w"}) -> (tensor<256xf32> {ipu.resident = "param:w"}, tensor<256xf32>) {
    %e = tensor.empty() : tensor<256xf32>
    %nw = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%w : tensor<256xf32>) outs(%e : tensor<256xf32>) attrs = {ipu.mapping = {block = array<i64: 64>, kind = "block", tiles = array<i64: 0, 4, 1>}, ipu.partition = array<i64: 64>, ipu.tiles = array<i64: 0, 4, 1>} {
    ^bb0(%a: f32, %o: f32):
      %m = arith.mulf %a, %a : f32
      linalg.yield %m : f32
    } -> tensor<256xf32>
    return %nw, %w : tensor<256xf32>, tensor<256xf32>
  }
}

// -----

// Two variables swapped: each new value is another variable's buffer, staged first so that
// no exchange phase writes a buffer it reads.

// CHECK-LABEL: func.func @main() attributes {ipu.program}
// CHECK-NEXT: "ipu.sync"() {kind = "external"}
// CHECK-NEXT: "ipu.copy"() {dest = @[[SB:staged0]], {{.*}}source = @[[B:var1]]
// CHECK-NEXT: "ipu.copy"() {dest = @[[SA:staged1]], {{.*}}source = @[[A:var0]]
// CHECK-NEXT: "ipu.sync"() {kind = "internal"}
// CHECK-NEXT: "ipu.copy"() {dest = @[[A]], {{.*}}source = @[[SB]]
// CHECK-NEXT: "ipu.copy"() {dest = @[[B]], {{.*}}source = @[[SA]]
// CHECK-NEXT: "ipu.sync"() {kind = "internal"}
// CHECK-NEXT: "ipu.sync"() {kind = "external"}
// CHECK-NEXT: return

module attributes {ipu.target = "tiny"} {
  func.func @main(%a: tensor<256xf32> {ipu.mapping = {block = array<i64: 64>, kind = "block", tiles = array<i64: 0, 4, 1>}, ipu.resident = "a"}, %b: tensor<256xf32> {ipu.mapping = {block = array<i64: 64>, kind = "block", tiles = array<i64: 4, 4, 1>}, ipu.resident = "b"}) -> (tensor<256xf32> {ipu.resident = "a"}, tensor<256xf32> {ipu.resident = "b"}) {
    return %b, %a : tensor<256xf32>, tensor<256xf32>
  }
}
