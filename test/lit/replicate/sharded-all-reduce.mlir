// RUN: ipu-opt %s -p 'builtin.module(ipu-replicate{replicas=2})' | FileCheck %s
// RUN: ipu-opt %s -p 'builtin.module(ipu-replicate{replicas=2},ipu-plan,ipu-schedule,ipu-verify)' | FileCheck %s --check-prefix=L3

// Replicas of a step sharded over 2 IPUs (2 x 2 on an m2000): each gradient's all-reduce goes to
// its gradient's IPU, those of one IPU are joined into one (flattened, concatenated, split
// again), and each ring runs over the IPUs holding that stage in the replicas: 0 and 2, 1 and 3.
module attributes {ipu.target = "m2000"} {
  // CHECK-LABEL: func.func @sharded_step
  // L3-LABEL: func.func @sharded_step
  func.func @sharded_step(%w1: tensor<16x8xf32> {ipu.resident = "param:w1"}, %b1: tensor<8xf32> {ipu.resident = "param:b1"},
                          %w2: tensor<8x4xf32> {ipu.resident = "param:w2"}, %x: tensor<4x16xf32>, %dy: tensor<4x4xf32>)
      -> (tensor<16x8xf32> {ipu.resident = "param:w1"}, tensor<8xf32> {ipu.resident = "param:b1"}, tensor<8x4xf32> {ipu.resident = "param:w2"}) {
    %xt = arith.constant {ipu.ipu_id = 0 : i64} dense<0.25> : tensor<16x4xf32>
    %ht = arith.constant {ipu.ipu_id = 1 : i64} dense<0.5> : tensor<8x4xf32>
    %dh = arith.constant {ipu.ipu_id = 0 : i64} dense<0.125> : tensor<4x8xf32>
    %g1 = "ipu.matmul"(%xt, %dh) {ipu.ipu_id = 0 : i64} : (tensor<16x4xf32>, tensor<4x8xf32>) -> tensor<16x8xf32>
    %g2 = "ipu.matmul"(%ht, %dy) {ipu.ipu_id = 1 : i64} : (tensor<8x4xf32>, tensor<4x4xf32>) -> tensor<8x4xf32>
    %z8 = arith.constant {ipu.ipu_id = 0 : i64} dense<0.0> : tensor<8xf32>
    %e8 = tensor.empty() : tensor<8xf32>
    %gb = linalg.generic {indexing_maps = [affine_map<(i, j) -> (j, i)>, affine_map<(i, j) -> (i)>], iterator_types = ["parallel", "reduction"]}
        ins(%dh : tensor<4x8xf32>) outs(%z8 : tensor<8xf32>) attrs = {ipu.ipu_id = 0 : i64} {
    ^bb0(%a: f32, %o: f32):
      %s = arith.addf %a, %o : f32
      linalg.yield %s : f32
    } -> tensor<8xf32>
    // CHECK-DAG: %[[F1:.*]] = tensor.collapse_shape %{{.*}} {{\[\[}}0, 1]] {ipu.ipu_id = 0 : i64} : tensor<16x8xf32> into tensor<128xf32>
    // CHECK-DAG: %[[J:.*]] = tensor.concat dim(0) %[[F1]], %{{.*}} {ipu.ipu_id = 0 : i64} : (tensor<128xf32>, tensor<8xf32>) -> tensor<136xf32>
    // CHECK-DAG: "ipu.all_reduce"(%[[J]]) {ipu.ipu_id = 0 : i64, ipu.ring = array<i64: 0, 2>, reduction = "mean", replicas = 2 : i64} : (tensor<136xf32>) -> tensor<136xf32>
    // CHECK-DAG: "ipu.all_reduce"(%{{.*}}) {ipu.ipu_id = 1 : i64, ipu.ring = array<i64: 1, 3>, reduction = "mean", replicas = 2 : i64} : (tensor<8x4xf32>) -> tensor<8x4xf32>
    // CHECK-NOT: "ipu.all_reduce"
    // L3-DAG: "ipu.ring_all_reduce"() {{.*}} ring = array<i64: 0, 2>, {{.*}} type = tensor<136xf32>}
    // L3-DAG: "ipu.ring_all_reduce"() {{.*}} ring = array<i64: 1, 3>, {{.*}} type = tensor<8x4xf32>}
    %r1 = "ipu.all_reduce"(%g1) {replicas = 2 : i64, reduction = "mean"} : (tensor<16x8xf32>) -> tensor<16x8xf32>
    %r2 = "ipu.all_reduce"(%g2) {replicas = 2 : i64, reduction = "mean"} : (tensor<8x4xf32>) -> tensor<8x4xf32>
    %rb = "ipu.all_reduce"(%gb) {replicas = 2 : i64, reduction = "mean"} : (tensor<8xf32>) -> tensor<8xf32>
    %e1 = tensor.empty() : tensor<16x8xf32>
    %n1 = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                          iterator_types = ["parallel", "parallel"]}
        ins(%w1, %r1 : tensor<16x8xf32>, tensor<16x8xf32>) outs(%e1 : tensor<16x8xf32>) attrs = {ipu.ipu_id = 0 : i64} {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %d = arith.subf %a, %b : f32
      linalg.yield %d : f32
    } -> tensor<16x8xf32>
    %nb = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
        ins(%b1, %rb : tensor<8xf32>, tensor<8xf32>) outs(%e8 : tensor<8xf32>) attrs = {ipu.ipu_id = 0 : i64} {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %d = arith.subf %a, %b : f32
      linalg.yield %d : f32
    } -> tensor<8xf32>
    %e2 = tensor.empty() : tensor<8x4xf32>
    %n2 = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                          iterator_types = ["parallel", "parallel"]}
        ins(%w2, %r2 : tensor<8x4xf32>, tensor<8x4xf32>) outs(%e2 : tensor<8x4xf32>) attrs = {ipu.ipu_id = 1 : i64} {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %d = arith.subf %a, %b : f32
      linalg.yield %d : f32
    } -> tensor<8x4xf32>
    return %n1, %nb, %n2 : tensor<16x8xf32>, tensor<8xf32>, tensor<8x4xf32>
  }
}
