// ipu-pipeline alone (L1 -> L1): the batch split into micro-batches, each op of the sharded
// model once per micro-batch, in pipeline steps (stage s on micro-batch t - s); then planned,
// scheduled and merged so that the stages of a step share supersteps on their own IPUs. Every
// step unrolled (`unroll`); the steady state as a loop: steady-loop.mlir.
// RUN: ipu-opt %s --split-input-file -p 'builtin.module(ipu-pipeline{micro-batches=2 unroll=true})' | FileCheck %s
// RUN: ipu-opt %s --split-input-file -p 'builtin.module(ipu-pipeline{micro-batches=4 inputs=1 unroll=true})' | FileCheck %s --check-prefix=INPUTS
// RUN: ipu-opt %s --split-input-file -p 'builtin.module(ipu-pipeline{micro-batches=2 inputs=1 unroll=true},ipu-plan,ipu-schedule,ipu-merge-supersteps{lookahead=8},ipu-verify)' | FileCheck %s --check-prefix=L3

module attributes {ipu.target = "m2000"} {
  // CHECK-LABEL: func.func @two_stages
  // L3-LABEL: func.func @two_stages
  func.func @two_stages(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
    %w1 = arith.constant dense<0.5> : tensor<64x64xf32>
    %w2 = arith.constant dense<0.25> : tensor<64x64xf32>
    // Step 0: stage 0 on micro-batch 0.
    // CHECK: %[[X0:.*]] = tensor.extract_slice %arg0[0, 0] [4, 64] [1, 1] {ipu.ipu_id = 0 : i64}
    // CHECK: %[[H0:.*]] = "ipu.matmul"(%[[X0]], {{.*}}) {ipu.ipu_id = 0 : i64, ipu.pipeline_cycle = 0 : i64} : (tensor<4x64xf32>, tensor<64x64xf32>) -> tensor<4x64xf32>
    // Step 1: stage 0 on micro-batch 1, stage 1 on micro-batch 0.
    // CHECK: %[[X1:.*]] = tensor.extract_slice %arg0[4, 0] [4, 64] [1, 1] {ipu.ipu_id = 0 : i64}
    // CHECK: %[[H1:.*]] = "ipu.matmul"(%[[X1]], {{.*}}) {ipu.ipu_id = 0 : i64, ipu.pipeline_cycle = 1 : i64}
    // CHECK: %[[Y0:.*]] = "ipu.matmul"(%[[H0]], {{.*}}) {ipu.ipu_id = 1 : i64, ipu.pipeline_cycle = 1 : i64}
    // Step 2: stage 1 on micro-batch 1 (the flush).
    // CHECK: %[[Y1:.*]] = "ipu.matmul"(%[[H1]], {{.*}}) {ipu.ipu_id = 1 : i64, ipu.pipeline_cycle = 2 : i64}
    // CHECK: %[[Y:.*]] = tensor.concat dim(0) %[[Y0]], %[[Y1]] {ipu.ipu_id = 1 : i64} : (tensor<4x64xf32>, tensor<4x64xf32>) -> tensor<8x64xf32>
    // CHECK: return %[[Y]]
    %h = "ipu.matmul"(%x, %w1) {ipu.ipu_id = 0 : i64} : (tensor<8x64xf32>, tensor<64x64xf32>) -> tensor<8x64xf32>
    %y = "ipu.matmul"(%h, %w2) {ipu.ipu_id = 1 : i64} : (tensor<8x64xf32>, tensor<64x64xf32>) -> tensor<8x64xf32>
    return %y : tensor<8x64xf32>
  }
  // Step 1's two matmuls run in one superstep, opened by a global sync: micro-batch 0's
  // activations cross to IPU 1 in the same link phase as micro-batch 1's input moves on IPU 0.
  // L3: "ipu.sync"() {kind = "global"}
  // L3: "ipu.copy"
  // L3: "ipu.execute"() {compute_set = @[[STEP:matmul_cs[0-9]+_matmul_cs[0-9]+]]}
  // L3: func.func private @[[STEP]]()
  // L3-DAG: "ipu.vertex_group"(){{.*}}tiles = array<i64: {{[0-9]}}{{[0-9]*}},
  // L3-DAG: "ipu.vertex_group"(){{.*}}tiles = array<i64: {{1[4-9][0-9][0-9]|2[0-9][0-9][0-9]}},
}

// -----

// A weight argument (inputs=1: only %x is batched), an element-wise op broadcasting the bias
// over the batch, and the tensor.empty of its init split with it; 4 micro-batches, 1 stage.
module attributes {ipu.target = "m2000"} {
  // INPUTS-LABEL: func.func @weights_as_arguments
  func.func @weights_as_arguments(%x: tensor<8x16xf32>, %b: tensor<16xf32>) -> tensor<8x16xf32> {
    // INPUTS: %[[E:.*]] = tensor.empty() : tensor<2x16xf32>
    // INPUTS-COUNT-4: linalg.generic {{.*}} ins(%{{.*}}, %arg1 : tensor<2x16xf32>, tensor<16xf32>) outs(%[[E]] : tensor<2x16xf32>)
    // INPUTS: tensor.concat dim(0) {{.*}} -> tensor<8x16xf32>
    %e = tensor.empty() : tensor<8x16xf32>
    %y = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                         iterator_types = ["parallel", "parallel"]}
        ins(%x, %b : tensor<8x16xf32>, tensor<16xf32>) outs(%e : tensor<8x16xf32>) attrs = {ipu.ipu_id = 0 : i64} {
    ^bb0(%a: f32, %c: f32, %o: f32):
      %s = arith.addf %a, %c : f32
      linalg.yield %s : f32
    } -> tensor<8x16xf32>
    return %y : tensor<8x16xf32>
  }
}

// -----

// A bias broadcast into the init of the whole batch (computed from no input) is made once at
// the micro-batch's shape; reshapes keep the batch dimension first and split with it.
module attributes {ipu.target = "m2000"} {
  // CHECK-LABEL: func.func @broadcast_init
  func.func @broadcast_init(%x: tensor<8x4x16xf32>) -> tensor<8x4x16xf32> {
    %bias = arith.constant dense<1.5> : tensor<16xf32>
    %e = tensor.empty() : tensor<32x16xf32>
    // CHECK-NOT: tensor<32x16xf32>
    // CHECK: tensor.collapse_shape {{.*}} : tensor<4x4x16xf32> into tensor<16x16xf32>
    // CHECK: %[[E:.*]] = tensor.empty() : tensor<16x16xf32>
    // CHECK: %[[B:.*]] = linalg.generic {{.*}} ins(%{{.*}} : tensor<16xf32>) outs(%[[E]] : tensor<16x16xf32>)
    // CHECK: linalg.generic {{.*}} ins(%{{.*}}, %[[B]] : tensor<16x16xf32>, tensor<16x16xf32>)
    // CHECK: tensor.expand_shape {{.*}} output_shape [4, 4, 16] {{.*}} : tensor<16x16xf32> into tensor<4x4x16xf32>
    // CHECK: linalg.generic {{.*}} ins(%{{.*}}, %[[B]] : tensor<16x16xf32>, tensor<16x16xf32>)
    // CHECK: tensor.concat dim(0) {{.*}} : (tensor<4x4x16xf32>, tensor<4x4x16xf32>) -> tensor<8x4x16xf32>
    // CHECK-NOT: linalg.generic
    %b = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
        ins(%bias : tensor<16xf32>) outs(%e : tensor<32x16xf32>) attrs = {ipu.ipu_id = 0 : i64} {
    ^bb0(%a: f32, %o: f32):
      linalg.yield %a : f32
    } -> tensor<32x16xf32>
    %xc = tensor.collapse_shape %x [[0, 1], [2]] {ipu.ipu_id = 0 : i64} : tensor<8x4x16xf32> into tensor<32x16xf32>
    %y = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                         iterator_types = ["parallel", "parallel"]}
        ins(%xc, %b : tensor<32x16xf32>, tensor<32x16xf32>) outs(%e : tensor<32x16xf32>) attrs = {ipu.ipu_id = 1 : i64} {
    ^bb0(%p: f32, %q: f32, %o: f32):
      %s = arith.addf %p, %q : f32
      linalg.yield %s : f32
    } -> tensor<32x16xf32>
    %ye = tensor.expand_shape %y [[0, 1], [2]] output_shape [8, 4, 16] {ipu.ipu_id = 1 : i64} : tensor<32x16xf32> into tensor<8x4x16xf32>
    return %ye : tensor<8x4x16xf32>
  }
}

// -----

// BERT's token-type ids: a constant row of ids (computed from no input) broadcast over the
// batch, reshaped and looked up in an embedding table. Every micro-batch's rows are the same,
// so the broadcast, the reshape and the lookup are made once at the micro-batch's shape.
module attributes {ipu.target = "m2000"} {
  // CHECK-LABEL: func.func @token_type_ids
  func.func @token_type_ids(%ids: tensor<8x4xi64>) -> tensor<8x4x16xf32> {
    %table = arith.constant dense<0.5> : tensor<2x16xf32>
    %rows = arith.constant dense<[0, 1]> : tensor<2xi64>
    %types = arith.constant dense<[[0, 1, 1, 0]]> : tensor<1x4xi64>
    %words = arith.constant dense<0.25> : tensor<10x16xf32>
    %word_rows = arith.constant dense<[0, 1, 2, 3, 4, 5, 6, 7, 8, 9]> : tensor<10xi64>
    // CHECK-NOT: tensor<8x1x4xi64>
    // CHECK: %[[E:.*]] = tensor.empty() : tensor<4x1x4xi64>
    // CHECK: %[[B:.*]] = linalg.generic {{.*}} outs(%[[E]] : tensor<4x1x4xi64>)
    // CHECK: %[[C:.*]] = tensor.collapse_shape %[[B]] {{.*}} : tensor<4x1x4xi64> into tensor<4x4xi64>
    // CHECK: %[[T:.*]] = "ipu.gather"(%{{.*}}, %[[C]], %{{.*}}) {ipu.ipu_id = 0 : i64} : (tensor<2x16xf32>, tensor<4x4xi64>, tensor<2xi64>) -> tensor<4x4x16xf32>
    // CHECK: linalg.generic {{.*}} ins(%{{.*}}, %[[T]] : tensor<4x4x16xf32>, tensor<4x4x16xf32>)
    // CHECK-NOT: "ipu.gather"(%{{.*}}, %{{.*}}, %{{.*}}) {{.*}} -> tensor<4x4x16xf32>
    // CHECK: linalg.generic {{.*}} ins(%{{.*}}, %[[T]] : tensor<4x4x16xf32>, tensor<4x4x16xf32>)
    // CHECK: tensor.concat dim(0)
    %e = tensor.empty() : tensor<8x1x4xi64>
    %b = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>],
                         iterator_types = ["parallel", "parallel", "parallel"]}
        ins(%types : tensor<1x4xi64>) outs(%e : tensor<8x1x4xi64>) attrs = {ipu.ipu_id = 0 : i64} {
    ^bb0(%a: i64, %o: i64):
      linalg.yield %a : i64
    } -> tensor<8x1x4xi64>
    %c = tensor.collapse_shape %b [[0], [1, 2]] {ipu.ipu_id = 0 : i64} : tensor<8x1x4xi64> into tensor<8x4xi64>
    %t = "ipu.gather"(%table, %c, %rows) {ipu.ipu_id = 0 : i64} : (tensor<2x16xf32>, tensor<8x4xi64>, tensor<2xi64>) -> tensor<8x4x16xf32>
    %w = "ipu.gather"(%words, %ids, %word_rows) {ipu.ipu_id = 0 : i64} : (tensor<10x16xf32>, tensor<8x4xi64>, tensor<10xi64>) -> tensor<8x4x16xf32>
    %e3 = tensor.empty() : tensor<8x4x16xf32>
    %y = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>],
                         iterator_types = ["parallel", "parallel", "parallel"]}
        ins(%w, %t : tensor<8x4x16xf32>, tensor<8x4x16xf32>) outs(%e3 : tensor<8x4x16xf32>) attrs = {ipu.ipu_id = 1 : i64} {
    ^bb0(%p: f32, %q: f32, %o: f32):
      %s = arith.addf %p, %q : f32
      linalg.yield %s : f32
    } -> tensor<8x4x16xf32>
    return %y : tensor<8x4x16xf32>
  }
}

// -----

// Values of the whole batch computed from no input whose rows differ between micro-batches:
// a constant, and an iota over the batch (a body asking for the batch index). No one copy
// serves every micro-batch, so each micro-batch reads its own rows of the whole value.
module attributes {ipu.target = "m2000"} {
  // CHECK-LABEL: func.func @rows_differ
  func.func @rows_differ(%x: tensor<8x2xf32>) -> tensor<8x2xf32> {
    // CHECK: %[[CST:.*]] = arith.constant dense<{{.*}}> : tensor<8x2xf32>
    // CHECK: %[[IOTA:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<8x2xf32>)
    // CHECK: tensor.extract_slice %[[CST]][0, 0] [4, 2] [1, 1] {ipu.ipu_id = 0 : i64} : tensor<8x2xf32> to tensor<4x2xf32>
    // CHECK: tensor.extract_slice %[[IOTA]][0, 0] [4, 2] [1, 1] {ipu.ipu_id = 0 : i64} : tensor<8x2xf32> to tensor<4x2xf32>
    // CHECK: tensor.extract_slice %[[CST]][4, 0] [4, 2] [1, 1] {ipu.ipu_id = 0 : i64}
    // CHECK: tensor.extract_slice %[[IOTA]][4, 0] [4, 2] [1, 1] {ipu.ipu_id = 0 : i64}
    %c = arith.constant dense<[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0], [7.0, 8.0], [1.0, 2.0], [3.0, 4.0], [5.0, 6.0], [7.0, 8.0]]> : tensor<8x2xf32>
    %e = tensor.empty() : tensor<8x2xf32>
    %iota = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
        outs(%e : tensor<8x2xf32>) attrs = {ipu.ipu_id = 0 : i64} {
    ^bb0(%o: f32):
      %i = linalg.index 0 : index
      %n = arith.index_cast %i : index to i64
      %f = arith.sitofp %n : i64 to f32
      linalg.yield %f : f32
    } -> tensor<8x2xf32>
    %y = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                         iterator_types = ["parallel", "parallel"]}
        ins(%x, %c, %iota : tensor<8x2xf32>, tensor<8x2xf32>, tensor<8x2xf32>) outs(%e : tensor<8x2xf32>) attrs = {ipu.ipu_id = 0 : i64} {
    ^bb0(%p: f32, %q: f32, %r: f32, %o: f32):
      %s = arith.addf %p, %q : f32
      %t = arith.addf %s, %r : f32
      linalg.yield %t : f32
    } -> tensor<8x2xf32>
    return %y : tensor<8x2xf32>
  }
}
