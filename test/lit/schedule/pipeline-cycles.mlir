// RUN: ipu-opt %s --split-input-file -p 'builtin.module(ipu-plan,ipu-schedule,ipu-verify)' | FileCheck %s

// A pipelined step's ops carry their pipeline cycle (ipu-pipeline's `ipu.pipeline_cycle`): the
// values crossing the IPU-Links into a cycle, all made in earlier cycles, are copied in one link
// phase at the cycle's start (a global sync, the copies, a sync), not before each reader. Cycle 2
// receives IPU 0's forward activation on IPU 1 and IPU 1's gradient on IPU 0 in one phase.

module attributes {ipu.target = "m2000"} {
  // CHECK-LABEL: func.func @cycles
  // CHECK:      "ipu.execute"() {compute_set = @matmul_cs0}
  // CHECK-NEXT: "ipu.sync"() {kind = "global"}
  // CHECK-NEXT: "ipu.copy"() {dest = @{{.*}}, source = @matmul0,
  // CHECK-NEXT: "ipu.sync"() {kind = "internal"}
  // CHECK-NOT:  "ipu.sync"() {kind = "global"}
  // CHECK:      "ipu.execute"() {compute_set = @matmul_cs2}
  // CHECK-NEXT: "ipu.sync"() {kind = "global"}
  // CHECK-NEXT: "ipu.copy"() {dest = @{{.*}}, source = @matmul1,
  // CHECK-NEXT: "ipu.copy"() {dest = @{{.*}}, source = @matmul2,
  // CHECK-NEXT: "ipu.sync"() {kind = "internal"}
  // CHECK-NOT:  "ipu.sync"() {kind = "global"}
  // CHECK:      "ipu.execute"() {compute_set = @matmul_cs4}
  // CHECK-NEXT: "ipu.sync"() {kind = "internal"}
  // CHECK-NEXT: "ipu.sync"() {kind = "external"}
  func.func @cycles(%x0: tensor<8x64xf32>, %x1: tensor<8x64xf32>, %w0: tensor<64x64xf32>, %w1: tensor<64x64xf32>)
      -> (tensor<8x64xf32>, tensor<8x64xf32>) {
    %h0 = "ipu.matmul"(%x0, %w0) {ipu.ipu_id = 0 : i64, ipu.pipeline_cycle = 0 : i64} : (tensor<8x64xf32>, tensor<64x64xf32>) -> tensor<8x64xf32>
    %h1 = "ipu.matmul"(%x1, %w0) {ipu.ipu_id = 0 : i64, ipu.pipeline_cycle = 1 : i64} : (tensor<8x64xf32>, tensor<64x64xf32>) -> tensor<8x64xf32>
    %y0 = "ipu.matmul"(%h0, %w1) {ipu.ipu_id = 1 : i64, ipu.pipeline_cycle = 1 : i64} : (tensor<8x64xf32>, tensor<64x64xf32>) -> tensor<8x64xf32>
    %y1 = "ipu.matmul"(%h1, %w1) {ipu.ipu_id = 1 : i64, ipu.pipeline_cycle = 2 : i64} : (tensor<8x64xf32>, tensor<64x64xf32>) -> tensor<8x64xf32>
    %d0 = "ipu.matmul"(%y0, %w0) {ipu.ipu_id = 0 : i64, ipu.pipeline_cycle = 2 : i64} : (tensor<8x64xf32>, tensor<64x64xf32>) -> tensor<8x64xf32>
    return %y1, %d0 : tensor<8x64xf32>, tensor<8x64xf32>
  }
}

// -----

// A cycle into which nothing crosses has no link phase; without `ipu.pipeline_cycle` a value
// crosses before its reader, in the reader's exchange phase.

module attributes {ipu.target = "m2000"} {
  // CHECK-LABEL: func.func @no_crossing
  // CHECK:      "ipu.execute"() {compute_set = @matmul_cs0}
  // CHECK-NEXT: "ipu.sync"() {kind = "internal"}
  // CHECK-NOT:  "ipu.sync"
  // CHECK:      "ipu.execute"() {compute_set = @matmul_cs1}
  // CHECK-NEXT: "ipu.sync"() {kind = "global"}
  // CHECK-NEXT: "ipu.copy"() {dest = @{{.*}}, source = @matmul1,
  // CHECK-NOT:  "ipu.sync"
  // CHECK:      "ipu.execute"() {compute_set = @matmul_cs2}
  func.func @no_crossing(%x0: tensor<8x64xf32>, %x1: tensor<8x64xf32>, %w0: tensor<64x64xf32>, %w1: tensor<64x64xf32>)
      -> (tensor<8x64xf32>, tensor<8x64xf32>) {
    %h0 = "ipu.matmul"(%x0, %w0) {ipu.ipu_id = 0 : i64, ipu.pipeline_cycle = 0 : i64} : (tensor<8x64xf32>, tensor<64x64xf32>) -> tensor<8x64xf32>
    %h1 = "ipu.matmul"(%x1, %w0) {ipu.ipu_id = 0 : i64, ipu.pipeline_cycle = 1 : i64} : (tensor<8x64xf32>, tensor<64x64xf32>) -> tensor<8x64xf32>
    %y1 = "ipu.matmul"(%h1, %w1) {ipu.ipu_id = 1 : i64} : (tensor<8x64xf32>, tensor<64x64xf32>) -> tensor<8x64xf32>
    return %h0, %y1 : tensor<8x64xf32>, tensor<8x64xf32>
  }
}
