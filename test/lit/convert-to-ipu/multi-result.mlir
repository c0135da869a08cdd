// RUN: ipu-opt %s --split-input-file -p 'builtin.module(ipu-convert-to-ipu)' | FileCheck %s

// Arg-reductions (torch.argmax, torch.max(x, dim)) as torch-mlir exports them, after
// ipu-index-to-iota: one generic whose index result reads the value result's accumulator. It
// becomes the value reduction, the first position holding the value (a minsi reduction from
// the loop's extent) and a select keeping the index's init when the value does not beat the
// value's init.

// CHECK-LABEL: func.func @max_with_index
// CHECK-DAG: %[[PAST_END:.*]] = arith.constant dense<5> : tensor<3xi64>
// CHECK-DAG: %[[IOTA:.*]] = arith.constant dense<[0, 1, 2, 3, 4]> : tensor<5xi64>
// CHECK: %[[V:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]} ins(%[[X:.*]] : tensor<3x5xf32>) outs(%[[VINIT:.*]] : tensor<3xf32>)
// CHECK: arith.maximumf
// CHECK: %[[FIRST:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]} ins(%[[X]], %[[IOTA]], %[[V]] : tensor<3x5xf32>, tensor<5xi64>, tensor<3xf32>) outs(%[[PAST_END]] : tensor<3xi64>)
// CHECK: arith.cmpf oeq
// CHECK: arith.select
// CHECK: arith.minsi
// CHECK: %[[I:.*]] = linalg.generic {{.*}}iterator_types = ["parallel"]} ins(%[[V]], %[[VINIT]], %[[FIRST]] : tensor<3xf32>, tensor<3xf32>, tensor<3xi64>)
// CHECK: %[[BETTER:.*]] = arith.cmpf ogt
// CHECK: arith.select %[[BETTER]], %{{.*}}, %c0_i64
// CHECK: return %[[V]], %[[I]]
func.func @max_with_index(%x: tensor<3x5xf32>) -> (tensor<3xf32>, tensor<3xi64>) {
  %ninf = arith.constant 0xFF800000 : f32
  %c0 = arith.constant 0 : i64
  %iota = arith.constant dense<[0, 1, 2, 3, 4]> : tensor<5xi64>
  %e = tensor.empty() : tensor<3xf32>
  %m0 = linalg.fill ins(%ninf : f32) outs(%e : tensor<3xf32>) -> tensor<3xf32>
  %ei = tensor.empty() : tensor<3xi64>
  %i0 = linalg.fill ins(%c0 : i64) outs(%ei : tensor<3xi64>) -> tensor<3xi64>
  %r:2 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%x, %iota : tensor<3x5xf32>, tensor<5xi64>) outs(%m0, %i0 : tensor<3xf32>, tensor<3xi64>) {
  ^bb0(%in: f32, %k: i64, %acc: f32, %idx: i64):
    %m = arith.maximumf %in, %acc : f32
    %gt = arith.cmpf ogt, %in, %acc : f32
    %s = arith.select %gt, %k, %idx : i64
    linalg.yield %m, %s : f32, i64
  } -> (tensor<3xf32>, tensor<3xi64>)
  return %r#0, %r#1 : tensor<3xf32>, tensor<3xi64>
}

// -----

// argmin on integers, the index alone returned: the unread minimum is still computed (the
// index reads its accumulator).

// CHECK-LABEL: func.func @argmin
// CHECK: %[[V:.*]] = linalg.generic {{.*}}["parallel", "reduction"]} ins(%{{.*}} : tensor<4x6xi32>)
// CHECK: arith.minsi
// CHECK: %[[FIRST:.*]] = linalg.generic {{.*}}ins(%{{.*}}, %{{.*}}, %[[V]] :
// CHECK: arith.cmpi eq
// CHECK: arith.minsi
// CHECK: %[[I:.*]] = linalg.generic {{.*}}ins(%[[V]], %{{.*}}, %[[FIRST]] :
// CHECK: arith.cmpi slt
// CHECK: return %[[I]]
func.func @argmin(%x: tensor<4x6xi32>) -> tensor<4xi64> {
  %big = arith.constant 2147483647 : i32
  %c0 = arith.constant 0 : i64
  %iota = arith.constant dense<[0, 1, 2, 3, 4, 5]> : tensor<6xi64>
  %e = tensor.empty() : tensor<4xi32>
  %m0 = linalg.fill ins(%big : i32) outs(%e : tensor<4xi32>) -> tensor<4xi32>
  %ei = tensor.empty() : tensor<4xi64>
  %i0 = linalg.fill ins(%c0 : i64) outs(%ei : tensor<4xi64>) -> tensor<4xi64>
  %r:2 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%x, %iota : tensor<4x6xi32>, tensor<6xi64>) outs(%m0, %i0 : tensor<4xi32>, tensor<4xi64>) {
  ^bb0(%in: i32, %k: i64, %acc: i32, %idx: i64):
    %m = arith.minsi %in, %acc : i32
    %lt = arith.cmpi slt, %in, %acc : i32
    %s = arith.select %lt, %k, %idx : i64
    linalg.yield %m, %s : i32, i64
  } -> (tensor<4xi32>, tensor<4xi64>)
  return %r#1 : tensor<4xi64>
}

// -----

// The index taken from an input that is not an iota (nothing says it grows along the loop):
// no arg-reduction, the generic stays whole and ipu-plan names it.

// CHECK-LABEL: func.func @index_from_data
// CHECK: %{{.*}}:2 = linalg.generic
func.func @index_from_data(%x: tensor<3x5xf32>, %j: tensor<5xi64>) -> (tensor<3xf32>, tensor<3xi64>) {
  %ninf = arith.constant 0xFF800000 : f32
  %c0 = arith.constant 0 : i64
  %e = tensor.empty() : tensor<3xf32>
  %m0 = linalg.fill ins(%ninf : f32) outs(%e : tensor<3xf32>) -> tensor<3xf32>
  %ei = tensor.empty() : tensor<3xi64>
  %i0 = linalg.fill ins(%c0 : i64) outs(%ei : tensor<3xi64>) -> tensor<3xi64>
  %r:2 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%x, %j : tensor<3x5xf32>, tensor<5xi64>) outs(%m0, %i0 : tensor<3xf32>, tensor<3xi64>) {
  ^bb0(%in: f32, %k: i64, %acc: f32, %idx: i64):
    %m = arith.maximumf %in, %acc : f32
    %gt = arith.cmpf ogt, %in, %acc : f32
    %s = arith.select %gt, %k, %idx : i64
    linalg.yield %m, %s : f32, i64
  } -> (tensor<3xf32>, tensor<3xi64>)
  return %r#0, %r#1 : tensor<3xf32>, tensor<3xi64>
}
