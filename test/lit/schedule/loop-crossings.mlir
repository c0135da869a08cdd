// RUN: ipu-opt %s --split-input-file -p 'builtin.module(ipu-plan,ipu-schedule,ipu-verify)' | FileCheck %s

// A value made before every loop (%h, on IPU 0) and read in a loop on IPU 1 crosses the
// IPU-Links once, before the loop, with the carried init's copy and before the sync ending that
// superstep: the loop's first superstep reads it there, every iteration reuses it.

#id = affine_map<(d0, d1) -> (d0, d1)>
module attributes {ipu.target = "m2000"} {
  // CHECK-LABEL: func.func @hoisted
  // CHECK:      "ipu.execute"() {compute_set = @matmul_cs0}
  // CHECK-NEXT: "ipu.sync"() {kind = "global"}
  // CHECK-DAG:  "ipu.copy"() {dest = @carried0, {{.*}}source = @arg2_0,
  // CHECK-DAG:  "ipu.copy"() {dest = @[[H:generic_in[0-9]+]], {{.*}}source = @matmul0,
  // CHECK:      "ipu.sync"() {kind = "internal"}
  // CHECK:      scf.for
  // CHECK-NOT:  "ipu.copy"
  // CHECK:      "ipu.execute"() {compute_set = @generic_cs0}
  // CHECK-NEXT: "ipu.sync"() {kind = "internal"}
  // CHECK-NEXT: }
  // CHECK-LABEL: func.func private @generic_cs0()
  // CHECK-NEXT: "ipu.vertex_group"() {codelet = @generic_v0, inputs = [@carried0, @[[H]]]
  func.func @hoisted(%x: tensor<8x64xf32>, %w: tensor<64x64xf32>, %y: tensor<8x64xf32>) -> tensor<8x64xf32> {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %h = "ipu.matmul"(%x, %w) {ipu.ipu_id = 0 : i64} : (tensor<8x64xf32>, tensor<64x64xf32>) -> tensor<8x64xf32>
    %r = scf.for %i = %c0 to %c4 step %c1 iter_args(%acc = %y) -> (tensor<8x64xf32>) {
      %e = tensor.empty() : tensor<8x64xf32>
      %s = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
          ins(%acc, %h : tensor<8x64xf32>, tensor<8x64xf32>) outs(%e : tensor<8x64xf32>) attrs = {ipu.ipu_id = 1 : i64} {
      ^bb0(%p: f32, %q: f32, %o: f32):
        %t = arith.addf %p, %q : f32
        linalg.yield %t : f32
      } -> tensor<8x64xf32>
      scf.yield %s : tensor<8x64xf32>
    }
    return %r : tensor<8x64xf32>
  }
}

// -----

// A value made in the loop crosses in every iteration, before its reader.

#id = affine_map<(d0, d1) -> (d0, d1)>
module attributes {ipu.target = "m2000"} {
  // CHECK-LABEL: func.func @made_inside
  // CHECK:      scf.for
  // CHECK:      "ipu.execute"() {compute_set = @matmul_cs0}
  // CHECK-NEXT: "ipu.sync"() {kind = "global"}
  // CHECK-NEXT: "ipu.copy"() {dest = @{{.*}}, {{.*}}source = @matmul0,
  // CHECK:      "ipu.execute"() {compute_set = @generic_cs0}
  // CHECK:      }
  func.func @made_inside(%x: tensor<8x64xf32>, %w: tensor<64x64xf32>, %y: tensor<8x64xf32>) -> tensor<8x64xf32> {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %r = scf.for %i = %c0 to %c4 step %c1 iter_args(%acc = %y) -> (tensor<8x64xf32>) {
      %h = "ipu.matmul"(%x, %w) {ipu.ipu_id = 0 : i64} : (tensor<8x64xf32>, tensor<64x64xf32>) -> tensor<8x64xf32>
      %e = tensor.empty() : tensor<8x64xf32>
      %s = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
          ins(%acc, %h : tensor<8x64xf32>, tensor<8x64xf32>) outs(%e : tensor<8x64xf32>) attrs = {ipu.ipu_id = 1 : i64} {
      ^bb0(%p: f32, %q: f32, %o: f32):
        %t = arith.addf %p, %q : f32
        linalg.yield %t : f32
      } -> tensor<8x64xf32>
      scf.yield %s : tensor<8x64xf32>
    }
    return %r : tensor<8x64xf32>
  }
}

// -----

// A value already brought to IPU 1 before the loop (read there by %b) is not sent again: the
// loop reads that copy.

#id = affine_map<(d0, d1) -> (d0, d1)>
module attributes {ipu.target = "m2000"} {
  // CHECK-LABEL: func.func @reused
  // CHECK:      "ipu.copy"() {dest = @[[H:generic_in[0-9]+]], {{.*}}source = @matmul0,
  // CHECK-NOT:  source = @matmul0,
  // CHECK:      scf.for
  // CHECK-NOT:  source = @matmul0,
  // CHECK:      }
  func.func @reused(%x: tensor<8x64xf32>, %w: tensor<64x64xf32>, %y: tensor<8x64xf32>) -> tensor<8x64xf32> {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %h = "ipu.matmul"(%x, %w) {ipu.ipu_id = 0 : i64} : (tensor<8x64xf32>, tensor<64x64xf32>) -> tensor<8x64xf32>
    %e0 = tensor.empty() : tensor<8x64xf32>
    %b = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
        ins(%y, %h : tensor<8x64xf32>, tensor<8x64xf32>) outs(%e0 : tensor<8x64xf32>) attrs = {ipu.ipu_id = 1 : i64} {
    ^bb0(%p: f32, %q: f32, %o: f32):
      %t = arith.mulf %p, %q : f32
      linalg.yield %t : f32
    } -> tensor<8x64xf32>
    %r = scf.for %i = %c0 to %c4 step %c1 iter_args(%acc = %b) -> (tensor<8x64xf32>) {
      %e = tensor.empty() : tensor<8x64xf32>
      %s = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
          ins(%acc, %h : tensor<8x64xf32>, tensor<8x64xf32>) outs(%e : tensor<8x64xf32>) attrs = {ipu.ipu_id = 1 : i64} {
      ^bb0(%p: f32, %q: f32, %o: f32):
        %t = arith.addf %p, %q : f32
        linalg.yield %t : f32
      } -> tensor<8x64xf32>
      scf.yield %s : tensor<8x64xf32>
    }
    return %r : tensor<8x64xf32>
  }
}

// -----

// On one IPU too: the loop's matmul reads the weight %w, made before the loop, in its own
// layout: that copy is made once, before the loop; the carried %acc's each iteration.

module attributes {ipu.target = "m2000"} {
  // CHECK-LABEL: func.func @staged
  // CHECK:      "ipu.sync"() {kind = "external"}
  // CHECK-DAG:  "ipu.copy"() {dest = @carried0, {{.*}}source = @arg1_0,
  // CHECK-DAG:  "ipu.copy"() {dest = @matmul_in1, {{.*}}source = @arg0_0,
  // CHECK:      "ipu.sync"() {kind = "internal"}
  // CHECK:      scf.for
  // CHECK-NEXT: "ipu.copy"() {dest = @matmul_in0, {{.*}}source = @carried0,
  // CHECK-NOT:  "ipu.copy"
  // CHECK:      "ipu.execute"() {compute_set = @matmul_cs0}
  func.func @staged(%w: tensor<64x64xf32>, %y: tensor<8x64xf32>) -> tensor<8x64xf32> {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %r = scf.for %i = %c0 to %c4 step %c1 iter_args(%acc = %y) -> (tensor<8x64xf32>) {
      %s = "ipu.matmul"(%acc, %w) {ipu.ipu_id = 0 : i64} : (tensor<8x64xf32>, tensor<64x64xf32>) -> tensor<8x64xf32>
      scf.yield %s : tensor<8x64xf32>
    }
    return %r : tensor<8x64xf32>
  }
}
