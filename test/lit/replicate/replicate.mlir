// ipu-replicate alone (L1 -> L1): each replica on its own IPUs with its own weights and its slice
// of the batch, side by side; then planned, scheduled and merged into shared supersteps.
// RUN: ipu-opt %s --split-input-file -p 'builtin.module(ipu-replicate{replicas=2})' | FileCheck %s
// RUN: ipu-opt %s --split-input-file -p 'builtin.module(ipu-replicate{replicas=2},ipu-plan,ipu-schedule,ipu-merge-supersteps{lookahead=8},ipu-verify)' | FileCheck %s --check-prefix=L3

module attributes {ipu.target = "m2000"} {
  // CHECK-LABEL: func.func @two_stages
  // L3-LABEL: func.func @two_stages
  func.func @two_stages(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
    // The replicas' slices of the input first; each replica its own copy of each weight.
    // CHECK: %[[X0:.*]] = tensor.extract_slice %arg0[0, 0] [4, 64] [1, 1] {ipu.ipu_id = 0 : i64}
    // CHECK: %[[X1:.*]] = tensor.extract_slice %arg0[4, 0] [4, 64] [1, 1] {ipu.ipu_id = 2 : i64}
    // CHECK: %[[W1A:.*]] = arith.constant dense<5.000000e-01>
    // CHECK: %[[W1B:.*]] = arith.constant dense<5.000000e-01>
    // CHECK: %[[H0:.*]] = "ipu.matmul"(%[[X0]], %[[W1A]]) {ipu.ipu_id = 0 : i64} : (tensor<4x64xf32>, tensor<64x64xf32>) -> tensor<4x64xf32>
    // CHECK: %[[H1:.*]] = "ipu.matmul"(%[[X1]], %[[W1B]]) {ipu.ipu_id = 2 : i64}
    // CHECK: %[[Y0:.*]] = "ipu.matmul"(%[[H0]], %{{.*}}) {ipu.ipu_id = 1 : i64}
    // CHECK: %[[Y1:.*]] = "ipu.matmul"(%[[H1]], %{{.*}}) {ipu.ipu_id = 3 : i64}
    // CHECK: tensor.concat dim(0) %[[Y0]], %[[Y1]] {ipu.ipu_id = 3 : i64} : (tensor<4x64xf32>, tensor<4x64xf32>) -> tensor<8x64xf32>
    %w1 = arith.constant dense<0.5> : tensor<64x64xf32>
    %w2 = arith.constant dense<0.25> : tensor<64x64xf32>
    %h = "ipu.matmul"(%x, %w1) {ipu.ipu_id = 0 : i64} : (tensor<8x64xf32>, tensor<64x64xf32>) -> tensor<8x64xf32>
    %y = "ipu.matmul"(%h, %w2) {ipu.ipu_id = 1 : i64} : (tensor<8x64xf32>, tensor<64x64xf32>) -> tensor<8x64xf32>
    return %y : tensor<8x64xf32>
  }
  // The replicas' first matmuls in one compute set, on IPU 0's tiles and IPU 2's.
  // L3: "ipu.execute"() {compute_set = @[[BOTH:matmul_cs[0-9]+_matmul_cs[0-9]+]]}
  // L3: func.func private @[[BOTH]]()
  // L3-DAG: "ipu.vertex_group"(){{.*}}tiles = array<i64: {{[0-9]}}{{[0-9]*}},
  // L3-DAG: "ipu.vertex_group"(){{.*}}tiles = array<i64: {{29[4-9][0-9]|3[0-9][0-9][0-9]|4[0-3][0-9][0-9]}},
}
