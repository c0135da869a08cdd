// RUN: ipu-opt %s -p 'builtin.module(ipu-plan,ipu-schedule,ipu-merge-supersteps{lookahead=8},ipu-verify)' | FileCheck %s

// A pipeline cycle's work shares supersteps, but does not move up past the link phase opening
// its cycle (an exchange-only superstep crossing IPUs): IPU 2's matmul of cycle 1, independent of
// everything before it, joins IPU 1's of the same cycle, not IPU 0's of cycle 0.

module attributes {ipu.target = "m2000"} {
  // CHECK-LABEL: func.func @cycles
  // CHECK:      "ipu.execute"() {compute_set = @matmul_cs0}
  // CHECK-NEXT: "ipu.sync"() {kind = "global"}
  // CHECK-NEXT: "ipu.copy"() {dest = @{{.*}}, source = @matmul0,
  // CHECK-NEXT: "ipu.sync"() {kind = "internal"}
  // CHECK:      "ipu.execute"() {compute_set = @matmul_cs1_matmul_cs2}
  // CHECK-NEXT: "ipu.sync"() {kind = "internal"}
  // CHECK-NEXT: "ipu.sync"() {kind = "external"}
  func.func @cycles(%x0: tensor<8x64xf32>, %x1: tensor<8x64xf32>, %w0: tensor<64x64xf32>, %w1: tensor<64x64xf32>, %w2: tensor<64x64xf32>)
      -> (tensor<8x64xf32>, tensor<8x64xf32>) {
    %a = "ipu.matmul"(%x0, %w0) {ipu.ipu_id = 0 : i64, ipu.pipeline_cycle = 0 : i64} : (tensor<8x64xf32>, tensor<64x64xf32>) -> tensor<8x64xf32>
    %b = "ipu.matmul"(%a, %w1) {ipu.ipu_id = 1 : i64, ipu.pipeline_cycle = 1 : i64} : (tensor<8x64xf32>, tensor<64x64xf32>) -> tensor<8x64xf32>
    %c = "ipu.matmul"(%x1, %w2) {ipu.ipu_id = 2 : i64, ipu.pipeline_cycle = 1 : i64} : (tensor<8x64xf32>, tensor<64x64xf32>) -> tensor<8x64xf32>
    return %b, %c : tensor<8x64xf32>, tensor<8x64xf32>
  }
}
