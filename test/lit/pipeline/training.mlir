// ipu-pipeline on a training step (a function with device variables, its micro-batches unrolled
// by the front end and sharded): the ops put in the order of PopART's pipeline. 2 IPUs, so 3
// pipeline stages: IPU 0's forward, IPU 1's forward and backward, IPU 0's backward. In cycle t
// IPU s runs the forward of micro-batch t - s and the backward of micro-batch t - (2 - s);
// within a cycle the forwards first, the IPUs' ops alternating; the update after the last cycle.
// Each op is marked with its cycle, which ipu-schedule's link phases follow.
// RUN: ipu-opt %s -p 'builtin.module(ipu-pipeline{micro-batches=3})' | FileCheck %s

module attributes {ipu.target = "m2000"} {
  // CHECK-LABEL: func.func @step
  // cycle 0
  // CHECK: ipu.pipeline_cycle = 0 : i64, tag = "f0_0"
  // cycle 1
  // CHECK-NEXT: ipu.pipeline_cycle = 1 : i64, tag = "f0_1"
  // CHECK-NEXT: ipu.pipeline_cycle = 1 : i64, tag = "f1_0"
  // CHECK-NEXT: ipu.pipeline_cycle = 1 : i64, tag = "b1_0"
  // cycle 2: the main phase, every IPU a forward and a backward
  // CHECK-NEXT: ipu.pipeline_cycle = 2 : i64, tag = "f0_2"
  // CHECK-NEXT: ipu.pipeline_cycle = 2 : i64, tag = "f1_1"
  // CHECK-NEXT: ipu.pipeline_cycle = 2 : i64, tag = "b0_0"
  // CHECK-NEXT: ipu.pipeline_cycle = 2 : i64, tag = "b1_1"
  // cycle 3
  // CHECK-NEXT: ipu.pipeline_cycle = 3 : i64, tag = "f1_2"
  // CHECK-NEXT: ipu.pipeline_cycle = 3 : i64, tag = "b0_1"
  // CHECK-NEXT: ipu.pipeline_cycle = 3 : i64, tag = "b1_2"
  // cycle 4, then the update
  // CHECK-NEXT: ipu.pipeline_cycle = 4 : i64, tag = "b0_2"
  // CHECK-NEXT: ipu.pipeline_cycle = 5 : i64, tag = "u0"
  // CHECK-NEXT: return
  func.func @step(%w0: tensor<64x64xf32> {ipu.resident = "param:l0.weight"}, %w1: tensor<64x64xf32> {ipu.resident = "param:l1.weight"},
                  %x0: tensor<8x64xf32>, %x1: tensor<8x64xf32>, %x2: tensor<8x64xf32>)
      -> (tensor<8x64xf32>, tensor<8x64xf32>, tensor<8x64xf32>, tensor<64x64xf32> {ipu.resident = "param:l0.weight"}) {
    %h0 = "ipu.matmul"(%x0, %w0) {ipu.ipu_id = 0 : i64, tag = "f0_0"} : (tensor<8x64xf32>, tensor<64x64xf32>) -> tensor<8x64xf32> loc("phase:forward"("l0"("aten.mm"("m.py":1:0))))
    %y0 = "ipu.matmul"(%h0, %w1) {ipu.ipu_id = 1 : i64, tag = "f1_0"} : (tensor<8x64xf32>, tensor<64x64xf32>) -> tensor<8x64xf32> loc("phase:forward"("l1"("aten.mm"("m.py":2:0))))
    %g0 = "ipu.matmul"(%y0, %w1) {ipu.ipu_id = 1 : i64, tag = "b1_0"} : (tensor<8x64xf32>, tensor<64x64xf32>) -> tensor<8x64xf32> loc("phase:backward"("l1"("aten.mm"("m.py":3:0))))
    %d0 = "ipu.matmul"(%g0, %w0) {ipu.ipu_id = 0 : i64, tag = "b0_0"} : (tensor<8x64xf32>, tensor<64x64xf32>) -> tensor<8x64xf32> loc("phase:backward"("l0"("aten.mm"("m.py":4:0))))
    %h1 = "ipu.matmul"(%x1, %w0) {ipu.ipu_id = 0 : i64, tag = "f0_1"} : (tensor<8x64xf32>, tensor<64x64xf32>) -> tensor<8x64xf32> loc("phase:forward"("l0"("aten.mm"("m.py":1:0))))
    %y1 = "ipu.matmul"(%h1, %w1) {ipu.ipu_id = 1 : i64, tag = "f1_1"} : (tensor<8x64xf32>, tensor<64x64xf32>) -> tensor<8x64xf32> loc("phase:forward"("l1"("aten.mm"("m.py":2:0))))
    %g1 = "ipu.matmul"(%y1, %w1) {ipu.ipu_id = 1 : i64, tag = "b1_1"} : (tensor<8x64xf32>, tensor<64x64xf32>) -> tensor<8x64xf32> loc("phase:backward"("l1"("aten.mm"("m.py":3:0))))
    %d1 = "ipu.matmul"(%g1, %w0) {ipu.ipu_id = 0 : i64, tag = "b0_1"} : (tensor<8x64xf32>, tensor<64x64xf32>) -> tensor<8x64xf32> loc("phase:backward"("l0"("aten.mm"("m.py":4:0))))
    %h2 = "ipu.matmul"(%x2, %w0) {ipu.ipu_id = 0 : i64, tag = "f0_2"} : (tensor<8x64xf32>, tensor<64x64xf32>) -> tensor<8x64xf32> loc("phase:forward"("l0"("aten.mm"("m.py":1:0))))
    %y2 = "ipu.matmul"(%h2, %w1) {ipu.ipu_id = 1 : i64, tag = "f1_2"} : (tensor<8x64xf32>, tensor<64x64xf32>) -> tensor<8x64xf32> loc("phase:forward"("l1"("aten.mm"("m.py":2:0))))
    %g2 = "ipu.matmul"(%y2, %w1) {ipu.ipu_id = 1 : i64, tag = "b1_2"} : (tensor<8x64xf32>, tensor<64x64xf32>) -> tensor<8x64xf32> loc("phase:backward"("l1"("aten.mm"("m.py":3:0))))
    %d2 = "ipu.matmul"(%g2, %w0) {ipu.ipu_id = 0 : i64, tag = "b0_2"} : (tensor<8x64xf32>, tensor<64x64xf32>) -> tensor<8x64xf32> loc("phase:backward"("l0"("aten.mm"("m.py":4:0))))
    %u0 = "ipu.matmul"(%w0, %w0) {ipu.ipu_id = 0 : i64, tag = "u0"} : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32> loc("phase:update"("l0"("aten.sub"("m.py":5:0))))
    return %d0, %d1, %d2, %u0 : tensor<8x64xf32>, tensor<8x64xf32>, tensor<8x64xf32>, tensor<64x64xf32>
  }
}
