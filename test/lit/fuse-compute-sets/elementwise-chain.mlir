// RUN: ipu-opt %s --split-input-file -p 'builtin.module(ipu-plan,ipu-schedule,ipu-fuse-compute-sets,ipu-verify)' | FileCheck %s

// exp, then bias + ReLU, on the same 14 tiles: one compute set whose codelets run both
// bodies; the intermediate buffer is gone, and the bias broadcast moves before the compute.

#id = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>
module attributes {ipu.target = "tiny"} {
  // CHECK-NOT: sym_name = "generic0"
  // CHECK-LABEL: func.func @chain
  // CHECK: "ipu.sync"() {kind = "external"}
  // CHECK-NEXT: "ipu.copy"() {dest = @generic_in0
  // CHECK-NEXT: "ipu.execute"() {compute_set = @generic_cs0_generic_cs1}
  // CHECK-NEXT: "ipu.sync"() {kind = "internal"}
  // CHECK-NEXT: "ipu.sync"() {kind = "external"}
  // CHECK-NOT: ipu.execute
  // CHECK-LABEL: func.func private @generic_cs0_generic_cs1()
  // CHECK-NEXT: "ipu.vertex_group"() {codelet = @[[V0:generic_v0_generic_v2]], inputs = [@arg0_0, @generic_in0], outputs = [@generic1], tiles = array<i64: 0, 13, 1, 1, 0>}
  // CHECK-NEXT: "ipu.vertex_group"() {codelet = @[[V1:generic_v1_generic_v3]], inputs = [@arg0_0, @generic_in0], outputs = [@generic1], tiles = array<i64: 13, 1, 1, 1, 0>}
  // CHECK: func.func private @[[V0]](%arg0: tensor<3x33xf32>, %arg1: tensor<33xf32>) -> tensor<3x33xf32>
  // CHECK: %[[E:.*]] = linalg.generic {{.*}} ins(%arg0 : tensor<3x33xf32>)
  // CHECK: math.exp
  // CHECK: linalg.generic {{.*}} ins(%[[E]], %arg1 : tensor<3x33xf32>, tensor<33xf32>)
  // CHECK: arith.maximumf
  func.func @chain(%x: tensor<40x33xf32>) -> tensor<40x33xf32> {
    %zero = arith.constant 0.0 : f32
    %b = arith.constant dense<0.5> : tensor<33xf32>
    %empty = tensor.empty() : tensor<40x33xf32>
    %y = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<40x33xf32>) outs(%empty : tensor<40x33xf32>) {
    ^bb0(%a: f32, %o: f32):
      %s = math.exp %a : f32
      linalg.yield %s : f32
    } -> tensor<40x33xf32>
    %r = linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]} ins(%y, %b : tensor<40x33xf32>, tensor<33xf32>) outs(%empty : tensor<40x33xf32>) {
    ^bb0(%a: f32, %c: f32, %o: f32):
      %s = arith.addf %a, %c : f32
      %t = arith.maximumf %s, %zero : f32
      linalg.yield %t : f32
    } -> tensor<40x33xf32>
    return %r : tensor<40x33xf32>
  }
}

// -----

// The intermediate is also a result: it must stay in memory, so nothing fuses.

#id = affine_map<(d0) -> (d0)>
module attributes {ipu.target = "tiny"} {
  // CHECK-LABEL: func.func @kept
  // CHECK: "ipu.execute"() {compute_set = @generic_cs0}
  // CHECK: "ipu.execute"() {compute_set = @generic_cs1}
  func.func @kept(%x: tensor<1024xf32>) -> (tensor<1024xf32>, tensor<1024xf32>) {
    %empty = tensor.empty() : tensor<1024xf32>
    %y = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%x : tensor<1024xf32>) outs(%empty : tensor<1024xf32>) {
    ^bb0(%a: f32, %o: f32):
      %s = math.exp %a : f32
      linalg.yield %s : f32
    } -> tensor<1024xf32>
    %z = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%y : tensor<1024xf32>) outs(%empty : tensor<1024xf32>) {
    ^bb0(%a: f32, %o: f32):
      %s = math.sqrt %a : f32
      linalg.yield %s : f32
    } -> tensor<1024xf32>
    return %y, %z : tensor<1024xf32>, tensor<1024xf32>
  }
}
