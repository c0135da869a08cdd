// RUN: ipu-opt %s --allow-unregistered-dialect --split-input-file -p 'builtin.module(ipu-convert-tm-tensor)' | FileCheck %s

// x.index_put((rows,), values, accumulate=True) as torch-mlir exports it: each index column
// becomes a vector (a slice); the updates naming a position (a negative index counting from
// the end, as in PyTorch) are folded from the combiner's identity over the update loop (d2),
// then added to the original.

// CHECK-DAG: #[[UPDATE:.*]] = affine_map<(d0, d1, d2) -> (d2, 0, d1)>
// CHECK-DAG: #[[COLUMN:.*]] = affine_map<(d0, d1, d2) -> (d2)>
// CHECK-DAG: #[[OUT:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func.func @accumulate
// CHECK: %[[ROWS:.*]] = tensor.extract_slice %{{.*}}[0, 0] [2, 1] [1, 1] : tensor<2x1xi64> to tensor<2xi64>
// CHECK: %[[FOLDED:.*]] = linalg.generic {indexing_maps = [#[[UPDATE]], #[[COLUMN]], #[[OUT]]], iterator_types = ["parallel", "parallel", "reduction"]} ins(%{{.*}}, %[[ROWS]] : tensor<2x1x8xf32>, tensor<2xi64>)
// CHECK: %[[P:.*]] = linalg.index 0 : index
// CHECK: %[[P64:.*]] = arith.index_cast %[[P]] : index to i64
// CHECK: %[[HIT:.*]] = arith.cmpi eq, %[[ROW:.*]], %[[P64]] : i64
// CHECK: %[[WRAPPED:.*]] = arith.addi %[[ROW]], %c3_i64 : i64
// CHECK: %[[FROM_END:.*]] = arith.cmpi eq, %[[WRAPPED]], %[[P64]] : i64
// CHECK: %[[NAMED:.*]] = arith.ori %[[HIT]], %[[FROM_END]] : i1
// CHECK: arith.select %[[NAMED]]
// CHECK: %[[SUM:.*]] = linalg.generic {{.*}} ins(%arg0, %[[FOLDED]] : tensor<3x8xf32>, tensor<3x8xf32>)
// CHECK: arith.addf
// CHECK: return %[[SUM]]
func.func @accumulate(%arg0: tensor<3x8xf32>, %arg1: tensor<2xi64>, %arg2: tensor<2x8xf32>) -> tensor<3x8xf32> {
  %0 = "tensor.expand_shape"(%arg1) <{reassociation = [[0, 1]], static_output_shape = array<i64: 2, 1>}> : (tensor<2xi64>) -> tensor<2x1xi64>
  %1 = "tensor.expand_shape"(%arg2) <{reassociation = [[0], [1, 2]], static_output_shape = array<i64: 2, 1, 8>}> : (tensor<2x8xf32>) -> tensor<2x1x8xf32>
  %2 = "tm_tensor.scatter"(%1, %0, %arg0) <{dimension_map = array<i64: 0>, operandSegmentSizes = array<i32: 2, 1>, unique_indices = false}> ({
  ^bb0(%u: f32, %o: f32):
    %3 = "arith.addf"(%o, %u) <{fastmath = #arith.fastmath<none>}> : (f32, f32) -> f32
    "tm_tensor.yield"(%3) : (f32) -> ()
  }) : (tensor<2x1x8xf32>, tensor<2x1xi64>, tensor<3x8xf32>) -> tensor<3x8xf32>
  return %2 : tensor<3x8xf32>
}

// -----

// x.scatter(1, index, src) (overwrite, two index columns, scalar updates): the last update
// naming a position wins (a max over the update loop, -1 for none), is picked, and replaces
// the original where there is one.

// CHECK-LABEL: func.func @overwrite
// CHECK: %[[C0:.*]] = tensor.extract_slice %arg1[0, 0] [12, 1] [1, 1] : tensor<12x2xi64> to tensor<12xi64>
// CHECK: %[[C1:.*]] = tensor.extract_slice %arg1[0, 1] [12, 1] [1, 1] : tensor<12x2xi64> to tensor<12xi64>
// CHECK: %[[WINNERS:.*]] = linalg.generic {{.*}} ins(%[[C0]], %[[C1]] : tensor<12xi64>, tensor<12xi64>)
// CHECK: arith.andi
// CHECK: arith.maxsi
// CHECK: %[[PICKED:.*]] = linalg.generic {{.*}} ins(%arg2, %[[WINNERS]] : tensor<12xf32>, tensor<3x8xi64>)
// CHECK: %[[OUT:.*]] = linalg.generic {{.*}} ins(%[[WINNERS]], %[[PICKED]], %arg0 : tensor<3x8xi64>, tensor<3x8xf32>, tensor<3x8xf32>)
// CHECK: arith.cmpi sge
// CHECK: return %[[OUT]]
func.func @overwrite(%arg0: tensor<3x8xf32>, %arg1: tensor<12x2xi64>, %arg2: tensor<12xf32>) -> tensor<3x8xf32> {
  %2 = "tm_tensor.scatter"(%arg2, %arg1, %arg0) <{dimension_map = array<i64: 0, 1>, operandSegmentSizes = array<i32: 2, 1>, unique_indices = false}> ({
  ^bb0(%u: f32, %o: f32):
    "tm_tensor.yield"(%u) : (f32) -> ()
  }) : (tensor<12xf32>, tensor<12x2xi64>, tensor<3x8xf32>) -> tensor<3x8xf32>
  return %2 : tensor<3x8xf32>
}
