// RUN: ipu-opt %s --split-input-file -p 'builtin.module(ipu-plan)' | FileCheck %s

// A generic's window `d_out + d_win` reads, in each part, the window loop's whole extent
// from where its part of d_out starts: the window loop stays whole (the record keeps it so,
// `Space.admits`), whichever path of ipu-plan chooses the partition. A summed loop whose
// partial results have no associative combiner (`acc - x`) stays whole too.

// -----

// The shortcut (no combiner: the result cut row-major) would cut the window loop d1 (the
// result's rows); the cost model's search cuts d0 instead.
// CHECK-LABEL: func.func @unfold
// CHECK: linalg.generic {{.*}} ipu.partition = array<i64: 1, 64>

#in = affine_map<(d0, d1) -> (d0 + d1)>
#out = affine_map<(d0, d1) -> (d1, d0)>
module attributes {ipu.target = "tiny"} {
  func.func @unfold(%a: tensor<67xf32>) -> tensor<64x4xf32> {
    %e = tensor.empty() : tensor<64x4xf32>
    %r = linalg.generic {indexing_maps = [#in, #out], iterator_types = ["parallel", "parallel"]} ins(%a : tensor<67xf32>) outs(%e : tensor<64x4xf32>) {
    ^bb0(%x: f32, %o: f32):
      linalg.yield %x : f32
    } -> tensor<64x4xf32>
    return %r : tensor<64x4xf32>
  }
}

// -----

// The same in a loop's body, planned once.
// CHECK-LABEL: func.func @unfold_in_loop
// CHECK: scf.for
// CHECK: linalg.generic {{.*}} ipu.partition = array<i64: 1, 64>

#in = affine_map<(d0, d1) -> (d0 + d1)>
#id = affine_map<(d0, d1) -> (d1, d0)>
module attributes {ipu.target = "tiny"} {
  func.func @unfold_in_loop(%a: tensor<67xf32>, %acc0: tensor<64x4xf32>) -> tensor<64x4xf32> {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c3 = arith.constant 3 : index
    %r = scf.for %i = %c0 to %c3 step %c1 iter_args(%acc = %acc0) -> tensor<64x4xf32> {
      %n = linalg.generic {indexing_maps = [#in, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%a, %acc : tensor<67xf32>, tensor<64x4xf32>) outs(%acc : tensor<64x4xf32>) {
      ^bb0(%x: f32, %y: f32, %o: f32):
        %s = arith.addf %x, %y : f32
        linalg.yield %s : f32
      } -> tensor<64x4xf32>
      scf.yield %n : tensor<64x4xf32>
    }
    return %r : tensor<64x4xf32>
  }
}

// -----

// The reuse path: %m, cut in rows, is read along the window loop d1; the generic does not
// take its partition.
// CHECK-LABEL: func.func @reuse
// CHECK: linalg.generic {{.*}} ipu.partition = array<i64: 4, 16>
// CHECK: linalg.generic {{.*}} ipu.partition = array<i64: 1, 64>

#in = affine_map<(d0, d1) -> (d0 + d1)>
#id = affine_map<(d0, d1) -> (d1, d0)>
module attributes {ipu.target = "tiny"} {
  func.func @reuse(%a: tensor<67xf32>, %b: tensor<64x4xf32>) -> tensor<64x4xf32> {
    %e = tensor.empty() : tensor<64x4xf32>
    %m = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%b : tensor<64x4xf32>) outs(%e : tensor<64x4xf32>) {
    ^bb0(%y: f32, %o: f32):
      %n = arith.negf %y : f32
      linalg.yield %n : f32
    } -> tensor<64x4xf32>
    %r = linalg.generic {indexing_maps = [#in, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%a, %m : tensor<67xf32>, tensor<64x4xf32>) outs(%e : tensor<64x4xf32>) {
    ^bb0(%x: f32, %y: f32, %o: f32):
      %s = arith.addf %x, %y : f32
      linalg.yield %s : f32
    } -> tensor<64x4xf32>
    return %r : tensor<64x4xf32>
  }
}

// -----

// The search (a reduction with a combiner, addi): the summed loop d0 is cut, the window
// loop d1 (the result's) not.
// CHECK-LABEL: func.func @window_sum
// CHECK: linalg.generic {{.*}} ipu.partition = array<i64: 1, 256>

#in = affine_map<(d0, d1) -> (d0 + d1)>
#w = affine_map<(d0, d1) -> (d0)>
#out = affine_map<(d0, d1) -> (d1)>
module attributes {ipu.target = "tiny"} {
  func.func @window_sum(%a: tensor<259xi32>, %w: tensor<4xi32>, %init: tensor<256xi32>) -> tensor<256xi32> {
    %r = linalg.generic {indexing_maps = [#in, #w, #out], iterator_types = ["reduction", "parallel"]} ins(%a, %w : tensor<259xi32>, tensor<4xi32>) outs(%init : tensor<256xi32>) {
    ^bb0(%x: i32, %k: i32, %acc: i32):
      %m = arith.muli %x, %k : i32
      %d = arith.addi %acc, %m : i32
      linalg.yield %d : i32
    } -> tensor<256xi32>
    return %r : tensor<256xi32>
  }
}

// -----

// The same with `acc - x`: no associative combiner, so neither loop is cut.
// CHECK-LABEL: func.func @window_difference
// CHECK: linalg.generic {{.*}} ipu.partition = array<i64: 4, 256>

#in = affine_map<(d0, d1) -> (d0 + d1)>
#w = affine_map<(d0, d1) -> (d0)>
#out = affine_map<(d0, d1) -> (d1)>
module attributes {ipu.target = "tiny"} {
  func.func @window_difference(%a: tensor<259xi32>, %w: tensor<4xi32>, %init: tensor<256xi32>) -> tensor<256xi32> {
    %r = linalg.generic {indexing_maps = [#in, #w, #out], iterator_types = ["reduction", "parallel"]} ins(%a, %w : tensor<259xi32>, tensor<4xi32>) outs(%init : tensor<256xi32>) {
    ^bb0(%x: i32, %k: i32, %acc: i32):
      %m = arith.muli %x, %k : i32
      %d = arith.subi %acc, %m : i32
      linalg.yield %d : i32
    } -> tensor<256xi32>
    return %r : tensor<256xi32>
  }
}
