// ipu-pipeline's steady state as one loop (Poplar's Repeat): with S stages and M micro-batches,
// the fill's and the flush's S - 1 steps unrolled, the M - S + 1 steps running every stage one
// scf.for, whose body is one step. Each stage reading the batch or writing an output carries its
// micro-batch number (a 0-d counter on its IPU); stage 0 selects its micro-batch of the input by
// a dynamic slice (an ipu.gather of a row of the input seen as M x rows), the value between the
// stages is carried one step, and the output, carried as M x rows, gets its micro-batch by a
// dynamic update; the fill's and flush's micro-batches are inserted after the loop.
// RUN: ipu-opt %s --split-input-file -p 'builtin.module(ipu-pipeline{micro-batches=6})' | FileCheck %s
// RUN: ipu-opt %s --split-input-file -p 'builtin.module(ipu-pipeline{micro-batches=6},ipu-plan,ipu-schedule,ipu-verify)' | FileCheck %s --check-prefix=L3

module attributes {ipu.target = "m2000"} {
  // CHECK-LABEL: func.func @two_stages
  // L3-LABEL: func.func @two_stages
  func.func @two_stages(%x: tensor<12x64xf32>) -> tensor<12x64xf32> {
    %w1 = arith.constant dense<0.5> : tensor<64x64xf32>
    %w2 = arith.constant dense<0.25> : tensor<64x64xf32>
    // The fill: stage 0 on micro-batch 0.
    // CHECK: %[[X0:.*]] = tensor.extract_slice %arg0[0, 0] [2, 64] [1, 1] {ipu.ipu_id = 0 : i64}
    // CHECK: %[[H0:.*]] = "ipu.matmul"(%[[X0]], {{.*}}) {ipu.ipu_id = 0 : i64, ipu.pipeline_cycle = 0 : i64}
    // Steps 1 to 5: stage 0 on micro-batch t (its counter starts at 1), stage 1 on t - 1 (at 0).
    // CHECK: %[[C0:.*]] = linalg.generic {{.*}} attrs = {ipu.ipu_id = 0 : i64}
    // CHECK: %[[C1:.*]] = linalg.generic {{.*}} attrs = {ipu.ipu_id = 1 : i64}
    // CHECK: %[[VIEW:.*]] = tensor.expand_shape %arg0 {{\[}}[0, 1], [2]] output_shape [6, 2, 64] {ipu.ipu_id = 0 : i64}
    // CHECK: %[[LOOP:.*]]:4 = scf.for %{{.*}} = %c1 to %c6 step %{{.*}} iter_args(%[[H:.*]] = %[[H0]], %[[OUT:.*]] = %{{.*}}, %[[K0:.*]] = %[[C0]], %[[K1:.*]] = %[[C1]])
    // CHECK: "ipu.gather"({{.*}}) {ipu.ipu_id = 0 : i64} : (tensor<6x128xf32>, tensor<1xi64>, tensor<6xi64>) -> tensor<1x128xf32>
    // CHECK: %[[HN:.*]] = "ipu.matmul"({{.*}}) {ipu.ipu_id = 0 : i64}
    // CHECK: %[[Y:.*]] = "ipu.matmul"(%[[H]], {{.*}}) {ipu.ipu_id = 1 : i64}
    // CHECK: %[[OUTN:.*]] = linalg.generic {{.*}} ins(%[[OUT]], {{.*}} : tensor<6x2x64xf32>, tensor<2x64xf32>, tensor<i64>, tensor<6xi64>) {{.*}} attrs = {ipu.ipu_id = 1 : i64}
    // CHECK: scf.yield %[[HN]], %[[OUTN]], %{{.*}}, %{{.*}} :
    // The flush: stage 1 on micro-batch 5, its input the value the loop carried out.
    // CHECK: %[[Y5:.*]] = "ipu.matmul"(%[[LOOP]]#0, {{.*}}) {ipu.ipu_id = 1 : i64, ipu.pipeline_cycle = 6 : i64}
    // CHECK: %[[Y5R:.*]] = tensor.expand_shape %[[Y5]]
    // CHECK: %[[ALL:.*]] = tensor.insert_slice %[[Y5R]] into %[[LOOP]]#1[5, 0, 0] [1, 2, 64] [1, 1, 1] {ipu.ipu_id = 1 : i64}
    // CHECK: %[[R:.*]] = tensor.collapse_shape %[[ALL]] {{\[}}[0, 1], [2]] {ipu.ipu_id = 1 : i64} : tensor<6x2x64xf32> into tensor<12x64xf32>
    // CHECK: return %[[R]]
    %h = "ipu.matmul"(%x, %w1) {ipu.ipu_id = 0 : i64} : (tensor<12x64xf32>, tensor<64x64xf32>) -> tensor<12x64xf32>
    %y = "ipu.matmul"(%h, %w2) {ipu.ipu_id = 1 : i64} : (tensor<12x64xf32>, tensor<64x64xf32>) -> tensor<12x64xf32>
    return %y : tensor<12x64xf32>
  }
  // At L3 the loop is Poplar's Repeat around one step's supersteps. The body is one pipeline
  // cycle: it opens with the cycle's link phase, the carried value crossing to IPU 1.
  // L3: scf.for
  // L3-NEXT: "ipu.sync"() {kind = "global"}
  // L3-NEXT: "ipu.copy"() {{.*}}source = @carried0
  // L3-NEXT: "ipu.sync"() {kind = "internal"}
  // L3: "ipu.execute"
}

// -----

// A value skipping a stage (made on IPU 0, read on IPU 2) is carried down a line of two: the
// body reads the older, yields the new one first and the older's successor second.
module attributes {ipu.target = "m2000"} {
  // CHECK-LABEL: func.func @skip
  // CHECK: scf.for {{.*}} iter_args(%[[A1:arg[0-9]+]] = %{{[0-9]+}}, %[[A2:arg[0-9]+]] = %{{[0-9]+}}, %[[B:arg[0-9]+]] = %{{[0-9]+}},
  // CHECK: %[[AN:.*]] = "ipu.matmul"({{.*}}) {ipu.ipu_id = 0 : i64}
  // CHECK: "ipu.matmul"(%[[A1]], {{.*}}) {ipu.ipu_id = 1 : i64}
  // CHECK: linalg.generic {{.*}} ins(%[[B]], %[[A2]] : {{.*}}) {{.*}} attrs = {ipu.ipu_id = 2 : i64}
  // CHECK: scf.yield %[[AN]], %[[A1]], %{{.*}},
  func.func @skip(%x: tensor<12x16xf32>) -> tensor<12x16xf32> {
    %w = arith.constant dense<0.5> : tensor<16x16xf32>
    %a = "ipu.matmul"(%x, %w) {ipu.ipu_id = 0 : i64} : (tensor<12x16xf32>, tensor<16x16xf32>) -> tensor<12x16xf32>
    %b = "ipu.matmul"(%a, %w) {ipu.ipu_id = 1 : i64} : (tensor<12x16xf32>, tensor<16x16xf32>) -> tensor<12x16xf32>
    %e = tensor.empty() : tensor<12x16xf32>
    %s = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                         iterator_types = ["parallel", "parallel"]} ins(%b, %a : tensor<12x16xf32>, tensor<12x16xf32>) outs(%e : tensor<12x16xf32>) attrs = {ipu.ipu_id = 2 : i64} {
    ^bb0(%p: f32, %q: f32, %o: f32):
      %r = arith.addf %p, %q : f32
      linalg.yield %r : f32
    } -> tensor<12x16xf32>
    return %s : tensor<12x16xf32>
  }
}
