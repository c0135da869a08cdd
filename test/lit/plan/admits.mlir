// RUN: ipu-opt %s --split-input-file -p 'builtin.module(ipu-plan)' | FileCheck %s

// A generic's window `d0 + d1` is read, in each part, from where its part of one loop
// starts, over the whole extent of the other, the window loop: the generic's record keeps
// that loop whole (the summed one, else the shorter: here d0, over 4 values) and every path
// of ipu-plan keeps it so (`Space.admits`) while it cuts the other.

// -----

// The shortcut (no combiner: the result cut row-major) would cut d0, the result's rows; the
// cost model's search cuts d1 instead.
// CHECK-LABEL: func.func @unfold
// CHECK: linalg.generic {{.*}} ipu.partition = array<i64: 4, 4>

#in = affine_map<(d0, d1) -> (d0 + d1)>
#out = affine_map<(d0, d1) -> (d0, d1)>
module attributes {ipu.target = "tiny"} {
  func.func @unfold(%a: tensor<67xf32>) -> tensor<4x64xf32> {
    %e = tensor.empty() : tensor<4x64xf32>
    %r = linalg.generic {indexing_maps = [#in, #out], iterator_types = ["parallel", "parallel"]} ins(%a : tensor<67xf32>) outs(%e : tensor<4x64xf32>) {
    ^bb0(%x: f32, %o: f32):
      linalg.yield %x : f32
    } -> tensor<4x64xf32>
    return %r : tensor<4x64xf32>
  }
}

// -----

// The same in a loop's body, planned once.
// CHECK-LABEL: func.func @unfold_in_loop
// CHECK: scf.for
// CHECK: linalg.generic {{.*}} ipu.partition = array<i64: 4, 4>

#in = affine_map<(d0, d1) -> (d0 + d1)>
#id = affine_map<(d0, d1) -> (d0, d1)>
module attributes {ipu.target = "tiny"} {
  func.func @unfold_in_loop(%a: tensor<67xf32>, %acc0: tensor<4x64xf32>) -> tensor<4x64xf32> {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c3 = arith.constant 3 : index
    %r = scf.for %i = %c0 to %c3 step %c1 iter_args(%acc = %acc0) -> tensor<4x64xf32> {
      %n = linalg.generic {indexing_maps = [#in, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%a, %acc : tensor<67xf32>, tensor<4x64xf32>) outs(%acc : tensor<4x64xf32>) {
      ^bb0(%x: f32, %y: f32, %o: f32):
        %s = arith.addf %x, %y : f32
        linalg.yield %s : f32
      } -> tensor<4x64xf32>
      scf.yield %n : tensor<4x64xf32>
    }
    return %r : tensor<4x64xf32>
  }
}

// -----

// The reuse path: %m is cut in rows, along the window loop d0 of the second generic, which
// does not take its partition.
// CHECK-LABEL: func.func @reuse
// CHECK: linalg.generic {{.*}} ipu.partition = array<i64: 1, 64>
// CHECK: linalg.generic {{.*}} ipu.partition = array<i64: 4, 4>

#in = affine_map<(d0, d1) -> (d0 + d1)>
#id = affine_map<(d0, d1) -> (d0, d1)>
module attributes {ipu.target = "tiny"} {
  func.func @reuse(%a: tensor<67xf32>, %b: tensor<4x64xf32>) -> tensor<4x64xf32> {
    %e = tensor.empty() : tensor<4x64xf32>
    %m = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%b : tensor<4x64xf32>) outs(%e : tensor<4x64xf32>) {
    ^bb0(%y: f32, %o: f32):
      %n = arith.negf %y : f32
      linalg.yield %n : f32
    } -> tensor<4x64xf32>
    %r = linalg.generic {indexing_maps = [#in, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%a, %m : tensor<67xf32>, tensor<4x64xf32>) outs(%e : tensor<4x64xf32>) {
    ^bb0(%x: f32, %y: f32, %o: f32):
      %s = arith.addf %x, %y : f32
      linalg.yield %s : f32
    } -> tensor<4x64xf32>
    return %r : tensor<4x64xf32>
  }
}

// -----

// The search (a reduction with a combiner, addi): the summed d0 is the window loop, whole
// (cut as a summed loop, each part would read its window from the start of its part of d1
// alone); the result's d1 is cut.
// CHECK-LABEL: func.func @window_sum
// CHECK: linalg.generic {{.*}} ipu.partition = array<i64: 1024, 1>

#in = affine_map<(d0, d1) -> (d0 + d1)>
#w = affine_map<(d0, d1) -> (d0)>
#out = affine_map<(d0, d1) -> (d1)>
module attributes {ipu.target = "tiny"} {
  func.func @window_sum(%a: tensor<1027xi32>, %w: tensor<1024xi32>, %init: tensor<4xi32>) -> tensor<4xi32> {
    %r = linalg.generic {indexing_maps = [#in, #w, #out], iterator_types = ["reduction", "parallel"]} ins(%a, %w : tensor<1027xi32>, tensor<1024xi32>) outs(%init : tensor<4xi32>) {
    ^bb0(%x: i32, %k: i32, %acc: i32):
      %m = arith.muli %x, %k : i32
      %d = arith.addi %acc, %m : i32
      linalg.yield %d : i32
    } -> tensor<4xi32>
    return %r : tensor<4xi32>
  }
}
