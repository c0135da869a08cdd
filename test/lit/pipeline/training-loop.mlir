// ipu-pipeline on a training step as the torch front end hands it over: one micro-batch's
// forward and backward in a loop over the step's micro-batches (`ipu.accumulate`,
// frontends/accumulation_loop.py), the gradient sum carried, the update after it. The loop is
// unrolled, each micro-batch's ops in their cycles of PopART's pipeline (training.mlir's order),
// micro-batch m's sum reading micro-batch m - 1's.
// RUN: ipu-opt %s -p 'builtin.module(ipu-pipeline{micro-batches=3})' | FileCheck %s
// RUN: not ipu-opt %s -p 'builtin.module(ipu-pipeline{micro-batches=4})' 2>&1 | FileCheck %s --check-prefix=COUNT

module attributes {ipu.target = "m2000"} {
  // CHECK-LABEL: func.func @step
  // CHECK-NOT: scf.for
  // CHECK: %[[F0:.*]] = "ipu.matmul"(%arg2, %arg0) {ipu.ipu_id = 0 : i64, ipu.pipeline_cycle = 0 : i64, tag = "f0"}
  // CHECK-NEXT: "ipu.matmul"(%arg2, %arg0) {ipu.ipu_id = 0 : i64, ipu.pipeline_cycle = 1 : i64, tag = "f0"}
  // CHECK-NEXT: %[[F1:.*]] = "ipu.matmul"(%[[F0]], %arg1) {ipu.ipu_id = 1 : i64, ipu.pipeline_cycle = 1 : i64, tag = "f1"}
  // CHECK-NEXT: %[[B1:.*]] = "ipu.matmul"(%[[F1]], %arg1) {ipu.ipu_id = 1 : i64, ipu.pipeline_cycle = 1 : i64, tag = "b1"}
  // CHECK-NEXT: "ipu.matmul"(%arg2, %arg0) {ipu.ipu_id = 0 : i64, ipu.pipeline_cycle = 2 : i64, tag = "f0"}
  // CHECK-NEXT: "ipu.matmul"({{.*}}) {ipu.ipu_id = 1 : i64, ipu.pipeline_cycle = 2 : i64, tag = "f1"}
  // CHECK-NEXT: %[[B0:.*]] = "ipu.matmul"(%[[B1]], %arg0) {ipu.ipu_id = 0 : i64, ipu.pipeline_cycle = 2 : i64, tag = "b0"}
  // CHECK-NEXT: "ipu.matmul"({{.*}}) {ipu.ipu_id = 1 : i64, ipu.pipeline_cycle = 2 : i64, tag = "b1"}
  // CHECK-NEXT: %[[S0:.*]] = arith.addf %cst, %[[B0]] {ipu.ipu_id = 0 : i64, ipu.pipeline_cycle = 2 : i64, tag = "sum"}
  // CHECK: %[[S1:.*]] = arith.addf %[[S0]], %{{.*}} {ipu.ipu_id = 0 : i64, ipu.pipeline_cycle = 3 : i64, tag = "sum"}
  // CHECK: %[[S2:.*]] = arith.addf %[[S1]], %{{.*}} {ipu.ipu_id = 0 : i64, ipu.pipeline_cycle = 4 : i64, tag = "sum"}
  // CHECK-NEXT: "ipu.matmul"(%[[S2]], %arg0) {ipu.ipu_id = 0 : i64, ipu.pipeline_cycle = 5 : i64, tag = "update"}
  // CHECK-NEXT: return
  // COUNT: error: 'func.func' op ipu-pipeline: the training step holds 3 micro-batches, not micro-batches=4
  func.func @step(%w0: tensor<64x64xf32> {ipu.resident = "param:l0.weight"}, %w1: tensor<64x64xf32> {ipu.resident = "param:l1.weight"},
                  %x: tensor<8x64xf32>) -> tensor<8x64xf32> {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c3 = arith.constant 3 : index
    %zero = arith.constant dense<0.0> : tensor<8x64xf32>
    %sum = scf.for %m = %c0 to %c3 step %c1 iter_args(%s = %zero) -> (tensor<8x64xf32>) {
      %h = "ipu.matmul"(%x, %w0) {ipu.ipu_id = 0 : i64, tag = "f0"} : (tensor<8x64xf32>, tensor<64x64xf32>) -> tensor<8x64xf32> loc("phase:forward"("l0"("aten.mm"("m.py":1:0))))
      %y = "ipu.matmul"(%h, %w1) {ipu.ipu_id = 1 : i64, tag = "f1"} : (tensor<8x64xf32>, tensor<64x64xf32>) -> tensor<8x64xf32> loc("phase:forward"("l1"("aten.mm"("m.py":2:0))))
      %g = "ipu.matmul"(%y, %w1) {ipu.ipu_id = 1 : i64, tag = "b1"} : (tensor<8x64xf32>, tensor<64x64xf32>) -> tensor<8x64xf32> loc("phase:backward"("l1"("aten.mm"("m.py":3:0))))
      %d = "ipu.matmul"(%g, %w0) {ipu.ipu_id = 0 : i64, tag = "b0"} : (tensor<8x64xf32>, tensor<64x64xf32>) -> tensor<8x64xf32> loc("phase:backward"("l0"("aten.mm"("m.py":4:0))))
      %t = arith.addf %s, %d {ipu.ipu_id = 0 : i64, tag = "sum"} : tensor<8x64xf32> loc("ipu.accumulate"("phase:backward"("l0"("aten.mm"("m.py":4:0)))))
      scf.yield %t : tensor<8x64xf32>
    } {ipu.accumulate}
    %u = "ipu.matmul"(%sum, %w0) {ipu.ipu_id = 0 : i64, tag = "update"} : (tensor<8x64xf32>, tensor<64x64xf32>) -> tensor<8x64xf32> loc("phase:update"("l0"("aten.sub"("m.py":5:0))))
    return %u : tensor<8x64xf32>
  }
}
