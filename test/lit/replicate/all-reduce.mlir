// A replicated training step: ipu-replicate keeps the program one replica's (its size does not
// grow with the replicas); ipu.all_reduce becomes ipu.ring_all_reduce between global syncs.
// RUN: ipu-opt %s --split-input-file -p 'builtin.module(ipu-replicate{replicas=4})' | FileCheck %s
// RUN: ipu-opt %s --split-input-file -p 'builtin.module(ipu-convert-to-ipu,ipu-replicate{replicas=4},ipu-plan,ipu-schedule,ipu-verify)' | FileCheck %s --check-prefix=L3

module attributes {ipu.target = "m2000"} {
  // CHECK-LABEL: func.func @sgd_step
  // L3-LABEL: func.func @sgd_step
  func.func @sgd_step(%w: tensor<64x32xf32> {ipu.resident = "param:w"}, %x: tensor<8x64xf32>, %dy: tensor<8x32xf32>)
      -> (tensor<64x32xf32> {ipu.resident = "param:w"}) {
    %xt = arith.constant dense<0.25> : tensor<64x8xf32>
    // CHECK: %[[G:.*]] = "ipu.matmul"
    // CHECK-NOT: "ipu.matmul"
    // CHECK: "ipu.all_reduce"(%[[G]]) {ipu.ipu_id = 0 : i64, ipu.ring = array<i64: 0, 1, 2, 3>, reduction = "mean", replicas = 4 : i64} : (tensor<64x32xf32>) -> tensor<64x32xf32>
    // CHECK-NOT: "ipu.all_reduce"
    // L3: "ipu.sync"() {kind = "global"}
    // L3-NEXT: "ipu.ring_all_reduce"() {dest = @all_reduce0, mapping = {{.*}}, reduction = "mean", replicas = 4 : i64, ring = array<i64: 0, 1, 2, 3>, source = @{{.*}}, type = tensor<64x32xf32>}
    // L3-NEXT: "ipu.sync"() {kind = "global"}
    %g = "ipu.matmul"(%xt, %dy) : (tensor<64x8xf32>, tensor<8x32xf32>) -> tensor<64x32xf32>
    %r = "ipu.all_reduce"(%g) {replicas = 4 : i64, reduction = "mean"} : (tensor<64x32xf32>) -> tensor<64x32xf32>
    %e = tensor.empty() : tensor<64x32xf32>
    %new = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                           iterator_types = ["parallel", "parallel"]}
        ins(%w, %r : tensor<64x32xf32>, tensor<64x32xf32>) outs(%e : tensor<64x32xf32>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %lr = arith.constant 0.1 : f32
      %s = arith.mulf %b, %lr : f32
      %d = arith.subf %a, %s : f32
      linalg.yield %d : f32
    } -> tensor<64x32xf32>
    return %new : tensor<64x32xf32>
  }
}

// -----

// With gradient accumulation the front end puts the all-reduce in an scf.if on the last
// micro-batch of each group (frontends/joint.py), so the ring runs once per update, after the
// accumulation, as GCL's does: at L3 it sits in Poplar's If, its global syncs with it.
module attributes {ipu.target = "m2000"} {
  // CHECK-LABEL: func.func @accumulated_step
  // L3-LABEL: func.func @accumulated_step
  func.func @accumulated_step(%w: tensor<64x32xf32> {ipu.resident = "param:w"}, %count: tensor<f32> {ipu.resident = "accum:count"},
                              %x: tensor<8x64xf32>, %dy: tensor<8x32xf32>)
      -> (tensor<64x32xf32> {ipu.resident = "param:w"}) {
    %xt = arith.constant dense<0.25> : tensor<64x8xf32>
    %g = "ipu.matmul"(%xt, %dy) : (tensor<64x8xf32>, tensor<8x32xf32>) -> tensor<64x32xf32>
    %n = tensor.extract %count[] : tensor<f32>
    %last = arith.constant 1.0 : f32
    %apply = arith.cmpf oeq, %n, %last : f32
    // CHECK: scf.if %{{.*}} -> (tensor<64x32xf32>) {
    // CHECK-NEXT: "ipu.all_reduce"(%{{.*}}) {ipu.ipu_id = 0 : i64, ipu.ring = array<i64: 0, 1, 2, 3>, reduction = "mean", replicas = 4 : i64}
    // CHECK-NEXT: scf.yield
    // CHECK-NEXT: } else {
    // CHECK-NOT: "ipu.all_reduce"
    // L3: %[[P:.*]] = "ipu.predicate"()
    // L3-NEXT: scf.if %[[P]] {
    // L3-NEXT: "ipu.sync"() {kind = "global"}
    // L3-NEXT: "ipu.ring_all_reduce"()
    // L3-NEXT: "ipu.sync"() {kind = "global"}
    // L3: } else {
    // L3-NOT: "ipu.ring_all_reduce"
    // L3: }
    // L3-NOT: "ipu.ring_all_reduce"
    %r = scf.if %apply -> tensor<64x32xf32> {
      %reduced = "ipu.all_reduce"(%g) {replicas = 4 : i64, reduction = "mean"} : (tensor<64x32xf32>) -> tensor<64x32xf32>
      scf.yield %reduced : tensor<64x32xf32>
    } else {
      scf.yield %g : tensor<64x32xf32>
    }
    %e = tensor.empty() : tensor<64x32xf32>
    %new = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                           iterator_types = ["parallel", "parallel"]}
        ins(%w, %r : tensor<64x32xf32>, tensor<64x32xf32>) outs(%e : tensor<64x32xf32>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %lr = arith.constant 0.1 : f32
      %s = arith.mulf %b, %lr : f32
      %d = arith.subf %a, %s : f32
      linalg.yield %d : f32
    } -> tensor<64x32xf32>
    return %new : tensor<64x32xf32>
  }
}
