// RUN: ipu-opt %s --allow-unregistered-dialect --split-input-file -p 'builtin.module(ipu-convert-tm-tensor)' | FileCheck %s
// RUN: ipu-opt %s --allow-unregistered-dialect --split-input-file -p 'builtin.module(ipu-convert-tm-tensor{linalg-only=true})' | FileCheck %s --check-prefix=LINALG

// By default a scatter becomes `ipu.scatter` on rows (work linear in the updates): each
// update's row computed once by an element-wise generic (-1 when out of range), the updates
// as an N x D table. Under linalg-only (the ExecutionEngine reference's form) it becomes
// generics comparing every update with every position (LINALG).

// x.index_put((rows,), values, accumulate=True) as torch-mlir exports it: each index column
// becomes a vector (a slice); the updates naming a position (a negative index counting from
// the end, as in PyTorch) are folded from the combiner's identity over the update loop (d2),
// then added to the original.

// CHECK-LABEL: func.func @accumulate
// CHECK: %[[ROWS:.*]] = tensor.extract_slice %{{.*}}[0, 0] [2, 1] [1, 1] : tensor<2x1xi64> to tensor<2xi64>
// CHECK: %[[AT:.*]] = linalg.generic {{.*}} iterator_types = ["parallel"]} ins(%[[ROWS]] : tensor<2xi64>)
// CHECK: %[[NEGATIVE:.*]] = arith.cmpi slt, %[[I:.*]], %c0_i64 : i64
// CHECK: %[[FROM_END:.*]] = arith.addi %[[I]], %c3_i64 : i64
// CHECK: %[[WRAPPED:.*]] = arith.select %[[NEGATIVE]], %[[FROM_END]], %[[I]] : i64
// CHECK: %[[INSIDE:.*]] = arith.andi
// CHECK: arith.select %[[INSIDE]], %[[WRAPPED]], %c-1_i64 : i64
// CHECK: %[[TABLE:.*]] = tensor.collapse_shape %{{.*}} {{\[}}[0], [1, 2]] : tensor<2x1x8xf32> into tensor<2x8xf32>
// CHECK: %[[IOTA:.*]] = arith.constant dense<[0, 1, 2]> : tensor<3xi64>
// CHECK: %[[FOLDED:.*]] = "ipu.scatter"(%[[TABLE]], %[[AT]], %[[IOTA]]) {combiner = "arith.addf"} : (tensor<2x8xf32>, tensor<2xi64>, tensor<3xi64>) -> tensor<3x8xf32>
// CHECK: %[[SUM:.*]] = linalg.generic {{.*}} ins(%arg0, %[[FOLDED]] : tensor<3x8xf32>, tensor<3x8xf32>)
// CHECK: arith.addf
// CHECK: return %[[SUM]]

// LINALG-DAG: #[[UPDATE:.*]] = affine_map<(d0, d1, d2) -> (d2, 0, d1)>
// LINALG-DAG: #[[COLUMN:.*]] = affine_map<(d0, d1, d2) -> (d2)>
// LINALG-DAG: #[[OUT:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// LINALG-LABEL: func.func @accumulate
// LINALG: %[[ROWS:.*]] = tensor.extract_slice %{{.*}}[0, 0] [2, 1] [1, 1] : tensor<2x1xi64> to tensor<2xi64>
// LINALG: %[[FOLDED:.*]] = linalg.generic {indexing_maps = [#[[UPDATE]], #[[COLUMN]], #[[OUT]]], iterator_types = ["parallel", "parallel", "reduction"]} ins(%{{.*}}, %[[ROWS]] : tensor<2x1x8xf32>, tensor<2xi64>)
// LINALG: %[[P:.*]] = linalg.index 0 : index
// LINALG: %[[P64:.*]] = arith.index_cast %[[P]] : index to i64
// LINALG: %[[HIT:.*]] = arith.cmpi eq, %[[ROW:.*]], %[[P64]] : i64
// LINALG: %[[WRAPPED:.*]] = arith.addi %[[ROW]], %c3_i64 : i64
// LINALG: %[[FROM_END:.*]] = arith.cmpi eq, %[[WRAPPED]], %[[P64]] : i64
// LINALG: %[[NAMED:.*]] = arith.ori %[[HIT]], %[[FROM_END]] : i1
// LINALG: arith.select %[[NAMED]]
// LINALG: %[[SUM:.*]] = linalg.generic {{.*}} ins(%arg0, %[[FOLDED]] : tensor<3x8xf32>, tensor<3x8xf32>)
// LINALG: arith.addf
// LINALG: return %[[SUM]]
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
// naming a position wins, is picked, and replaces the original where there is one. By default
// the rows are row-major over both indexed dimensions (8 x the first plus the second), each
// update's number is scattered with maxsi (its identity, the lowest i64, where none wins), and
// `ipu.gather` picks the winners' updates (zeros where none won); under linalg-only, a max
// over the update loop (-1 for none).

// CHECK-LABEL: func.func @overwrite
// CHECK: %[[AT:.*]] = linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<12xi64>, tensor<12xi64>)
// CHECK: arith.muli %{{.*}}, %c8_i64{{.*}} : i64
// CHECK: %[[TABLE:.*]] = tensor.expand_shape %arg2 {{\[}}[0, 1]] output_shape [12, 1] : tensor<12xf32> into tensor<12x1xf32>
// CHECK: %[[NUMBERS:.*]] = tensor.expand_shape
// CHECK: %[[WON:.*]] = "ipu.scatter"(%[[NUMBERS]], %[[AT]], %{{.*}}) {combiner = "arith.maxsi"} : (tensor<12x1xi64>, tensor<12xi64>, tensor<24xi64>) -> tensor<24x1xi64>
// CHECK: %[[WINNERS:.*]] = tensor.collapse_shape %[[WON]]
// CHECK: %[[PICKED:.*]] = "ipu.gather"(%[[TABLE]], %[[WINNERS]], %{{.*}}) : (tensor<12x1xf32>, tensor<24xi64>, tensor<12xi64>) -> tensor<24x1xf32>
// CHECK: %[[KEPT:.*]] = linalg.generic {{.*}} ins(%[[WINNERS]], %[[PICKED]], %{{.*}} : tensor<24xi64>, tensor<24x1xf32>, tensor<24x1xf32>)
// CHECK: arith.cmpi sge
// CHECK: %[[FLAT:.*]] = tensor.collapse_shape %[[KEPT]]
// CHECK: %[[OUT:.*]] = tensor.expand_shape %[[FLAT]] {{\[}}[0, 1]] output_shape [3, 8] : tensor<24xf32> into tensor<3x8xf32>
// CHECK: return %[[OUT]]

// LINALG-LABEL: func.func @overwrite
// LINALG: %[[C0:.*]] = tensor.extract_slice %arg1[0, 0] [12, 1] [1, 1] : tensor<12x2xi64> to tensor<12xi64>
// LINALG: %[[C1:.*]] = tensor.extract_slice %arg1[0, 1] [12, 1] [1, 1] : tensor<12x2xi64> to tensor<12xi64>
// LINALG: %[[WINNERS:.*]] = linalg.generic {{.*}} ins(%[[C0]], %[[C1]] : tensor<12xi64>, tensor<12xi64>)
// LINALG: arith.andi
// LINALG: arith.maxsi
// LINALG: %[[PICKED:.*]] = linalg.generic {{.*}} ins(%arg2, %[[WINNERS]] : tensor<12xf32>, tensor<3x8xi64>)
// LINALG: %[[OUT:.*]] = linalg.generic {{.*}} ins(%[[WINNERS]], %[[PICKED]], %arg0 : tensor<3x8xi64>, tensor<3x8xf32>, tensor<3x8xf32>)
// LINALG: arith.cmpi sge
// LINALG: return %[[OUT]]
func.func @overwrite(%arg0: tensor<3x8xf32>, %arg1: tensor<12x2xi64>, %arg2: tensor<12xf32>) -> tensor<3x8xf32> {
  %2 = "tm_tensor.scatter"(%arg2, %arg1, %arg0) <{dimension_map = array<i64: 0, 1>, operandSegmentSizes = array<i32: 2, 1>, unique_indices = false}> ({
  ^bb0(%u: f32, %o: f32):
    "tm_tensor.yield"(%u) : (f32) -> ()
  }) : (tensor<12xf32>, tensor<12x2xi64>, tensor<3x8xf32>) -> tensor<3x8xf32>
  return %2 : tensor<3x8xf32>
}
