// RUN: ipu-opt %s --split-input-file -p 'builtin.module(ipu-plan,ipu-schedule,ipu-merge-supersteps,ipu-verify)' | FileCheck %s

// Two independent element-wise ops of 256 elements use 4 tiles each (grain 64); the planner
// puts them on tiles 0..3 and 4..7, so they share one superstep.

#id = affine_map<(d0) -> (d0)>
module attributes {ipu.target = "tiny"} {
  // CHECK-LABEL: func.func @independent
  // CHECK: "ipu.sync"() {kind = "external"}
  // CHECK-NEXT: "ipu.execute"() {compute_set = @generic_cs0_generic_cs1}
  // CHECK-NEXT: "ipu.sync"() {kind = "internal"}
  // CHECK-NEXT: "ipu.sync"() {kind = "external"}
  // CHECK-LABEL: func.func private @generic_cs0_generic_cs1()
  // CHECK-NEXT: "ipu.vertex_group"() {codelet = @generic_v0, inputs = [@arg0_0], outputs = [@generic0], tiles = array<i64: 0, 4, 1>}
  // CHECK-NEXT: "ipu.vertex_group"() {codelet = @generic_v1, inputs = [@arg1_0], outputs = [@generic1], tiles = array<i64: 4, 4, 1>}
  func.func @independent(%x: tensor<256xf32>, %y: tensor<256xf32>) -> (tensor<256xf32>, tensor<256xf32>) {
    %e = tensor.empty() : tensor<256xf32>
    %a = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%x : tensor<256xf32>) outs(%e : tensor<256xf32>) {
    ^bb0(%v: f32, %o: f32):
      %s = math.exp %v : f32
      linalg.yield %s : f32
    } -> tensor<256xf32>
    %b = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%y : tensor<256xf32>) outs(%e : tensor<256xf32>) {
    ^bb0(%v: f32, %o: f32):
      %s = math.sqrt %v : f32
      linalg.yield %s : f32
    } -> tensor<256xf32>
    return %a, %b : tensor<256xf32>, tensor<256xf32>
  }
}

// -----

// The second op reads the first one's result: two supersteps.

#id = affine_map<(d0) -> (d0)>
module attributes {ipu.target = "tiny"} {
  // CHECK-LABEL: func.func @dependent
  // CHECK: "ipu.execute"() {compute_set = @generic_cs0}
  // CHECK: "ipu.execute"() {compute_set = @generic_cs1}
  func.func @dependent(%x: tensor<256xf32>) -> (tensor<256xf32>, tensor<256xf32>) {
    %e = tensor.empty() : tensor<256xf32>
    %a = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%x : tensor<256xf32>) outs(%e : tensor<256xf32>) {
    ^bb0(%v: f32, %o: f32):
      %s = math.exp %v : f32
      linalg.yield %s : f32
    } -> tensor<256xf32>
    %b = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%a : tensor<256xf32>) outs(%e : tensor<256xf32>) {
    ^bb0(%v: f32, %o: f32):
      %s = math.sqrt %v : f32
      linalg.yield %s : f32
    } -> tensor<256xf32>
    return %a, %b : tensor<256xf32>, tensor<256xf32>
  }
}
