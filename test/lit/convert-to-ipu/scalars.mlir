// RUN: ipu-opt %s --split-input-file -p 'builtin.module(ipu-convert-to-ipu)' | FileCheck %s

// Scalars become 0-d tensors (lowering/scalars.py): an element read at constant coordinates is
// a 0-d slice, scalar arithmetic a one-element generic, a scalar a generic captures a broadcast
// input, an element written at constant coordinates a 0-d insert_slice.

// CHECK-LABEL: func.func @straight_line
// CHECK: %[[S:.*]] = tensor.extract_slice %arg0[3] [1] [1] : tensor<8xf32> to tensor<1xf32>
// CHECK: %[[X:.*]] = tensor.collapse_shape %[[S]] [] : tensor<1xf32> into tensor<f32>
// CHECK: %[[Y:.*]] = linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}], iterator_types = []} ins(%[[X]] : tensor<f32>) outs(%{{.*}} : tensor<f32>)
// CHECK: arith.mulf
// CHECK: linalg.generic {indexing_maps = [#[[ID:.*]], #[[BROADCAST:.*]], #[[ID]]], iterator_types = ["parallel"]} ins(%arg0, %[[Y]] : tensor<8xf32>, tensor<f32>)
// CHECK: %[[E:.*]] = tensor.expand_shape %[[Y]] [] output_shape [1] : tensor<f32> into tensor<1xf32>
// CHECK: tensor.insert_slice %[[E]] into %{{.*}}[0] [1] [1] : tensor<1xf32> into tensor<8xf32>
// CHECK-NOT: tensor.extract %
func.func @straight_line(%a: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %c0 = arith.constant 0 : index
  %c3 = arith.constant 3 : index
  %x = tensor.extract %a[%c3] : tensor<8xf32>
  %y = arith.mulf %x, %x : f32
  %e = tensor.empty() : tensor<8xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%a : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%in: f32, %o: f32):
    %v = arith.addf %in, %y : f32
    linalg.yield %v : f32
  } -> tensor<8xf32>
  %i = tensor.insert %y into %a[%c0] : tensor<8xf32>
  return %s, %i : tensor<8xf32>, tensor<8xf32>
}

// -----

// Elements gathered into a tensor: expanded and concatenated. A splat of a computed scalar is a
// broadcast generic (the subtraction fused into it, both 0-d inputs broadcast).

// CHECK-LABEL: func.func @from_elements
// CHECK: tensor.concat dim(0) %{{.*}}, %{{.*}} : (tensor<1xf32>, tensor<1xf32>) -> tensor<2xf32>
// CHECK: linalg.generic {indexing_maps = [#[[B:.*]], #[[B]], #{{.*}}], iterator_types = ["parallel", "parallel"]} ins(%{{.*}}, %{{.*}} : tensor<f32>, tensor<f32>) outs(%{{.*}} : tensor<2x3xf32>)
// CHECK: arith.subf
func.func @from_elements(%a: tensor<8xf32>) -> (tensor<2xf32>, tensor<2x3xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %x = tensor.extract %a[%c0] : tensor<8xf32>
  %y = tensor.extract %a[%c1] : tensor<8xf32>
  %z = arith.subf %x, %y : f32
  %t = tensor.from_elements %x, %y : tensor<2xf32>
  %s = tensor.splat %z : tensor<2x3xf32>
  return %t, %s : tensor<2xf32>, tensor<2x3xf32>
}

// -----

// Control flow on 0-d tensors: a predicate (tensor.extract of the 0-d i1) just before scf.if,
// scalar results and carried values as 0-d tensors, the induction variable that scalar code
// reads carried as a 0-d i64 counter (init the lower bound, the step added at each yield), an
// element read at it a gather.

// CHECK-LABEL: func.func @control_flow
// CHECK: %{{.*}}:3 = scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%{{.*}} = %{{.*}}, %[[SUM:.*]] = %{{.*}}, %[[K:.*]] = %{{.*}}) -> (tensor<8xf32>, tensor<f32>, tensor<i64>)
// CHECK: ipu.gather
// CHECK: %[[P:.*]] = tensor.extract %{{.*}}[] : tensor<i1>
// CHECK: scf.if %[[P]] -> (tensor<f32>)
// CHECK: scf.yield %{{.*}}, %{{.*}}, %{{.*}} : tensor<8xf32>, tensor<f32>, tensor<i64>
func.func @control_flow(%a: tensor<8xf32>) -> tensor<8xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  %r:2 = scf.for %k = %c0 to %c8 step %c1 iter_args(%t = %a, %sum = %zero) -> (tensor<8xf32>, f32) {
    %x = tensor.extract %t[%k] : tensor<8xf32>
    %big = arith.cmpf ogt, %x, %zero : f32
    %n = scf.if %big -> f32 {
      %s = arith.addf %sum, %x : f32
      scf.yield %s : f32
    } else {
      scf.yield %sum : f32
    }
    %t2 = tensor.insert %n into %t[%k] : tensor<8xf32>
    scf.yield %t2, %n : tensor<8xf32>, f32
  }
  return %r#0 : tensor<8xf32>
}

// -----

// scf.while: the before block ends in scf.condition on a predicate; values flow as 0-d tensors.

// CHECK-LABEL: func.func @while
// CHECK: scf.while (%{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}) : (tensor<4xf32>, tensor<i32>) -> (tensor<4xf32>, tensor<i32>)
// CHECK: %[[P:.*]] = tensor.extract %{{.*}}[] : tensor<i1>
// CHECK: scf.condition(%[[P]]) %{{.*}}, %{{.*}} : tensor<4xf32>, tensor<i32>
// CHECK: } do {
// CHECK: ^bb0(%{{.*}}: tensor<4xf32>, %{{.*}}: tensor<i32>):
func.func @while(%a: tensor<4xf32>) -> tensor<4xf32> {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c5 = arith.constant 5 : i32
  %r:2 = scf.while (%t = %a, %k = %c0) : (tensor<4xf32>, i32) -> (tensor<4xf32>, i32) {
    %go = arith.cmpi slt, %k, %c5 : i32
    scf.condition(%go) %t, %k : tensor<4xf32>, i32
  } do {
  ^bb0(%t: tensor<4xf32>, %k: i32):
    %d = arith.addf %t, %t : tensor<4xf32>
    %k1 = arith.addi %k, %c1 : i32
    scf.yield %d, %k1 : tensor<4xf32>, i32
  }
  return %r#0 : tensor<4xf32>
}

// -----

// scf.index_switch: its index, an i64 0-d tensor, read by a predicate (tensor.extract and an
// index_cast) just before it.

// CHECK-LABEL: func.func @switch
// CHECK: %[[X:.*]] = tensor.extract %{{.*}}[] : tensor<i64>
// CHECK-NEXT: %[[I:.*]] = arith.index_cast %[[X]] : i64 to index
// CHECK-NEXT: scf.index_switch %[[I]] -> tensor<f32>
func.func @switch(%a: tensor<4xf32>, %n: tensor<2xi32>) -> tensor<4xf32> {
  %c0 = arith.constant 0 : index
  %e = tensor.extract %n[%c0] : tensor<2xi32>
  %i = arith.index_cast %e : i32 to index
  %x = tensor.extract %a[%c0] : tensor<4xf32>
  %r = scf.index_switch %i -> f32
  case 1 {
    %d = arith.addf %x, %x : f32
    scf.yield %d : f32
  }
  default {
    scf.yield %x : f32
  }
  %s = tensor.splat %r : tensor<4xf32>
  return %s : tensor<4xf32>
}
