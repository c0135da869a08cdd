// RUN: ipu-opt %s --split-input-file -p 'builtin.module(ipu-convert-to-ipu)' | FileCheck %s

// A loop with constant bounds and a carried tensor stays a loop; its body is converted like a
// function body: the matmul becomes ipu.matmul, the element-wise tanh a linalg.generic.

// CHECK-LABEL: func.func @recurrent
// CHECK: scf.for {{.*}} iter_args(%[[H:.*]] = %arg0) -> (tensor<4x8xf32>)
// CHECK: %[[M:.*]] = "ipu.matmul"(%[[H]], %arg1)
// CHECK: %[[T:.*]] = linalg.generic {{.*}} ins(%[[M]] : tensor<4x8xf32>)
// CHECK: math.tanh
// CHECK: scf.yield %[[T]] : tensor<4x8xf32>
func.func @recurrent(%h0: tensor<4x8xf32>, %w: tensor<8x8xf32>) -> tensor<4x8xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c10 = arith.constant 10 : index
  %zero = arith.constant 0.0 : f32
  %r = scf.for %t = %c0 to %c10 step %c1 iter_args(%h = %h0) -> tensor<4x8xf32> {
    %e = tensor.empty() : tensor<4x8xf32>
    %fill = linalg.fill ins(%zero : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
    %hw = linalg.matmul ins(%h, %w : tensor<4x8xf32>, tensor<8x8xf32>) outs(%fill : tensor<4x8xf32>) -> tensor<4x8xf32>
    %next = linalg.tanh ins(%hw : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
    scf.yield %next : tensor<4x8xf32>
  }
  return %r : tensor<4x8xf32>
}

// -----

// Nested loops: the inner body is converted too (the element-wise add becomes a generic).

// CHECK-LABEL: func.func @nested
// CHECK: scf.for
// CHECK: scf.for
// CHECK: linalg.generic
// CHECK: arith.addf
func.func @nested(%x: tensor<16xf32>) -> tensor<16xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %r = scf.for %i = %c0 to %c3 step %c1 iter_args(%a = %x) -> tensor<16xf32> {
    %s = scf.for %j = %c0 to %c3 step %c1 iter_args(%b = %a) -> tensor<16xf32> {
      %n = arith.addf %b, %x : tensor<16xf32>
      scf.yield %n : tensor<16xf32>
    }
    scf.yield %s : tensor<16xf32>
  }
  return %r : tensor<16xf32>
}

// -----

// A tensor.extract at computed coordinates in a loop body becomes an ipu.gather there, its table
// the carried tensor of this iteration.

// CHECK-LABEL: func.func @gather_in_body
// CHECK: scf.for {{.*}} iter_args(%[[U:.*]] = %arg0)
// CHECK: %[[TABLE:.*]] = tensor.expand_shape %[[U]]
// CHECK: %[[FLAT:.*]] = linalg.generic {{.*}} ins(%arg1 : tensor<4xi64>)
// CHECK: %[[VALUES:.*]] = "ipu.gather"(%[[TABLE]], %[[FLAT]], %{{.*}})
// CHECK: %[[R:.*]] = linalg.generic {{.*}} ins(%[[U]], %[[VALUES]] : tensor<4xf32>, tensor<4x1xf32>)
// CHECK-NOT: tensor.extract
// CHECK: scf.yield %[[R]]
func.func @gather_in_body(%u0: tensor<4xf32>, %rev: tensor<4xi64>) -> tensor<4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %r = scf.for %s = %c0 to %c3 step %c1 iter_args(%u = %u0) -> tensor<4xf32> {
    %e = tensor.empty() : tensor<4xf32>
    %v = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
        ins(%u, %rev : tensor<4xf32>, tensor<4xi64>) outs(%e : tensor<4xf32>) {
    ^bb0(%a: f32, %k: i64, %o: f32):
      %j = arith.index_cast %k : i64 to index
      %b = tensor.extract %u[%j] : tensor<4xf32>
      %w = arith.addf %a, %b : f32
      linalg.yield %w : f32
    } -> tensor<4xf32>
    scf.yield %v : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// -----

// An arg-reduction in a loop body becomes the value reduction, the first index holding it and a
// select, as in a function body (here fused into the generic reading the index).

// CHECK-LABEL: func.func @argmax_in_body
// CHECK: scf.for {{.*}} iter_args(%[[X:.*]] = %arg0)
// CHECK: %[[V:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]} ins(%[[X]] : tensor<3x5xf32>)
// CHECK: arith.maximumf
// CHECK: %[[FIRST:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]} ins(%[[X]], %{{.*}}, %[[V]] :
// CHECK: arith.minsi
// CHECK: %[[Y:.*]] = linalg.generic {{.*}} ins(%[[X]], %[[V]], %{{.*}}, %[[FIRST]] :
// CHECK: arith.cmpf ogt
// CHECK: scf.yield %[[Y]]
func.func @argmax_in_body(%x0: tensor<3x5xf32>) -> tensor<3x5xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0 : i64
  %iota = arith.constant dense<[0, 1, 2, 3, 4]> : tensor<5xi64>
  %r = scf.for %s = %c0 to %c3 step %c1 iter_args(%x = %x0) -> tensor<3x5xf32> {
    %e = tensor.empty() : tensor<3xf32>
    %m0 = linalg.fill ins(%ninf : f32) outs(%e : tensor<3xf32>) -> tensor<3xf32>
    %ei = tensor.empty() : tensor<3xi64>
    %i0 = linalg.fill ins(%zero : i64) outs(%ei : tensor<3xi64>) -> tensor<3xi64>
    %m:2 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]}
        ins(%x, %iota : tensor<3x5xf32>, tensor<5xi64>) outs(%m0, %i0 : tensor<3xf32>, tensor<3xi64>) {
    ^bb0(%in: f32, %k: i64, %acc: f32, %idx: i64):
      %mx = arith.maximumf %in, %acc : f32
      %gt = arith.cmpf ogt, %in, %acc : f32
      %sel = arith.select %gt, %k, %idx : i64
      linalg.yield %mx, %sel : f32, i64
    } -> (tensor<3xf32>, tensor<3xi64>)
    %ex = tensor.empty() : tensor<3x5xf32>
    %y = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
        ins(%x, %m#1 : tensor<3x5xf32>, tensor<3xi64>) outs(%ex : tensor<3x5xf32>) {
    ^bb0(%a: f32, %i: i64, %o: f32):
      %f = arith.sitofp %i : i64 to f32
      %w = arith.addf %a, %f : f32
      linalg.yield %w : f32
    } -> tensor<3x5xf32>
    scf.yield %y : tensor<3x5xf32>
  }
  return %r : tensor<3x5xf32>
}
