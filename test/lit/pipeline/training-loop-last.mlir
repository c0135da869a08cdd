// ipu-pipeline on a training step as the torch front end hands it over: micro-batches 0 and 1
// in a loop (`ipu.accumulate`, frontends/accumulation_loop.py), the last micro-batch after it,
// its gradient added to the loop's sum, then the update. The last micro-batch's ops take the
// cycles of micro-batch 2 (training-loop.mlir's order, its loop over all three).
// RUN: ipu-opt %s -p 'builtin.module(ipu-pipeline{micro-batches=3})' | FileCheck %s
// RUN: not ipu-opt %s -p 'builtin.module(ipu-pipeline{micro-batches=4})' 2>&1 | FileCheck %s --check-prefix=COUNT

module attributes {ipu.target = "m2000"} {
  // CHECK-LABEL: func.func @step
  // CHECK-NOT: scf.for
  // CHECK: "ipu.matmul"(%arg2, %arg0) {ipu.ipu_id = 0 : i64, ipu.pipeline_cycle = 0 : i64, tag = "f0"}
  // CHECK-NEXT: "ipu.matmul"(%arg2, %arg0) {ipu.ipu_id = 0 : i64, ipu.pipeline_cycle = 1 : i64, tag = "f0"}
  // CHECK: "ipu.matmul"(%arg2, %arg0) {ipu.ipu_id = 0 : i64, ipu.pipeline_cycle = 2 : i64, tag = "f0-last"}
  // CHECK: "ipu.matmul"({{.*}}) {ipu.ipu_id = 1 : i64, ipu.pipeline_cycle = 3 : i64, tag = "f1-last"}
  // CHECK: "ipu.matmul"({{.*}}) {ipu.ipu_id = 1 : i64, ipu.pipeline_cycle = 3 : i64, tag = "b1-last"}
  // CHECK-NEXT: %[[S1:.*]] = arith.addf %{{.*}}, %{{.*}} {ipu.ipu_id = 0 : i64, ipu.pipeline_cycle = 3 : i64, tag = "sum"}
  // CHECK: %[[B0:.*]] = "ipu.matmul"({{.*}}) {ipu.ipu_id = 0 : i64, ipu.pipeline_cycle = 4 : i64, tag = "b0-last"}
  // CHECK-NEXT: %[[S2:.*]] = arith.addf %[[S1]], %[[B0]] {ipu.ipu_id = 0 : i64, ipu.pipeline_cycle = 4 : i64, tag = "last-sum"}
  // CHECK-NEXT: "ipu.matmul"(%[[S2]], %arg0) {ipu.ipu_id = 0 : i64, ipu.pipeline_cycle = 5 : i64, tag = "update"}
  // CHECK-NEXT: return
  // COUNT: error: 'func.func' op ipu-pipeline: the training step holds 3 micro-batches, not micro-batches=4
  func.func @step(%w0: tensor<64x64xf32> {ipu.resident = "param:l0.weight"}, %w1: tensor<64x64xf32> {ipu.resident = "param:l1.weight"},
                  %x: tensor<8x64xf32>) -> tensor<8x64xf32> {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %zero = arith.constant dense<0.0> : tensor<8x64xf32>
    %sum = scf.for %m = %c0 to %c2 step %c1 iter_args(%s = %zero) -> (tensor<8x64xf32>) {
      %h = "ipu.matmul"(%x, %w0) {ipu.ipu_id = 0 : i64, tag = "f0"} : (tensor<8x64xf32>, tensor<64x64xf32>) -> tensor<8x64xf32> loc("phase:forward"("l0"("aten.mm"("m.py":1:0))))
      %y = "ipu.matmul"(%h, %w1) {ipu.ipu_id = 1 : i64, tag = "f1"} : (tensor<8x64xf32>, tensor<64x64xf32>) -> tensor<8x64xf32> loc("phase:forward"("l1"("aten.mm"("m.py":2:0))))
      %g = "ipu.matmul"(%y, %w1) {ipu.ipu_id = 1 : i64, tag = "b1"} : (tensor<8x64xf32>, tensor<64x64xf32>) -> tensor<8x64xf32> loc("phase:backward"("l1"("aten.mm"("m.py":3:0))))
      %d = "ipu.matmul"(%g, %w0) {ipu.ipu_id = 0 : i64, tag = "b0"} : (tensor<8x64xf32>, tensor<64x64xf32>) -> tensor<8x64xf32> loc("phase:backward"("l0"("aten.mm"("m.py":4:0))))
      %t = arith.addf %s, %d {ipu.ipu_id = 0 : i64, tag = "sum"} : tensor<8x64xf32> loc("ipu.accumulate"("phase:backward"("l0"("aten.mm"("m.py":4:0)))))
      scf.yield %t : tensor<8x64xf32>
    } {ipu.accumulate}
    %h = "ipu.matmul"(%x, %w0) {ipu.ipu_id = 0 : i64, tag = "f0-last"} : (tensor<8x64xf32>, tensor<64x64xf32>) -> tensor<8x64xf32> loc("phase:forward"("l0"("aten.mm"("m.py":1:0))))
    %y = "ipu.matmul"(%h, %w1) {ipu.ipu_id = 1 : i64, tag = "f1-last"} : (tensor<8x64xf32>, tensor<64x64xf32>) -> tensor<8x64xf32> loc("phase:forward"("l1"("aten.mm"("m.py":2:0))))
    %g = "ipu.matmul"(%y, %w1) {ipu.ipu_id = 1 : i64, tag = "b1-last"} : (tensor<8x64xf32>, tensor<64x64xf32>) -> tensor<8x64xf32> loc("phase:backward"("l1"("aten.mm"("m.py":3:0))))
    %d = "ipu.matmul"(%g, %w0) {ipu.ipu_id = 0 : i64, tag = "b0-last"} : (tensor<8x64xf32>, tensor<64x64xf32>) -> tensor<8x64xf32> loc("phase:backward"("l0"("aten.mm"("m.py":4:0))))
    %total = arith.addf %sum, %d {ipu.ipu_id = 0 : i64, tag = "last-sum"} : tensor<8x64xf32> loc("phase:backward"("l0"("aten.add"("m.py":4:0))))
    %u = "ipu.matmul"(%total, %w0) {ipu.ipu_id = 0 : i64, tag = "update"} : (tensor<8x64xf32>, tensor<64x64xf32>) -> tensor<8x64xf32> loc("phase:update"("l0"("aten.sub"("m.py":5:0))))
    return %u : tensor<8x64xf32>
  }
}
